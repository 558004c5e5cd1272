"""A record's own page, its row in the records lists and in its batch's ranking, and the weekly
digest pages (which list every record of a week), written in Python rather than a template: a
review has one page per record (100,000 of them at review scale) and about four rows, and a template
costs about a millisecond a page where this costs a few hundredths. The page's frame (head, navigation, footer) is still base.html, rendered once
per build (`Site.frame`); only the part between is written here. Every value is escaped (`_e`).

It tells the record's whole story: identifiers, every source and run that returned it (from the
ledger), its batch and relevance score, each reviewer's decision at each stage and the outcome,
its study page once it is included; or, for a confirmed duplicate, the record it duplicates,
which lists its duplicates in turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple

from markupsafe import escape

from sitegen.living.duplicates import Duplicate
from sitegen.living.sightings import Sighting
from sitegen.records.ids import NAMESPACE_LABELS
from sitegen.records.model import Record, StatedVersion
from sitegen.records.providers import label as provider_label
from sitegen.review.models import utc_day
from sitegen.screening.digest import EMPTY_SECTION, Digest, calibration_summary, digest_sections, digest_summary
from sitegen.screening.outcomes import Outcome
from sitegen.screening.relevance import Scored
from sitegen.screening.standing import StageHistory
from sitegen.site.studies import Link, doi_url, pubmed_url, standing_tag_html, study_links

if TYPE_CHECKING:  # pages.py and records.py import this module
    from sitegen.site.pages import RecordView
    from sitegen.site.records import Entry

# A record's title or abstract may be written wholly in Hebrew, Arabic or Persian: it is set in its own direction,
# as its first letter gives it, and kept apart from the text around it, so its closing punctuation stays at its end
# and the page's text does not run into it. Templates set the same attribute on titles they show.
TITLE_DIRECTION = ' dir="auto"'
STAGE_NAMES = {"title-abstract": "title and abstract screening", "full-text": "full-text assessment"}


def batch_page(number: int | None) -> str:
    """A batch's ranking page, from the site's root; the records imported outside a batch (None) have one too."""
    return f"batches/{'imported' if number is None else number}.html"


try:  # markupsafe 3: the step of `escape` that escapes a str and gives a str (in C, with its speedups)
    from markupsafe import _escape_inner as _escaped_text
except ImportError:  # markupsafe 2, which escapes by the same five replacements
    def _escaped_text(text: str) -> str:
        return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")
                .replace("'", "&#39;"))


def _e(value: object) -> str:
    """`value` escaped for HTML, as markupsafe's escape does it (the same bytes), without making a Markup of every
    value: plain text, most of what a page holds, as escape's own str to str step; an int or a float (a year, a
    relevance axis) as its digits, which hold nothing to escape."""
    kind = type(value)
    if kind is str:
        return _escaped_text(value)
    if kind is int or kind is float:
        return str(value)
    return str(escape(value))


# Values that many pages show alike (a run's time on each of its records' pages, a source's name, a batch's
# paragraph) are written once per process: each is made from the values it is passed alone, so equal values
# make equal text, and a changed value is another entry. Bounded, for a review with many distinct ones.
@lru_cache(maxsize=4096)
def _time(timestamp: str) -> str:
    """A timestamp as a page shows it: its UTC day, the exact time in the `<time>` element's datetime."""
    return f'<time datetime="{_e(timestamp)}">{_e(utc_day(timestamp))}</time>'


@lru_cache(maxsize=256)
def _source(source: str) -> str:
    """A source's display name, escaped."""
    return _e(provider_label(source))


def isolated(text: str) -> str:
    """Names or a journal as the record gives them, kept apart from the text around them (a year, a volume) in their
    own direction: names in Hebrew or Arabic before '(2020)' would otherwise draw the year before them."""
    return f"<bdi>{_e(text)}</bdi>" if text else ""


def citation(record: Record) -> str:
    """Journal, year; volume(issue): pages, as far as the record has them."""
    text = isolated(record.container_title) if record.container_title else ""
    if year := record.year:
        text += (", " if record.container_title else "") + _e(year)
    if record.volume:
        text += f"; {_e(record.volume)}" + (f"({_e(record.issue)})" if record.issue else "")
    if record.page:
        text += f": {_e(record.page)}"
    return text


def outcome(decided: Outcome | None, reasons: dict[str, str]) -> str:
    if decided is None:
        return '<span class="outcome outcome-pending">not screened</span>'
    reason = (f': <span class="outcome-reason">{_e(reasons.get(decided.reason, decided.reason))}</span>'
              if decided.reason else "")
    settled = " (adjudicated)" if decided.adjudicated else ""
    return f'<span class="outcome outcome-{_e(decided.decision)}">{_e(decided.decision)}{reason}{settled}</span>'


def screening_history(history: list[StageHistory], reasons: dict[str, str]) -> str:
    """Each reviewer's decision at each stage, the adjudication and the outcome (blind while it must be)."""
    if not history:
        return '<p class="blank">No reviewer has screened this record yet.</p>'
    parts = []
    for stage in history:
        rows = []
        for shown in stage.decisions + ([stage.adjudication] if stage.adjudication else []):
            who = "Adjudication" if shown is stage.adjudication else _e(shown.reviewer)
            decision = (f'<span class="outcome outcome-{_e(shown.decision)}">{_e(shown.decision)}</span>'
                        if shown.decision else '<span class="blank">decided, not shown while screening is blind</span>')
            reason = _e(reasons.get(shown.reason, shown.reason)) if shown.reason else ""
            rows.append(f'<tr><th scope="row" data-label="Reviewer">{who}</th>\n'
                        f'<td data-label="Decision">{decision}</td>\n'
                        f'<td data-label="Reason">{reason}</td>\n'
                        f'<td data-label="Note" class="reviewer-note">{_e(shown.note)}</td></tr>')
        after = {"awaiting": ": each decision is shown once every required reviewer has decided.",
                 "conflict": ("; the reviewers excluded it for different reasons" if stage.outcome.reasons_differ else "")
                 + ": reasons and notes are shown once the adjudicator has settled it."}
        title_abstract = stage.stage == "title-abstract"
        parts.append(
            f'<h3>{"Title and abstract" if title_abstract else "Full text"}</h3>\n'
            '<table class="decisions stack-on-phone">\n<caption class="visually-hidden">Decisions at '
            f'{"title and abstract screening" if title_abstract else "full-text assessment"}</caption>\n'
            '<thead><tr><th scope="col">Reviewer</th><th scope="col">Decision</th><th scope="col">Reason</th>'
            '<th scope="col">Note</th></tr></thead>\n<tbody>\n' + "\n".join(rows) + "\n</tbody>\n</table>\n"
            f"<p>Outcome: {outcome(stage.outcome, reasons)}{after.get(stage.outcome.decision, '.')}</p>")
    return "\n".join(parts)


def _record_link(view: RecordView, with_id: bool = False) -> str:
    title = f"<code>{_e(view.record.id)}</code>" if with_id else _e(view.record.title)
    return f'<a href="../records/{_e(view.slug)}.html"{"" if with_id else TITLE_DIRECTION}>{title}</a>'


def record_content(entry: Entry, histories: list[StageHistory], duplicate: Duplicate | None,
                   canonical: RecordView | None, duplicates: list[RecordView], other_versions: list[RecordView],
                   unheld_versions: list[StatedVersion], reasons: dict[str, str]) -> str:
    """The part of `records/<slug>.html` between the site's header and footer."""
    record, standing = entry.view.record, entry.standing
    out = ['<p class="breadcrumb"><a href="../records.html">Records</a></p>', f"<h1{TITLE_DIRECTION}>{_e(record.title)}</h1>"]
    # What the sources say of its standing, as a study's page says it: retracted, reinstated, or both (never silently
    # either; the retraction's sentence comes first, an alert while it stands), corrected, a notice itself.
    for n, sentence in enumerate(entry.notices):
        role = ' role="alert"' if n == 0 and record.custom.retracted else ""
        out.append(f'<p class="retracted-notice"{role}><strong>{_e(sentence)}</strong></p>')
    out.append(f'<p class="citation">{citation(record)}</p>')
    if record.author:
        out.append(f'<p class="authors">{"; ".join(_e(name.display()) for name in record.author)}</p>')
    said = _standing_sentence(standing.kind, standing.stage, standing.reason, reasons)
    if standing.kind == "duplicate" and canonical is not None and duplicate is not None:
        said = (f"Duplicate of {_record_link(canonical)} (confirmed by {_e(duplicate.reviewer)}); removed before "
                "screening, so its own screening decisions no longer count.")
    study = (f' <a href="../studies/{_e(entry.view.slug)}.html">Study page: its evidence, verification and how to '
             "cite it</a>" if standing.kind == "included" else "")
    out.append(f'<p class="standing standing-{_e(standing.kind)}"><strong>{said}</strong>{study}</p>')
    if duplicates:
        out.append('<p class="duplicates">Confirmed duplicates of this record, removed before screening: '
                   + ", ".join(_record_link(other, with_id=True) for other in duplicates) + ".</p>")
    if other_versions:
        out.append('<p class="versions">The same study in another version (a preprint and its journal version are '
                   "linked, not merged): " + "; ".join(f"{_record_link(other)} (<code>{_e(other.record.id)}</code>)"
                                                      for other in other_versions) + ".</p>")
    if unheld_versions:  # a preprint or journal version its sources name, which no search or import brought in
        names = "Sources name other versions" if len(unheld_versions) > 1 else "A source names another version"
        out.append(f'<p class="versions">{names} of this study not in this review: '
                   + "; ".join(map(_version_links, unheld_versions)) + ".</p>")
    out.append(_identifiers(record, study_links(record)))  # from the record alone: not in the page's key
    out.append(_identification(entry))
    out.append(_batch_and_relevance(entry))
    out.append("<h2>Screening history</h2>")
    out.append(screening_history(histories, reasons))
    out.append("<h2>Abstract</h2>")
    out.append(f'<p class="abstract"{TITLE_DIRECTION}>{_e(record.abstract)}</p>' if record.abstract
               else '<p class="blank">No abstract available.</p>')
    return "\n".join(out)


def _standing_sentence(kind: str, stage: str, reason: str, reasons: dict[str, str]) -> str:
    """Where the record stands, as its page's sentence says it (escaped); the reason's label only when it is shown."""
    if kind == "included":
        return "Included after full-text assessment."
    if kind == "excluded-full-text":
        return f"Excluded at full-text assessment: {_e(reasons.get(reason, reason))}."
    if kind == "excluded-title-abstract":
        return "Excluded at title and abstract screening."
    if kind == "not-retrieved":
        return "Its full text could not be retrieved, so it was not assessed for eligibility."
    if kind == "conflict":
        return f"Reviewers disagree at {STAGE_NAMES.get(stage, '')}; awaiting adjudication."
    return f"Awaiting {STAGE_NAMES.get(stage, '')}."


def _version_links(version: StatedVersion) -> str:
    """A version by its DOI and PMID, each linked to where a reader finds it."""
    links = [*([f'<a href="{_e(doi_url(version.doi))}" rel="noopener">doi:{_e(version.doi)}</a>'] if version.doi else []),
             *([f'<a href="{_e(pubmed_url(version.pmid))}" rel="noopener">PMID {_e(version.pmid)}</a>']
               if version.pmid else [])]
    return " ".join(links)


def _identifiers(record: Record, links: list[Link]) -> str:
    rows = [f"<dt>Record id</dt><dd><code>{_e(record.id)}</code></dd>"]
    rows += [f'<dt>{_e(link.label)}</dt><dd><a href="{_e(link.url)}" rel="noopener">{_e(link.value)}</a></dd>'
             for link in links]
    if record.custom.open_access is not None:
        licence = f" ({_e(record.custom.license)})" if record.custom.license else ""
        rows.append(f"<dt>Open access</dt><dd>{'yes' if record.custom.open_access else 'no'}{licence}</dd>")
    return '<h2>Identifiers</h2>\n<dl class="identifiers">\n' + "\n".join(rows) + "\n</dl>"


def _identification(entry: Entry) -> str:
    sightings = entry.sightings
    if not sightings:
        return '<h2>Identification</h2>\n<p class="blank">The ledger names no run or import that returned this record.</p>'
    times = "time" if len(sightings) == 1 else "times"
    return (f"<h2>Identification</h2>\n<p>Returned {len(sightings)} {times}, as the provenance ledger records each "
            'run.</p>\n<table class="sightings stack-on-phone">\n'
            '<caption class="visually-hidden">Runs and imports that returned this record</caption>\n<thead><tr><th scope="col">Run</th>'
            '<th scope="col">Search</th><th scope="col">Source</th><th scope="col">New?</th></tr></thead>\n<tbody>\n'
            + "\n".join(map(_sighting_row, sightings)) + "\n</tbody>\n</table>")


@lru_cache(maxsize=4096)  # a run's sightings are two values, on each of its records' pages: see `_time`
def _sighting_row(sighting: Sighting) -> str:
    """A sighting's row in a record's identification table."""
    if sighting.monitor_id:
        search = f"saved search <code>{_e(sighting.monitor_id)}</code>" + (
            f" ({_e(sighting.label)})" if sighting.label else "")
    else:
        search = f"import: {_e(sighting.imported)}"
    return (f'<tr><td data-label="Run">{_time(sighting.at)}</td>'
            f'<td data-label="Search">{search}</td>'
            f'<td data-label="Source">{_source(sighting.source)}</td>'
            f'<td data-label="New?">{"first identified" if sighting.first else "seen before"}</td></tr>')


def _batch_and_relevance(entry: Entry) -> str:
    batch, scored = entry.batch, entry.relevance
    out = ["<h2>Screening batch and relevance</h2>",
           _batch_paragraph(batch.number, batch.monitor_id, batch.created, batch.protocol_version)]
    if scored:
        axes = scored.axes
        out.append(f'<dl class="relevance">\n<dt>Relevance score</dt><dd>{scored.score} of 100: '
                   f'<span class="suggestion suggestion-{_e(scored.decision.lower())}">{_e(scored.decision)}</span> '
                   f"(match {_e(axes.match)}, criteria fit {_e(axes.criteria)}, novelty {_e(axes.novelty)})</dd>\n"
                   f'<dt>Rationale</dt><dd class="rationale">{_e(scored.rationale)}</dd>\n</dl>\n'
                   '<p class="note">The score ranks the batch against the protocol so reviewers see the likeliest '
                   "includes first; it decides nothing.</p>")
    else:  # every record is ranked with its batch but a confirmed duplicate, which is not screened
        out.append('<p class="blank">Not scored: a confirmed duplicate of another record is not screened, so not '
                   "ranked.</p>")
    return "\n".join(out)


@lru_cache(maxsize=1024)  # shown alike on every page of the batch's records: see `_time`
def _batch_paragraph(number: int | None, monitor_id: str | None, created: str | None,
                     protocol_version: int | None) -> str:
    """The batch a record's page names: its number, saved search, day and protocol version (from those alone)."""
    if number:
        return (f'<p>In <a href="../batches/{number}.html">screening batch {number}</a>: reported as new '
                f"by the saved search <code>{_e(monitor_id)}</code> on "
                + (_time(created) if created else f'<time datetime="{_e(created)}"></time>') + ", screened under "
                f"protocol version {_e(protocol_version)}. "
                f'<a href="../records/list/batch-{number}/1.html">Every record of this batch</a>.</p>')
    return (f'<p>Imported outside a screening batch: ranked with <a href="../{batch_page(None)}">the records '
            "imported outside a batch</a>.</p>")


# The labels of the identifiers and the tags a row shows, escaped once: a few values for 100,000 rows.
_IDENTIFIER_LABELS = {namespace: _e(label) for namespace, label in NAMESPACE_LABELS.items()}
_NOT_REACHED = '<span class="outcome outcome-pending">not reached</span>'
_NOT_SCORED = '<span class="blank">not scored</span>'


@lru_cache(maxsize=64)
def _suggestion(decision: str) -> str:
    return f'<span class="suggestion suggestion-{_e(decision.lower())}">{_e(decision)}</span>'


class RecordRows:
    """The rows of the records lists, each written once for every list page holding it (a record is on three or four
    lists' pages) and kept as the UTF-8 the page is written in: a page of 250 rows is joined as bytes, not as text
    that one title in Greek or a symbol beyond the first plane makes two or four bytes a character, then encoded.

    What many rows show alike (an outcome, a record's sources, a batch's link) is written once, by the very object the
    rows share (outcomes and sightings are shared, `outcomes._outcome`, `records.shared_sightings`), held beside its
    text so that no other object is ever taken for it."""

    def __init__(self, reasons: dict[str, str]):
        self.reasons = reasons
        # root -> id of an entry -> its row, as UTF-8. By the entry's identity, which the lists share (a record's
        # entry is one object on each list holding it), not its record's id, three objects away in memory from it;
        # the entries are held alongside, so that no other object takes the id of one while its row is here.
        self._encoded: dict[str, dict[int, bytes]] = {}
        self._entries: list[Entry] = []
        self._shared: dict[int, tuple[object, str]] = {}  # id of an outcome or of sightings -> it, and its text
        self._batches: dict[tuple[int | None, str], str] = {}

    def encoded(self, entries: list[Entry], root: str) -> list[bytes]:
        """The rows of `entries` for a list page at `root`, as UTF-8, each written the first time a page asks."""
        rows = self._encoded.setdefault(root, {})
        found = []
        for entry in entries:
            row = rows.get(id(entry))
            if row is None:
                row = rows[id(entry)] = self.row(entry, root).encode("utf-8")
                self._entries.append(entry)
            found.append(row)
        return found

    def _outcome(self, decided: Outcome | None) -> str:
        held = self._shared.get(id(decided))
        if held is None or held[0] is not decided:
            held = self._shared[id(decided)] = (decided, outcome(decided, self.reasons))
        return held[1]

    def _sources(self, entry: Entry) -> str:
        sightings = entry.sightings
        held = self._shared.get(id(sightings))
        if held is None or held[0] is not sightings:
            held = self._shared[id(sightings)] = (sightings, ", ".join(map(_source, entry.sources)))
        return held[1]

    def _batch(self, number: int | None, root: str) -> str:
        link = self._batches.get((number, root))
        if link is None:
            link = self._batches[number, root] = f'<a href="{root}{batch_page(number)}">{number or "imported"}</a>'
        return link

    def row(self, entry: Entry, root: str) -> str:
        """The record's row in the records lists (`root`: the way back to the site's root from the list page)."""
        view = entry.view
        record = view.record
        year, container = record.year, record.container_title
        byline = isolated(view.authors_short)
        if year:
            byline += f" ({_e(year)})"
        if container:
            byline += f" {isolated(container)}"
        labels = _IDENTIFIER_LABELS
        identifiers = "<br>".join([f"{labels[namespace]}&nbsp;{_e(value)}"
                                   for namespace, value in record.identifiers().items()])
        full_text = self._outcome(view.full_text) if entry.standing.stage == "full-text" else _NOT_REACHED
        scored = entry.relevance
        score = f"{scored.score} {_suggestion(scored.decision)}" if scored else _NOT_SCORED
        return (f'<tr>\n<td data-label="Record"><a href="{root}records/{_e(view.slug)}.html"{TITLE_DIRECTION}>'
                f'{_e(record.title)}</a>{standing_tag_html(record, entry.notices)}<br><span class="byline">'
                f'{byline}</span></td>\n<td data-label="Identifiers">{identifiers}</td>\n'
                f'<td data-label="Sources">{self._sources(entry)}</td>\n'
                f'<td data-label="Batch">{self._batch(entry.batch.number, root)}</td>\n'
                f'<td data-label="Title and abstract">{self._outcome(view.title_abstract)}</td>\n'
                f'<td data-label="Full text">{full_text}</td>\n<td data-label="Score">{score}</td>\n</tr>')


class RankedRecords(NamedTuple):
    """What a batch page's rows show of its records besides their ranks and scores, in rank order, and all its key
    counts of them: a full-text decision (which the rows do not show) leaves the page of a batch of 20,000 records as
    it was. Held as one list a column, each gathered in C: a batch's 60,000 rows a tuple each took a quarter of a
    second to make and as long to write into the page's key."""

    slugs: list[str]
    titles: list[str]
    title_abstract: list[Outcome | None]

    @classmethod
    def of(cls, views: Mapping[str, RecordView], ranked: list[Scored]) -> RankedRecords:
        """Of the records `ranked`, by their views (record id -> its view)."""
        in_order = list(map(views.__getitem__, map(_ID, ranked)))
        return cls(list(map(_SLUG, in_order)), list(map(_TITLE, in_order)), list(map(_TITLE_ABSTRACT, in_order)))


_ID, _SLUG, _TITLE = attrgetter("id"), attrgetter("slug"), attrgetter("record.title")
_TITLE_ABSTRACT = attrgetter("title_abstract")


def ranked_row(rank: int, scored: Scored, slug: str, title: str, title_abstract: Outcome | None,
               reasons: dict[str, str]) -> str:
    """A record's row in its batch's ranking (`batch_page`)."""
    suggestion = _e(scored.decision)
    return (f'<tr><td data-label="Rank">{rank}</td><td data-label="Score">{scored.score}</td>'
            f'<td data-label="Suggestion" class="suggestion suggestion-{_e(scored.decision.lower())}">{suggestion}</td>\n'
            f'<td data-label="Record"><a href="../records/{_e(slug)}.html"{TITLE_DIRECTION}>{_e(title)}</a><br>'
            f'<small class="rationale">{_e(scored.rationale)}</small></td>\n'
            f'<td data-label="Reviewers\' decision">{outcome(title_abstract, reasons)}</td></tr>')


def digest_content(digest: Digest, titles: dict[str, str]) -> str:
    """A week's digest as its page shows it: what its Markdown download says, as HTML (a digest of a
    60,000-record batch is 25 MB of Markdown, too much to render through a Markdown parser)."""
    out = [f'<p class="breadcrumb"><a href="../screening.html">Screening</a> · '
           f'<a href="../downloads/digest-{_e(digest.week)}.md" download>Markdown</a></p>',
           '<article class="digest">', f"<h1>Weekly digest {_e(digest.week)}</h1>", f"<p>{_e(digest_summary(digest))}</p>"]
    for heading, items in digest_sections(digest):
        out.append(f"<h2>{heading} ({len(items)})</h2>")
        if not items:
            out.append(f'<p class="blank">{EMPTY_SECTION}</p>')
            continue
        out.append("<ul>")
        out += [f"<li><strong>{d.score}</strong> <code>{_e(' '.join(d.id.split()))}</code> "
                f"{_e(' '.join(titles[d.id].split()))}: {_e(' '.join(d.rationale.split()))}</li>" for d in items]
        out.append("</ul>")
    out += ["<h2>Calibration</h2>", f"<p>{_e(calibration_summary(digest))}</p>", "</article>"]
    return "\n".join(out)
