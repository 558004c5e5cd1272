"""The one Jinja environment: strict about undefined names, escaping everything."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

import jinja2
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup, escape

import sitegen
from sitegen.records.providers import label, terms
from sitegen.review.models import utc_day, utc_minute
from sitegen.text import counted, xml_safe


def templates_dir() -> Path:
    # Installed wheels carry the templates inside the package; a source checkout
    # (including an editable install) keeps them at the top of the repository.
    packaged = Path(sitegen.__file__).parent / "templates"
    return packaged if packaged.is_dir() else Path(sitegen.__file__).parent.parent / "templates"


# Raw HTML in Markdown is shown as text; markdown-it also refuses javascript: links.
# Images are off too: a remote image would load a third party's file (a tracking pixel) in every
# reader's browser, and the site must work without a network.
_markdown = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")
_WEB_OR_MAIL = re.compile(r"(?:https?://[^/\\]|mailto:)", re.IGNORECASE)
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_DROPPED = re.compile("[\t\n\r]")  # what the URL standard removes from an address before reading it


def _site_link(url: str) -> bool:
    """Whether the protocol's Markdown may link `url` (normalised, as markdown-it gives it): a web or mail
    address, or a page of the site by a relative path that stays inside it. No other scheme (search-ms:,
    ms-officecmd:, ftp:, blob:, tel:), no protocol-relative //host, no path from the host's root (a site is
    often served under a folder) or climbing out with '..'. A link refused is shown as the text written."""
    if _WEB_OR_MAIL.match(url):
        return True
    # Decoded, without the tabs and line breaks a browser drops from an address: markdown-it percent-encodes the
    # tab of "java&#x09;script:", which then named no scheme (a link to nowhere, were it ever decoded a script's).
    path = _DROPPED.sub("", unquote(url))
    path = path.split("#", 1)[0].split("?", 1)[0].replace("\\", "/")
    return not _SCHEME.match(url) and not _SCHEME.match(path) and not path.startswith("/") \
        and ".." not in path.split("/")


_markdown.validateLink = _site_link


def _demote_headings(state) -> None:
    """The page around the Markdown owns the one <h1> (its title): a protocol opening with '# Protocol'
    would give the page a second, so the Markdown's outline is set below it, its top headings <h2>. Each
    heading sits one level below the nearest heading before it written at a higher level (h6 at most): none
    skips a level (a '####' under a '#' is an <h3>, a first '###' an <h2>), and headings written at one level
    stay siblings ('## Search' after '## Eligibility' is not shown as its subsection)."""
    above: list[tuple[int, int]] = []  # (level written, level shown) of the headings the next one may sit under
    for token in state.tokens:
        if token.type == "heading_open":
            written = int(token.tag[1:])
            while above and above[-1][0] >= written:
                above.pop()
            above.append((written, min(above[-1][1] + 1 if above else 2, 6)))
            token.tag = f"h{above[-1][1]}"
        elif token.type == "heading_close":  # a heading holds no other: it closes the one just opened
            token.tag = f"h{above[-1][1]}"


_markdown.core.ruler.push("demote_headings", _demote_headings)


def _heading_text(inline: Token) -> str:
    """The words of a heading as written: its text and code, inside emphasis or a link too."""
    return "".join(child.content for child in inline.children or [] if child.type in ("text", "code_inline"))


def _github_slug(text: str) -> str:
    """The anchor GitHub gives a heading (github-slugger): lower-case, punctuation and symbols dropped (letters of
    any script, digits, marks, '-' and '_' kept), each space a hyphen. An author links a section by it."""
    kept = (char for char in text.lower() if char.isalnum() or char in "-_ " or unicodedata.category(char)[0] == "M")
    return "".join(kept).replace(" ", "-")


# The page around the Markdown has ids of its own ("main", "eligibility-heading", "search-…"): a heading's id
# starts with this, which none of the templates' ids does, so a protocol's "## Main" never takes the page's.
HEADING_ID_PREFIX = "md-"


def _name_headings(state) -> None:
    """Each heading gets an id from its words, as GitHub gives one, so the protocol's own link to a section
    ("[see eligibility](#eligibility)", written as on GitHub) leads somewhere: the GitHub slug, repeats numbered
    -1, -2 as GitHub numbers them, then prefixed and folded to [a-z0-9-] (ids from any text are safe in any
    attribute, selector and URL). A link to '#slug' of a heading is pointed at its id; any other is left as written."""
    seen: dict[str, int] = {}
    ids: dict[str, str] = {}  # a GitHub slug: the id of its heading
    taken: set[str] = set()
    numbered: dict[str, int] = {}  # a base id: the number its last heading was given (0: none)
    for index, token in enumerate(state.tokens):
        if token.type != "heading_open":
            continue
        original = slug = _github_slug(_heading_text(state.tokens[index + 1]))
        while slug in seen:
            seen[original] += 1
            slug = f"{original}-{seen[original]}"
        seen[slug] = 0
        folded = unicodedata.normalize("NFKD", slug).encode("ascii", "ignore").decode().lower()
        base = HEADING_ID_PREFIX + (re.sub(r"[^a-z0-9-]", "", folded) or "section")
        # Two slugs of other scripts may fold alike ("é", "e"; every heading in Chinese to "section"): numbered on
        # from the last number that base was given, since trying each from 1 again was quadratic (16,000 headings
        # of a protocol in Chinese, well within its 2 MB, took 30 s to build; 300,000 for hours).
        n = numbered.get(base, 0)
        made = f"{base}-{n}" if n else base
        while made in taken:
            n += 1
            made = f"{base}-{n}"
        numbered[base] = n
        taken.add(made)
        ids[slug] = made
        token.attrSet("id", made)
    for token in state.tokens:
        for child in token.children or []:  # a link is an inline token's child
            href = child.attrGet("href") if child.type == "link_open" else None
            if isinstance(href, str) and href.startswith("#") and unquote(href[1:]) in ids:
                child.attrSet("href", "#" + ids[unquote(href[1:])])


_markdown.core.ruler.push("name_headings", _name_headings)


def _name_tables(state) -> None:
    """Each table of the Markdown is named for a screen reader (Markdown has no caption) by the heading it sits
    under, numbered when that heading has several ("Search, table 2"), and its header cells head their columns."""
    heading, tables = "Table of the protocol", 0
    for index, token in enumerate(state.tokens):
        if token.type == "heading_open":
            heading, tables = _heading_text(state.tokens[index + 1]).strip() or "Table of the protocol", 0
        elif token.type == "table_open":
            tables += 1
            token.attrSet("aria-label", heading if tables == 1 else f"{heading}, table {tables}")
        elif token.type == "th_open":
            token.attrSet("scope", "col")  # Markdown's header cells are its one header row


_markdown.core.ruler.push("name_tables", _name_tables)


def _table_in_its_own_box(renderer, tokens, index, options, env) -> str:
    """A table of the protocol's Markdown scrolls sideways in its own box, as the site's other wide tables do:
    its cells keep words whole (a column never shrinks to a letter), so one long word or URL in a cell
    would otherwise make the whole page scroll sideways on a phone."""
    tag = renderer.renderToken(tokens, index, options, env)
    return f'<div class="table-wrap">\n{tag}' if tokens[index].nesting == 1 else f"{tag}</div>\n"


_markdown.add_render_rule("table_open", _table_in_its_own_box)
_markdown.add_render_rule("table_close", _table_in_its_own_box)


def render_markdown(text: str) -> Markup:
    return Markup(_markdown.render(text))


# A review's title and question (review.yaml) are inline Markdown ("*Mus musculus*"): emphasis, strong and code, with
# raw HTML shown as text as in the protocol. A link is shown as its words and an image as its description, never
# followed nor loaded, whatever their address: the title is itself the link to the home page in every page's header
# (a link inside a link is no HTML), and a question is a sentence.
_inline = MarkdownIt("commonmark", {"html": False})
_inline.validateLink = lambda url: True  # no address is ever written into the page


def _no_tag(renderer, tokens, index, options, env) -> str:
    return ""


def _description(renderer, tokens, index, options, env) -> str:
    return str(escape(renderer.renderInlineAsText(tokens[index].children or [], options, env)))


_inline.add_render_rule("link_open", _no_tag)
_inline.add_render_rule("link_close", _no_tag)
_inline.add_render_rule("image", _description)


# Of the text alone, and asked of the same text by every page (the review's title in each page's header and <title>,
# 1,240 list pages at 100,000 records): parsed once a process. Bounded, for the feed's and the versions' many titles.
@functools.lru_cache(maxsize=256)
def inline_markdown(text: str) -> Markup:
    """A line of inline Markdown as HTML (escaped, no raw HTML, no link), on one line: a title or a question."""
    return Markup(" ".join(_inline.renderInline(text).split()))


@functools.lru_cache(maxsize=256)  # as `inline_markdown`
def markdown_plain(text: str) -> str:
    """A line of inline Markdown as the plain text it reads as ("*Mus musculus*": "Mus musculus"), where no HTML
    can go: a page's <title>, an attribute, the feed. Whitespace and line breaks are one space each."""
    return " ".join(_words(child for token in _inline.parseInline(text) for child in token.children or []).split())


def _words(tokens: Iterable[Token]) -> str:
    """The text inline tokens read as: their text and code, an image's description, a space for a line break."""
    return "".join(token.content if token.type in ("text", "code_inline") else " " if token.type.endswith("break")
                   else _words(token.children or []) if token.type == "image" else "" for token in tokens)


def studies_phrase(reports: int, studies: int) -> str:
    """How many studies are included, and in how many reports when a study has several (a preprint and its
    journal article): the list pages show a row per report, PRISMA counts studies."""
    named = f"{studies} stud{'y' if studies == 1 else 'ies'}"
    return named if reports == studies else f"{reports} reports of {named}"


@functools.cache
def environment() -> jinja2.Environment:
    """The template environment of every page, chart and diagram a process renders: one, so that each template is
    compiled once (its loader still looks at the file when a template is asked for, and compiles it again if it
    changed). Nothing changes it once it is made."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["markdown"] = render_markdown
    env.filters["inline_markdown"] = inline_markdown  # a review's title and question in a page
    env.filters["plain"] = markdown_plain  # ... in a <title> or an attribute
    env.globals["sitegen_version"] = sitegen.__version__
    env.globals["provider_label"] = label
    env.globals["provider_terms"] = terms
    env.globals["studies_phrase"] = studies_phrase
    env.globals["counted"] = counted
    env.filters["day"] = utc_day
    env.filters["minute"] = utc_minute
    env.filters["xml_safe"] = xml_safe  # text an earlier sitegen kept unchecked (a ledger's amendment reasons)
    return env
