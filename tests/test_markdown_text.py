"""Text from records and files in the Markdown sitegen writes (run reports, pull-request bodies, digests):
shown exactly as written, whatever it holds, and never a mention, link or markup."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import html as lxml_html
from markdown_it import MarkdownIt

from sitegen.text import markdown_safe

COMMONMARK = MarkdownIt("commonmark", {"html": True})  # as GitHub reads a report: raw HTML allowed


def shown(markdown: str) -> tuple[str, list]:
    """What a reader sees of one line of Markdown, and the elements it made other than its paragraph."""
    page = lxml_html.fragment_fromstring(COMMONMARK.render(markdown) or "<p></p>", create_parent="div")
    return page.text_content().strip(), [element.tag for element in page.iter() if element.tag not in ("div", "p")]


def test_an_at_sign_and_markup_are_shown_as_written():
    for text in ("Contact @octocat", "C# & F# <b>bold</b> &#64; &amp;", "**not bold** [a](https://x) `code`",
                 "# not a heading", "1. not a list", "| not | a table |", "\\escaped\\", "x_y_z ~~no~~"):
        assert shown(markdown_safe(text)) == (text, []), text
    assert "@" not in markdown_safe("Contact @octocat")  # an entity GitHub shows, never a mention


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), max_size=60))
def test_any_text_is_shown_exactly(text):
    expected = " ".join(text.split())
    assert shown(markdown_safe(text)) == (expected, [])


def test_a_dollar_sign_is_shown_as_written_never_as_math():
    """GitHub sets the text between two dollar signs as math, a backslash before one notwithstanding: an Ovid query's
    truncations ("rat$ or mouse$") or a title's prices would lose their words to a formula."""
    for text in ("rat$ or mouse$", "costs US$ 5 to US$ 10", "$$x$$", "$\\alpha$-synuclein"):
        written = markdown_safe(text)
        assert "$" not in written, written
        assert shown(written) == (text, []), text
