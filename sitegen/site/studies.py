"""The included studies: a page for each, the list of them, and the evidence table across them.

A study is a record included at full text. Its page gathers what a reader needs to
trust or question it: the citation and where to find the paper, each verification
axis's latest verdict (or plainly none yet), the reviewers' decisions, and every
extracted finding with the verbatim passage it rests on and where that passage
comes from. The evidence table puts every finding of every study in one table that
is complete without JavaScript; `assets/table-tools.js` adds sorting and filtering.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import quote

from markupsafe import Markup

from sitegen.living.facts import ReviewFacts
from sitegen.records.ids import arxiv_address, normalise_doi
from sitegen.records.model import (
    UNDATED_RETRACTION,
    CslName,
    Record,
    Reinstatement,
    Update,
    lifted,
    retracted_again,
    retraction_disputed,
    web_address,
)
from sitegen.records.notices import NOTICE_TYPES, notice_kind
from sitegen.records.providers import label as provider_label
from sitegen.records.titles import title_key
from sitegen.references.fields import iso_date
from sitegen.review.folder import Review
from sitegen.review.models import VERIFICATION_AXES, Evidence, Finding, PassageCheck, VerificationPayload
from sitegen.screening.standing import StageHistory
from sitegen.screening.status import Batch
from sitegen.site import exports
from sitegen.verify.report import AXIS_LABELS, OPEN_ITEMS, latest_verdicts, verdict_sentence

if TYPE_CHECKING:  # pages.py lists this module's page group, so it cannot be imported from here at run time
    from sitegen.site.pages import Files, RecordView, Site

VANCOUVER_AUTHORS = 6  # the NLM/Vancouver style lists six authors, then "et al."
# Publication types (as sources name them, lower-cased) that say a record is a notice or was corrected, each with the
# sentence a page says it in (NOTICE_TYPES: every type that makes a record a notice, each said by its kind).
TYPE_SENTENCES = {
    "retraction-notice": "This record is a retraction notice, not a study.",
    "retraction of publication": "This record is a retraction notice, not a study.",
    "reinstatement-notice": "This record is a reinstatement notice, not a study.",
    "expression of concern": "The source lists an expression of concern for this record.",
    "corrected and republished article": "The source lists this record as corrected and republished.",
}
KIND_SENTENCES = {"retraction": "This record is a retraction notice (or a withdrawal or expression of concern), not a "
                                "study.",
                  "erratum": "This record is a correction notice (an erratum), not a study."}
EVIDENCE_CSV_COLUMNS = ["study_id", "study", "title", "year", "journal", "research_question", "population", "method",
                        "intervention", "finding", "limitations", "passage", "passage_source", "passage_location",
                        "licence", "source_url", "study_page", "passage_checked"]



@dataclass(frozen=True)
class Link:
    label: str
    value: str
    url: str


@dataclass(frozen=True)
class AxisVerdict:
    """The latest verdict on one verification axis, or none: `at` and `payload` are None until one exists."""

    axis: str
    at: str | None
    payload: VerificationPayload | None

    @property
    def label(self) -> str:
        return AXIS_LABELS[self.axis]

    @property
    def sentence(self) -> str | None:
        return verdict_sentence(self.payload) if self.payload else None

    @property
    def open_item(self) -> bool:
        return bool(self.payload and self.payload.verdict in OPEN_ITEMS)

    @property
    def notice(self) -> Link | None:
        """The notice (retraction, correction, concern) the verdict names, linked when it is a DOI."""
        if not (self.payload and self.payload.notice):
            return None
        doi = normalise_doi(self.payload.notice)
        return Link("Notice", f"doi:{doi}", doi_url(doi)) if doi else Link("Notice", self.payload.notice, "")


@dataclass(frozen=True)
class Study:
    record: Record
    slug: str
    label: str  # "Wilson et al. 2013": how tables name the study
    reference: str  # the formatted citation of "Cite this study"
    links: list[Link]
    notices: list[str]
    evidence: Evidence | None
    licence: str | None  # of the open full text, which passages drawn from the full text come under
    fulltext_url: str | None  # where that full text is, when it is a web address
    verdicts: list[AxisVerdict]  # one per axis, in VERIFICATION_AXES order
    batch: Batch | None
    history: list[StageHistory]  # each reviewer's decision at each stage, as `ReviewFacts.histories` has it

    @property
    def tag(self) -> Markup:
        """What the lists of studies show beside the study's title (`standing_tag_html`)."""
        return standing_tag_html(self.record, self.notices)

    @property
    def findings(self) -> list[Finding]:
        return self.evidence.findings if self.evidence else []

    @property
    def verified_on_any_axis(self) -> bool:
        return any(verdict.payload for verdict in self.verdicts)

    @property
    def refusals(self) -> list[AxisVerdict]:
        return [verdict for verdict in self.verdicts if verdict.payload and verdict.payload.refusal_grade]

    def passage_check(self, finding: int) -> PassageCheck | None:
        """What the latest verification of the evidence as it stands found of one finding's passage (None:
        not verified, or verified before the evidence was edited)."""
        faithfulness = next((verdict.payload for verdict in self.verdicts
                             if verdict.axis == "faithfulness" and verdict.payload is not None), None)
        checks = faithfulness.passages if faithfulness is not None else []
        return next((check for check in checks if check.finding == finding), None)

    def passage_source(self, finding: int) -> tuple[str, str]:
        """The licence and address of the full text a finding's passage comes under: the one verification
        found it in, else the record's open full text."""
        check = self.passage_check(finding)
        if check is not None and check.found_in == "fulltext":
            return check.licence or "", check.url or ""
        return self.licence or "", self.fulltext_url or ""


# --------------------------------------------------------------------------- pure formatting


def _surname(name: CslName) -> str:
    return name.family or name.literal or ""


def study_label(record: Record) -> str:
    """A short name for the study: first author's surname (the whole name when the source gave no
    split), "et al." when there are more, and the year."""
    author = _surname(record.author[0]) if record.author else ""
    if len(record.author) == 2:
        author = f"{author} and {_surname(record.author[1])}"
    elif len(record.author) > 2:
        author = f"{author} et al."
    parts = [part for part in (author, str(record.year) if record.year else "") if part]
    return " ".join(parts) or record.title


def _initials(given: str) -> str:
    return "".join(part[0].upper() for part in re.split(r"[\s.\-]+", given) if part and part[0].isalpha())


def vancouver_name(name: CslName) -> str:
    """Surname and initials ("Langston RF"); a name the source did not split stays as it came."""
    if name.literal:
        return name.literal
    initials = _initials(name.given or "")
    return f"{name.family} {initials}" if initials else str(name.family)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else f"{text}."


def reference(record: Record) -> str:
    """The record as an NLM/Vancouver reference, the style of the biomedical literature:
    Authors. Title. Journal. Year;Volume(Issue):Pages. doi:DOI"""
    names = [vancouver_name(name) for name in record.author[:VANCOUVER_AUTHORS]]
    if len(record.author) > VANCOUVER_AUTHORS:
        names.append("et al")
    parts = [_sentence(", ".join(names))] if names else []
    parts.append(_sentence(record.title))
    if record.container_title:
        parts.append(_sentence(record.container_title))
    issue = f"({record.issue})" if record.issue else ""
    where = f"{record.volume or ''}{issue}" + (f":{record.page}" if record.page else "")
    if record.year or where:
        parts.append(_sentence(";".join(str(part) for part in (record.year, where) if part)))
    if record.DOI:
        parts.append(f"doi:{record.DOI}")
    return " ".join(parts)


def doi_url(doi: str) -> str:
    return f"https://doi.org/{quote(doi, safe='/')}"


def pubmed_url(pmid: str) -> str:
    return f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"


def study_links(record: Record) -> list[Link]:
    """Where a reader finds the paper, one link per identifier the record has."""
    links = []
    if record.DOI:
        links.append(Link("DOI", record.DOI, doi_url(record.DOI)))
    if record.PMID:
        links.append(Link("PubMed", record.PMID, pubmed_url(record.PMID)))
    if record.PMCID:
        links.append(Link("PubMed Central", record.PMCID, f"https://pmc.ncbi.nlm.nih.gov/articles/{record.PMCID}/"))
    if record.PMCID or record.PMID:
        europe_pmc = f"PMC/{record.PMCID}" if record.PMCID else f"MED/{record.PMID}"
        links.append(Link("Europe PMC", record.PMCID or str(record.PMID),
                          f"https://europepmc.org/article/{europe_pmc}"))
    if record.custom.openalex:
        links.append(Link("OpenAlex", record.custom.openalex, f"https://openalex.org/{record.custom.openalex}"))
    if record.custom.arxiv:
        links.append(Link("arXiv", record.custom.arxiv, arxiv_address(record.custom.arxiv)))
    return links


def retraction_sentence(record: Record, noun: str = "study") -> str | None:
    """Whether the record is retracted, in plain text (not yet escaped), as its sources say; None when none says it
    was ever retracted. A reinstatement is never left unsaid: a retraction it lifted is "retracted on D, reinstated on
    D2 (source)"; a record still marked retracted beside it (`retraction_disputed`: a flag giving no date, which may
    be the very retraction the reinstatement lifted) says both, for a human to decide; one retracted again after its
    reinstatement says so."""
    custom = record.custom
    if not custom.reinstatements:
        return f"This {noun} is retracted according to at least one source." if custom.retracted else None
    reinstated = "; ".join(_reinstated_words(reinstatement, custom.sources) for reinstatement in custom.reinstatements)
    if not custom.retracted:
        return f"This {noun} was {reinstated}: the retraction no longer stands."
    if again := retracted_again(custom):  # dated after every reinstatement: retracted again, not disputed
        return f"This {noun} is {'; '.join(_retracted_words(again))}, after it was {reinstated}."
    standing = [update for update in custom.updates
                if update.kind == "retraction" and not lifted(update, custom.reinstatements)]
    flag = "at least one source marks it retracted, giving no date"  # no retraction listed, or UNDATED_RETRACTION
    retracted = "; ".join([*_retracted_words([update for update in standing if update != UNDATED_RETRACTION]),
                           *([flag] if UNDATED_RETRACTION in standing or not standing else [])])
    return (f"Sources disagree whether this {noun} is retracted: {retracted}; it was also {reinstated}. Whether the "
            "retraction stands is for a human to decide.")


def _reinstated_words(reinstatement: Reinstatement, sources: list[str]) -> str:
    """"retracted on 2019-03-01, reinstated on 2021-06-30 (reinstatement notice 10.1/z)", as far as it is known."""
    retracted = f"retracted on {iso_date(reinstatement.retracted_on)}" if reinstatement.retracted_on else "retracted"
    when = f"reinstated on {iso_date(reinstatement.date)}" if reinstatement.date else "reinstated, giving no date"
    source = (f"reinstatement notice {reinstatement.named_by}" if reinstatement.named_by
              else f"according to {', '.join(map(provider_label, sources))}" if sources else "")
    return f"{retracted}, {when}{f' ({source})' if source else ''}"


def _retracted_words(retractions: list[Update]) -> list[str]:
    """"retracted on 2022-01-05 (retraction notice 10.1/x)", or "retracted (…), giving no date", for each date the
    retractions give. Those of one date are said as one, naming each notice: a notice Crossref lists by DOI and
    PubMed by PMID alone, where no source names both, is kept as two listings (`identity._notices_once` never guesses
    them one), and the page must not say the work was retracted twice on one day."""
    by_date: dict[tuple[int, ...], list[str]] = {}
    for update in retractions:
        names = by_date.setdefault(tuple(update.date or ()), [])
        if update.named_by:
            names.append(update.named_by)
    said = []
    for date, names in by_date.items():
        notice = f" (retraction notice{'s' if len(names) > 1 else ''} {'; '.join(names)})" if names else ""
        said.append(f"retracted on {iso_date(date)}{notice}" if date else f"retracted{notice}, giving no date")
    return said


# The tag a list puts beside a record's title, by what `standing_tag` decides, and its class (style.css).
TAG_CLASSES = {"Retracted": "retracted", "Retraction disputed": "retraction-disputed", "Reinstated": "reinstated",
               "Notice": "retracted"}


def standing_tag(record: Record, notices: Sequence[str] = ()) -> str | None:
    """The word a list puts beside the record's title, as its page's sentence says (`retraction_sentence`): a
    retraction a reinstatement lifted is "Reinstated", one both marked and lifted for a human to decide
    (`retraction_disputed`) "Retraction disputed", one standing "Retracted"; a record the page says anything else
    of (`notices`: a notice itself, corrected) "Notice"; otherwise none."""
    custom = record.custom
    if retraction_disputed(custom):
        return "Retraction disputed"
    if custom.retracted:
        return "Retracted"
    if custom.reinstatements:
        return "Reinstated"
    return "Notice" if notices else None


# Each tag as a list shows it after the title (a space, then the tag), escaped, written once: a list of 100,000 rows
# shows one of four, or none.
TAG_HTML: dict[str | None, Markup] = {None: Markup(""), **{
    tag: Markup(' <strong class="{}">{}</strong>').format(css, tag) for tag, css in TAG_CLASSES.items()}}


def standing_tag_html(record: Record, notices: Sequence[str] = ()) -> Markup:
    """`standing_tag` as a list shows it after the title (`TAG_HTML`); empty when none."""
    return TAG_HTML[standing_tag(record, notices)]


# The notices a source lists against a work, other than a retraction (`retraction_sentence` says those), in words.
UPDATE_WORDS = {"correction": "a correction to", "expression-of-concern": "an expression of concern about"}


def update_sentences(record: Record, noun: str = "study") -> list[str]:
    """The corrections and expressions of concern the sources list against the record (`RecordMeta.updates`), a
    sentence for each kind, naming each notice and its date as far as known ("(10.1/x, 2020-01-05; PMID 123)")."""
    if not record.custom.updates:  # most records, and this is said of every row of the records list
        return []
    said = []
    for kind, words in UPDATE_WORDS.items():
        listed = [update for update in record.custom.updates if update.kind == kind]
        names = [name for update in listed
                 if (name := ", ".join(filter(None, [update.named_by, iso_date(update.date or ())])))]
        if listed:
            named = f" ({'; '.join(names)})" if names else ""
            said.append(f"The sources list {words} this {noun}{named}.")
    return said


def notices(record: Record, noun: str = "study") -> list[str]:
    """What the sources say about the record's standing: retracted (or reinstated), corrected or of concern (the
    notices they list against it), a notice itself."""
    found = [sentence] if (sentence := retraction_sentence(record, noun)) else []
    found += update_sentences(record, noun)
    by_type, as_notice = _type_notices(tuple(record.custom.publication_types))
    for notice in by_type:
        if notice not in found:
            found.append(notice)
    if as_notice:
        found.append(as_notice)
    return found


@lru_cache(maxsize=1024)  # the records share few lists of types ("article"), and `notices` is asked of each record
def _type_notices(publication_types: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
    """What a record's publication types say of it (`notices`): the sentences of `TYPE_SENTENCES` its types have, in
    their order, and the sentence of the notice its types make it, if none of those says it."""
    by_type = tuple(dict.fromkeys(notice for kind in publication_types if (notice := TYPE_SENTENCES.get(kind.lower()))))
    # Any other type that makes the record a notice (OpenAlex's "erratum" and "retraction", PubMed's "Published
    # Erratum", a Crossref correction notice): said as plainly, or a reader takes the notice for a study.
    # In the record's own order, as `notice_kind` reads types everywhere: a record typed both an erratum and a
    # retraction is said to be the notice its first type makes it (a set's order would change with the hash seed).
    types = list(dict.fromkeys(kind.strip().lower() for kind in publication_types))
    noticed = [kind for kind in types if kind in NOTICE_TYPES]
    if not TYPE_SENTENCES.keys() & set(types) and noticed and (kind := notice_kind("", noticed)):
        return by_type, KIND_SENTENCES[kind]
    return by_type, None


# --------------------------------------------------------------------------- derived from the review


def included_studies(review: Review, facts: ReviewFacts, views: list[RecordView]) -> list[Study]:
    """Every study included at full text, newest publication first (then by title)."""
    verdicts = latest_verdicts(review)
    batch_of = {record_id: batch for batch in facts.screening.batches for record_id in batch.record_ids}
    studies = []
    for view in views:
        if not (view.full_text and view.full_text.decision == "include"):
            continue
        record = view.record
        axes = {axis: (latest.at, latest.payload) for axis, latest in verdicts.get(record.id, {}).items()}
        studies.append(Study(
            record, view.slug, study_label(record), reference(record), study_links(record), notices(record),
            view.evidence, record.custom.license, web_address(record.custom.fulltext_url),
            [AxisVerdict(axis, *axes.get(axis, (None, None))) for axis in VERIFICATION_AXES],
            batch_of.get(record.id), facts.histories[record.id]))
    return sorted(studies, key=lambda study: (-(study.record.year or 0), title_key(study.record.title), study.record.id))


def _checked(check: PassageCheck | None) -> str:
    """What the latest verification found of a passage, in evidence.csv's words; blank: not checked."""
    if check is None or check.result == "unchecked":
        return ""
    if check.result == "not-found":
        return "not found"
    return f"found in the {'full text' if check.found_in == 'fulltext' else 'abstract'}"


def evidence_csv(studies: list[Study]) -> str:
    """Every finding of every study, one row each, with its passage and where the passage comes from."""
    rows = []
    for study in studies:
        record = study.record
        for index, finding in enumerate(study.findings):
            passage = finding.passage
            full_text = passage.source == "fulltext"
            licence, address = study.passage_source(index) if full_text else ("", "")
            check = study.passage_check(index)
            rows.append([record.id, study.label, record.title, str(record.year or ""), record.container_title or "",
                         finding.research_question or "", finding.population or "", finding.method or "",
                         finding.intervention or "", finding.finding, finding.limitations or "", passage.text,
                         passage.source, passage.location or "", licence, address,
                         f"studies/{study.slug}.html", _checked(check)])
    return exports.write_csv(EVIDENCE_CSV_COLUMNS, rows)


# --------------------------------------------------------------------------- the page group


def study_pages(site: Site) -> Files:
    """included.html, a page per included study, the evidence table and its CSV."""
    studies = site.studies
    findings = sum(len(study.findings) for study in studies)
    study_count = site.facts.prisma.studies_included  # fewer than the rows when a study has several reports
    yield "included.html", site.page("included.html", "included.html", studies=studies, findings=findings,
                                     study_count=study_count)
    for study in studies:
        path = f"studies/{study.slug}.html"
        yield site.keyed(path, "study.html", study=study)
    yield "evidence.html", site.page("evidence.html", "evidence.html", studies=studies, findings=findings,
                                     study_count=study_count)
    yield "downloads/evidence.csv", evidence_csv(studies)
