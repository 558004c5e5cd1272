"""The evidence loop of seed 001 for a draft manuscript: at most two rounds of verify → problems →
targeted searches → suggestions, and changes to the draft and its .bib only through a confirmation file.

A round's files go to `<out>/<slug>/<R>/` (`citation-review.json`, `claim-review.json`, `problems.md`,
`queries.md`, `candidates.json`, `suggestions.json`, `revision-suggestions.md`); `final-summary.md` sits
beside the rounds and is rewritten after every step. Every file is written atomically.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sitegen.errors import SitegenError
from sitegen.manuscript import bib, claims
from sitegen.records.matching import SAME_TITLE, record_work, title_score
from sitegen.records.model import Record
from sitegen.references import ReferenceProblem, read_references
from sitegen.references.records import entry_record
from sitegen.review.models import VerificationPayload
from sitegen.review.write import atomic_write, pretty_json
from sitegen.sources.http import Fetcher
from sitegen.sources.settings import SourceSettings

MAX_ROUNDS = 2
HITS_PER_QUERY = 5  # candidates kept per query, in the source's relevance order
CANDIDATES_PER_PROBLEM = 2  # new evidence suggested per problem (seed 001: "1-2 篇最相关文献")
STOPWORDS = frozenset("""a about above after again against all also although among an and any are as at be because been
before being between both but by can could did do does doing during each either et al few for from further had has
have having here how however if in into is it its itself may might more most much must no nor not of on once only or
other our out over own per same several should shown show shows since so some such than that the their them then
there these they this those through thus to too under until upon very via was we were what when where whether which
while who whom why will with within would yet study studies research evidence found find finds suggest suggests
suggested demonstrate demonstrated report reported reports indicate indicated known well many often less
higher lower greater fewer better worse larger smaller increase increases increased reduce reduces reduced
decrease decreases decreased improve improves improved associated linked leads lead results result""".split())

Problem = Literal["conflicting citation", "no match", "retracted citation", "to check by hand",
                  "citation with no entry", "unsupported claim", "uncited entry"]
Verifier = Callable[[Fetcher, SourceSettings, Record], object]  # -> sitegen.verify.identity.CitationVerdicts


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- file models


class CitationCheck(Strict):
    """One .bib entry as verified this round (citation-review.json holds one per entry)."""

    key: str
    line: int
    record: Record | None = None
    identity: VerificationPayload | None = None
    status: VerificationPayload | None = None
    rate_limited: bool = False
    note: str | None = None  # why the entry was not verified (it cannot be read as a record)
    resolved: Record | None = None  # for a conflict: the work its DOI resolves to


class ProblemRow(Strict):
    id: str  # "P1"
    type: Problem
    location: str  # "Introduction / paragraph 2 / sentence 1 (line 7)" or the entry's key
    evidence: str
    action: str
    key: str | None = None
    sentence: claims.Sentence | None = None
    query: str | None = None
    carried: bool = False  # left from the last round: the same problem, not resolved by a confirmed suggestion


class CandidateSearch(Strict):
    """One targeted search (candidates.json holds every round's, appended)."""

    round: int
    problem: str
    query: str
    source: str
    status: str  # "ok", or why the source gave no answer: never read as "no literature"
    warnings: list[str] = Field(default_factory=list)
    records: list[Record] = Field(default_factory=list)


class Suggestion(Strict):
    """One change the user may accept in the confirmation file."""

    id: str  # "S1"
    problem: str
    action: Literal["remove-citation", "cite-candidate", "replace-entry", "remove-entry"]
    key: str | None = None  # the entry (or the missing key) the change is about
    sentence: claims.Sentence | None = None
    record: Record | None = None  # the candidate cited, or the metadata an entry is replaced with
    new_key: str | None = None  # the key a cited candidate gets in the .bib
    to_confirm: bool = False  # new evidence: the user must check it supports the sentence


class Accepted(Strict):
    id: str
    sentence: str | None = Field(None, min_length=1)  # the sentence as the user wants it instead


class Confirmation(Strict):
    """confirm.yaml: the suggestions the user accepts (an empty list accepts none)."""

    accept: list[Accepted | str]


class Applied(Strict):
    """applied.json: what a confirmation changed, so it is never applied twice."""

    accepted: list[str]
    draft_changed: bool
    bib_changed: bool


# --------------------------------------------------------------------------- slug and manuscript


def topic_slug(topic: str) -> str:
    """The first 8 hex digits of sha1 of the topic, NFKC-normalised, lower-cased, trimmed, spaces collapsed."""
    normal = " ".join(unicodedata.normalize("NFKC", topic).lower().split())
    if not normal:
        raise SitegenError("--topic is empty")
    return hashlib.sha1(normal.encode("utf-8")).hexdigest()[:8]


class Manuscript(BaseModel):
    draft: Path
    bib: Path
    base: Path  # <out>/<slug>

    def round_dir(self, number: int) -> Path:
        return self.base / str(number)

    def rounds(self) -> list[int]:
        return sorted(number for number in range(1, MAX_ROUNDS + 1) if self.round_dir(number).is_dir()
                      and (self.round_dir(number) / "problems.md").is_file())


def find_manuscript(directory: Path, topic: str, draft: Path | None = None, bib_file: Path | None = None,
                    out: Path | None = None) -> Manuscript:
    """The draft and .bib of MANUSCRIPT_DIR (the only .md and .bib there unless named)."""
    if not directory.is_dir():
        raise SitegenError(f"{directory} is not a folder")
    chosen = []
    for given, suffix, option in ((draft, ".md", "--draft"), (bib_file, ".bib", "--bib")):
        if given is not None:
            path = given if given.is_absolute() else directory / given
            if not path.is_file():
                raise SitegenError(f"{option} {path} is not a file")
        else:
            found = sorted(path for path in directory.glob(f"*{suffix}") if path.is_file()
                           and path.name.lower() != "readme.md")
            if len(found) != 1:
                raise SitegenError(f"{directory} holds {len(found)} {suffix} files"
                                   f"{': ' + ', '.join(p.name for p in found) if found else ''}; name one with {option}")
            path = found[0]
        chosen.append(path)
    return Manuscript(draft=chosen[0], bib=chosen[1],
                      base=(out or directory / "output" / "evidence-loop") / topic_slug(topic))


# --------------------------------------------------------------------------- a round


def verify_entries(fetcher: Fetcher, settings: SourceSettings, bib_path: Path, verify: Verifier) -> list[CitationCheck]:
    """Every .bib entry through the citation verifier; a conflict also gets the work its DOI resolves to."""
    try:
        entries = read_references(bib_path, "bibtex", [])
    except ReferenceProblem as exc:
        raise SitegenError(f"{bib_path}:{exc.line}: {exc.message}") from None
    checks = []
    for entry in entries:
        try:
            record = entry_record(entry)
        except ValueError as exc:
            checks.append(CitationCheck(key=entry.id, line=entry.line, note=f"not verified: {exc}"))
            continue
        verdicts = verify(fetcher, settings, record)
        check = CitationCheck(key=entry.id, line=entry.line, record=record, identity=verdicts.identity,
                              status=verdicts.status, rate_limited=verdicts.rate_limited)
        if check.identity.verdict == "mismatch":
            check.resolved = verdicts.resolved
        checks.append(check)
    return checks


def problems_of(checks: list[CitationCheck], review: claims.ClaimReview) -> tuple[list[ProblemRow], list[CitationCheck]]:
    """The round's problems, merged by location and entry, and the rate-limited entries kept apart."""
    rows: dict[tuple[str, str], ProblemRow] = {}
    citing = _citing_sentences(review)
    apart = []

    def add(type_: Problem, where: str, evidence: str, action: str, key: str | None = None,
            sentence: claims.Sentence | None = None) -> None:
        if (type_, where) not in rows:
            rows[(type_, where)] = ProblemRow(id="", type=type_, location=where, evidence=evidence, action=action,
                                              key=key, sentence=sentence)

    for check in checks:
        if check.rate_limited:
            apart.append(check)
            continue
        if check.record is None:
            add("to check by hand", check.key, check.note or "", "check the entry by hand", check.key)
            continue
        reasons = "; ".join(check.identity.reasons) or _answers(check.identity)
        cited = f" (cited in {citing[check.key][0].location}, line {citing[check.key][0].line})" \
            if citing.get(check.key) else ""
        if check.identity.verdict == "mismatch":
            add("conflicting citation", check.key, reasons + cited, "replace with the correct entry", check.key)
        elif check.identity.verdict == "unresolvable":
            add("no match", check.key, reasons + cited, "find the real work or remove the citation", check.key)
        elif check.identity.verdict == "inconclusive":
            add("to check by hand", check.key, reasons + cited, "check the entry by hand", check.key)
        if check.status is not None and check.status.verdict == "retracted":
            notice = f" (notice {check.status.notice})" if check.status.notice else ""
            add("retracted citation", check.key, "; ".join(check.status.reasons) + notice + cited,
                "remove the citation or cite other evidence", check.key)
        elif check.status is not None and check.status.verdict in ("corrected", "expression-of-concern"):
            add("to check by hand", check.key, f"{check.status.verdict}: " + "; ".join(check.status.reasons),
                "read the notice and check the claim still holds", check.key)
    for finding in review.findings:
        sentence = finding.sentence
        where = f"{sentence.location} (line {sentence.line})" if sentence else finding.key or ""
        if finding.kind == "citation with no entry":
            add("citation with no entry", f"{where}: @{finding.key}", _quote(sentence.text),
                "remove the citation or cite a real work", finding.key, sentence)
        elif finding.kind == "unsupported claim":
            add("unsupported claim", where, f"{_quote(sentence.text)} ({', '.join(finding.rules)})",
                "search and insert a citation", None, sentence)
        else:
            add("uncited entry", where, "no sentence of the draft cites it", "cite it or remove it", finding.key)
    numbered = [row.model_copy(update={"id": f"P{number}"}) for number, row in enumerate(rows.values(), start=1)]
    return numbered, apart


def query_for(row: ProblemRow, checks: dict[str, CitationCheck]) -> str | None:
    """The targeted search for a problem (None for an entry nothing cites: there is nothing to find)."""
    if row.type == "unsupported claim":
        return " ".join(keywords(row.sentence.text, 4))
    if row.type == "citation with no entry":
        return " ".join(word for word in re.split(r"[^A-Za-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", row.key))
                        if len(word) > 1 and word.lower() not in STOPWORDS).lower() or None
    check = checks.get(row.key)
    if row.type == "uncited entry" or check is None or check.record is None:
        return None
    record = check.resolved if row.type == "conflicting citation" and check.resolved else check.record
    surname = next((name.family or name.literal or "" for name in record.author), "")
    return " ".join([*keywords(record.title, 4), *([surname] if surname else [])])


def keywords(text: str, count: int) -> list[str]:
    """`count` content words of a text, longest first chosen, kept in the text's order."""
    plain = claims.AT_KEY.sub(" ", claims.LATEX_CITE.sub(" ", text))
    words = list(dict.fromkeys(word.lower() for word in re.findall(r"[A-Za-z][A-Za-z-]{2,}", plain)
                               if word.lower() not in STOPWORDS))
    chosen = set(sorted(words, key=len, reverse=True)[:count])
    return [word for word in words if word in chosen]


def same_title(hit: Record, cited: Record) -> bool:
    """Whether a search hit is, by its title, the work an entry cites (a hit on other words is not)."""
    return title_score(record_work(hit), record_work(cited)) >= SAME_TITLE


def suggestions_for(rows: list[ProblemRow], checks: dict[str, CitationCheck], found: dict[str, list[Record]],
                    keys: set[str]) -> list[Suggestion]:
    """The changes to offer for each problem (new evidence comes only from this round's searches)."""
    made: list[Suggestion] = []
    taken = set(keys)

    def offer(row: ProblemRow, action: str, **fields) -> None:
        made.append(Suggestion(id=f"S{len(made) + 1}", problem=row.id, action=action, **fields))

    def cite(row: ProblemRow, sentence: claims.Sentence, replaces: str | None) -> None:
        for record in found.get(row.id, [])[:CANDIDATES_PER_PROBLEM]:
            key = bib.new_key(record, taken)
            taken.add(key)
            offer(row, "cite-candidate", key=replaces, sentence=sentence, record=record, new_key=key, to_confirm=True)

    for row in rows:
        check = checks.get(row.key) if row.key else None
        if row.type == "unsupported claim":
            cite(row, row.sentence, None)
        elif row.type == "citation with no entry":
            offer(row, "remove-citation", key=row.key, sentence=row.sentence)
            cite(row, row.sentence, row.key)
        elif row.type == "conflicting citation" and check and check.resolved:
            offer(row, "replace-entry", key=row.key, record=check.resolved)
        elif row.type in ("no match", "retracted citation", "uncited entry"):
            offer(row, "remove-entry", key=row.key)
            if row.type == "no match" and check and check.record:
                for record in [hit for hit in found.get(row.id, []) if same_title(hit, check.record)][:1]:
                    offer(row, "replace-entry", key=row.key, record=record, to_confirm=True)
    return made


# --------------------------------------------------------------------------- running


def run_round(manuscript: Manuscript, fetcher: Fetcher, settings: SourceSettings, sources: list[str],
              verify: Verifier, search: Callable) -> int:
    """Run the next round (applying the last round's confirmation first); its number."""
    done = manuscript.rounds()
    if converged_round(manuscript) is not None:
        raise SitegenError(f"the loop converged in round {done[-1]}; see {manuscript.base / 'final-summary.md'}")
    if len(done) >= MAX_ROUNDS:
        raise SitegenError(f"{MAX_ROUNDS} rounds have been run, the most the evidence loop runs; what is left is "
                           f"listed in {manuscript.base / 'final-summary.md'} for checking by hand")
    if done:
        previous = manuscript.round_dir(done[-1])
        if not (previous / "confirm.yaml").is_file():
            raise SitegenError(f"round {done[-1]} is waiting for your decisions: list the suggestions you accept in "
                               f"{previous / 'confirm.yaml'} (`accept: []` accepts none), then run again")
        if not (previous / "applied.json").is_file():
            apply_confirmation(manuscript, done[-1])
    number = (done[-1] + 1) if done else 1
    folder = manuscript.round_dir(number)

    checks = verify_entries(fetcher, settings, manuscript.bib, verify)
    review = claims.check(manuscript.draft.read_text(encoding="utf-8"), [check.key for check in checks])
    rows, apart = problems_of(checks, review)
    by_key = {check.key: check for check in checks}
    rows = [row.model_copy(update={"query": query_for(row, by_key)}) for row in rows]
    if done:
        rows = _mark_carried(rows, manuscript.round_dir(done[-1]))
    searches = [_search(search, fetcher, settings, sources, number, row) for row in rows if row.query]
    cited_dois = {check.record.DOI for check in checks if check.record and check.record.DOI}
    found: dict[str, list[Record]] = {}
    for result in searches:  # a hit the .bib already holds is no new evidence
        found.setdefault(result.problem, []).extend(record for record in result.records
                                                    if not (record.DOI and record.DOI in cited_dois))
    made = suggestions_for(rows, by_key, found, set(by_key))
    earlier = _read_candidates(manuscript.round_dir(done[-1])) if done else []

    atomic_write(folder / "citation-review.json", pretty_json([c.model_dump(mode="json", by_alias=True,
                                                                             exclude_none=True) for c in checks]))
    atomic_write(folder / "claim-review.json", pretty_json(review.model_dump(mode="json")))
    atomic_write(folder / "queries.md", render_queries(rows, apart))
    atomic_write(folder / "candidates.json", pretty_json([s.model_dump(mode="json", by_alias=True, exclude_none=True)
                                                          for s in [*earlier, *searches]]))
    atomic_write(folder / "suggestions.json", pretty_json([s.model_dump(mode="json", by_alias=True,
                                                                        exclude_none=True) for s in made]))
    atomic_write(folder / "revision-suggestions.md", render_suggestions(rows, made, searches, by_key))
    atomic_write(folder / "problems.json", pretty_json([row.model_dump(mode="json", by_alias=True, exclude_none=True)
                                                       for row in rows]))
    before = len(read_problems(manuscript.round_dir(done[-1]))) if done else None
    atomic_write(folder / "problems.md", render_problems(number, rows, apart, before))  # last: marks the round done
    write_summary(manuscript)
    return number


def _search(search: Callable, fetcher: Fetcher, settings: SourceSettings, sources: list[str], number: int,
            row: ProblemRow) -> CandidateSearch:
    narrow = settings.model_copy(update={"max_records": HITS_PER_QUERY,
                                         "openalex_per_page": min(HITS_PER_QUERY, settings.openalex_per_page)})
    result = search(fetcher, row.query, sources, native=True, settings=narrow)
    statuses = sorted({o.status for o in result.outcomes})
    return CandidateSearch(round=number, problem=row.id, query=row.query, source=",".join(sources),
                           status="ok" if statuses == ["ok"] else "failed: " + ", ".join(
                               f"{o.source} {o.status}" for o in result.outcomes if o.status != "ok"),
                           warnings=[w for o in result.outcomes for w in o.warnings],
                           records=result.records[:HITS_PER_QUERY])


def converged_round(manuscript: Manuscript) -> int | None:
    """The round that found no problem (rate-limited entries apart), if the loop has converged."""
    done = manuscript.rounds()
    return done[-1] if done and not read_problems(manuscript.round_dir(done[-1])) else None


def rate_limited_keys(folder: Path) -> list[str]:
    """The entries a round kept apart as rate-limited (to re-check later)."""
    return [check.key for check in _read(folder / "citation-review.json", CitationCheck) if check.rate_limited]


def read_problems(folder: Path) -> list[ProblemRow]:
    return _read(folder / "problems.json", ProblemRow)


def _read_candidates(folder: Path) -> list[CandidateSearch]:
    return _read(folder / "candidates.json", CandidateSearch)


def _read_suggestions(folder: Path) -> list[Suggestion]:
    return _read(folder / "suggestions.json", Suggestion)


def _read(path: Path, model: type[Strict]) -> list:
    """A round's file as sitegen wrote it (a list of `model`)."""
    return [model.model_validate(item) for item in json.loads(path.read_text(encoding="utf-8"))]


def _signature(row: ProblemRow) -> tuple[str, str]:
    return row.type, row.sentence.text if row.sentence else (row.key or row.location)


def _mark_carried(rows: list[ProblemRow], previous: Path) -> list[ProblemRow]:
    """Problems the last round also had and no accepted suggestion addressed are left from it."""
    accepted = set(Applied.model_validate_json((previous / "applied.json").read_text()).accepted)
    addressed = {s.problem for s in _read_suggestions(previous) if s.id in accepted}
    left = {_signature(row) for row in read_problems(previous) if row.id not in addressed}
    return [row.model_copy(update={"carried": _signature(row) in left}) for row in rows]


# --------------------------------------------------------------------------- confirmation


def read_confirmation(path: Path, offered: list[Suggestion]) -> list[Accepted]:
    """The accepted suggestions of confirm.yaml; SitegenError naming the file and line of a mistake."""
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        line = exc.problem_mark.line + 1 if getattr(exc, "problem_mark", None) else 1
        raise SitegenError(f"{path}:{line}: YAML syntax error: {getattr(exc, 'problem', exc)}") from None
    try:
        confirmation = Confirmation.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"] if part not in ("Accepted", "str"))
        raise SitegenError(f"{path}:{_line_of(text, first['loc'])}: {where}: {first['msg']} (write `accept:` "
                           "followed by a list of suggestion ids such as `- S1`, or `- id: S1` with `sentence:`)") from None
    known = {s.id: s for s in offered}
    accepted, problems_seen = [], {}
    for index, item in enumerate(confirmation.accept):
        item = Accepted(id=item) if isinstance(item, str) else item
        line = _line_of(text, ("accept", index))
        if item.id not in known:
            raise SitegenError(f"{path}:{line}: {item.id!r} is not a suggestion of this round "
                               f"(they are {', '.join(known) or 'none'})")
        suggestion = known[item.id]
        if suggestion.problem in problems_seen:
            raise SitegenError(f"{path}:{line}: {item.id} and {problems_seen[suggestion.problem]} are two answers to "
                               f"problem {suggestion.problem}; accept one")
        if item.sentence is not None and suggestion.sentence is None:
            raise SitegenError(f"{path}:{line}: {item.id} changes the .bib, not a sentence; it takes no `sentence:`")
        problems_seen[suggestion.problem] = item.id
        accepted.append(item)
    return accepted


def _line_of(text: str, location: tuple) -> int:
    """The line of the YAML node at `location` (keys and list indexes), or of the deepest one there is."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return 1
    for part in location:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            following = next((value for key, value in node.value if key.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            following = node.value[part]
        else:
            following = None  # a union's member name, or a key that is missing
        if following is not None:
            node = following
    return node.start_mark.line + 1 if node is not None else 1


def apply_confirmation(manuscript: Manuscript, number: int) -> Applied:
    """Apply round `number`'s confirm.yaml to the draft and .bib: exactly the accepted suggestions."""
    folder = manuscript.round_dir(number)
    path = folder / "confirm.yaml"
    if not path.is_file():
        raise SitegenError(f"there is no {path}: list the suggestions you accept there (`accept: [S1, S3]`)")
    if (folder / "applied.json").is_file():
        raise SitegenError(f"round {number}'s confirmation was applied already ({folder / 'applied.json'})")
    offered = _read_suggestions(folder)
    accepted = read_confirmation(path, offered)
    known = {s.id: s for s in offered}
    draft = manuscript.draft.read_text(encoding="utf-8")
    bib_text = manuscript.bib.read_text(encoding="utf-8")
    new_draft, new_bib = revise(draft, bib_text, [(known[a.id], a.sentence) for a in accepted], manuscript, path)
    if new_bib != bib_text:
        atomic_write(manuscript.bib, new_bib)
    if new_draft != draft:
        atomic_write(manuscript.draft, new_draft)
    applied = Applied(accepted=[a.id for a in accepted], draft_changed=new_draft != draft,
                      bib_changed=new_bib != bib_text)
    atomic_write(folder / "applied.json", pretty_json(applied.model_dump(mode="json")))
    write_summary(manuscript)
    return applied


def revise(draft: str, bib_text: str, accepted: list[tuple[Suggestion, str | None]], manuscript: Manuscript,
           confirmation: Path) -> tuple[str, str]:
    """The draft and .bib with the accepted suggestions made. Pure; SitegenError if the draft moved on."""
    current = {(s.line, s.text): s for s in claims.sentences(draft)}
    entries = {entry.id: entry for entry in read_references(bib_text, "bibtex", [])}
    edits: dict[tuple[int, int], str] = {}  # span in the draft -> its new text

    def sentence_now(suggestion: Suggestion) -> claims.Sentence:
        found = current.get((suggestion.sentence.line, suggestion.sentence.text))
        if found is None:
            raise SitegenError(f"{confirmation}: {suggestion.id}: the sentence on line {suggestion.sentence.line} of "
                               f"{manuscript.draft.name} changed since the round was run; nothing was changed")
        return found

    def edit(sentence: claims.Sentence, text: str, suggestion: Suggestion) -> None:
        if sentence.span in edits:
            raise SitegenError(f"{confirmation}: {suggestion.id} changes a sentence another accepted suggestion "
                               "changes; accept one and edit its sentence")
        edits[sentence.span] = text

    def entry(key: str, suggestion: Suggestion):
        if key not in entries:
            raise SitegenError(f"{confirmation}: {suggestion.id}: the entry {key!r} is no longer in "
                               f"{manuscript.bib.name}; nothing was changed")
        return entries[key]

    # Entries are edited from the end of the file back, so the lines of those before stay right.
    bib_edits: list[tuple[int, Callable[[str], str]]] = []
    for suggestion, replacement in accepted:
        raw = None
        if suggestion.sentence is not None:
            sentence = sentence_now(suggestion)
            raw = draft[sentence.span[0]:sentence.span[1]]
        if suggestion.action == "remove-citation":
            edit(sentence, replacement or without_citation(raw, suggestion.key), suggestion)
        elif suggestion.action == "cite-candidate":
            text = replacement or (replace_citation(raw, suggestion.key, suggestion.new_key) if suggestion.key
                                   else add_citation(raw, suggestion.new_key))
            edit(sentence, text, suggestion)
            bib_text = bib.append_entry(bib_text, suggestion.record, suggestion.new_key)
        elif suggestion.action == "replace-entry":
            found = entry(suggestion.key, suggestion)
            bib_edits.append((found.line, lambda text, f=found, s=suggestion: bib.replace_entry(text, f.line, s.key,
                                                                                                  s.record)))
        elif suggestion.action == "remove-entry":
            found = entry(suggestion.key, suggestion)
            bib_edits.append((found.line, lambda text, f=found: bib.remove_entry(text, f.line, f.id)))
            for sentence in current.values():
                if suggestion.key in sentence.keys:
                    edit(sentence, without_citation(draft[sentence.span[0]:sentence.span[1]], suggestion.key),
                         suggestion)
    for _, change in sorted(bib_edits, key=lambda item: item[0], reverse=True):
        bib_text = change(bib_text)
    for (start, end), text in sorted(edits.items(), reverse=True):
        draft = draft[:start] + text + draft[end:]
    return draft, bib_text


def without_citation(text: str, key: str) -> str:
    """The sentence without its citations of `key` (a bracket left empty goes too)."""
    escaped = re.escape(key)
    text = re.sub(rf"\s*;\s*-?@{{?{escaped}}}?(?![\w:.#$%&\-+?<>~/])[^;\]]*(?=[;\]])", "", text)
    text = re.sub(rf"(\[)\s*[^\[\];@]*-?@{{?{escaped}}}?(?![\w:.#$%&\-+?<>~/])[^;\]]*;\s*", r"\1", text)
    text = re.sub(rf"\s*\[[^\[\];@]*-?@{{?{escaped}}}?(?![\w:.#$%&\-+?<>~/])[^;\]]*\]", "", text)
    text = re.sub(rf"(?<![\w@])-?@{{?{escaped}}}?(?![\w:.#$%&\-+?<>~/])", "", text)
    return re.sub(r" {2,}", " ", text)


def replace_citation(text: str, key: str, new_key: str) -> str:
    return re.sub(rf"(?<![\w@])(-?)@{{?{re.escape(key)}}}?(?![\w:.#$%&\-+?<>~/])", rf"\1@{new_key}", text)


def add_citation(text: str, key: str) -> str:
    """The sentence with `[@key]` before its closing punctuation."""
    match = re.search(r"[.!?][\"'”’)]*\s*$", text)
    end = match.start() if match else len(text.rstrip())
    return f"{text[:end]} [@{key}]{text[end:]}"


# --------------------------------------------------------------------------- rendering


def _quote(text: str, limit: int = 160) -> str:
    return '"' + (text if len(text) <= limit else text[:limit - 1] + "…") + '"'


def _cell(text: str) -> str:
    """Text from a draft or a provider made safe in Markdown: on one line, no table breaks, no HTML."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|").replace("&", "&amp;").replace("<", "&lt;")


def _answers(payload: VerificationPayload) -> str:
    return "; ".join(f"{a.source}: {a.answer}{f' ({a.detail})' if a.detail else ''}" for a in payload.answers)


def _citing_sentences(review: claims.ClaimReview) -> dict[str, list[claims.Sentence]]:
    citing: dict[str, list[claims.Sentence]] = {}
    for sentence in review.citing:
        for key in sentence.keys:
            citing.setdefault(key, []).append(sentence)
    return citing


def render_problems(number: int, rows: list[ProblemRow], apart: list[CitationCheck], before: int | None) -> str:
    """problems.md: the seed's table, the trend since the last round (`before` problems), entries kept apart."""
    lines = [f"# Problems, round {number}", ""]
    if before is not None:
        lines += [f"Round {number - 1}: {before} problem(s); round {number}: {len(rows)}.", ""]
    lines += ["| # | type | location | evidence | action |", "| --- | --- | --- | --- | --- |"]
    for row in rows:
        left = " (left from the last round)" if row.carried else ""
        lines.append(f"| {row.id} | {row.type}{left} | {_cell(row.location)} | {_cell(row.evidence)} | "
                     f"{_cell(row.action)} |")
    if not rows:
        lines.append("| – | none | | | |")
    if apart:
        lines += ["", "## Re-check later (rate-limited, not searched)", ""]
        lines += [f"- {check.key} (line {check.line}): {_cell(_answers(check.identity))}" for check in apart]
    return "\n".join(lines) + "\n"


def render_queries(rows: list[ProblemRow], apart: list[CitationCheck]) -> str:
    lines = ["# Targeted searches", ""]
    for row in rows:
        lines.append(f"- {row.id} ({row.type}): `{row.query}`" if row.query
                     else f"- {row.id} ({row.type}): no search (nothing to find for it)")
    if apart:
        lines += ["", "Rate-limited entries are not searched: " + ", ".join(c.key for c in apart)]
    return "\n".join(lines) + "\n"


def render_suggestions(rows: list[ProblemRow], made: list[Suggestion], searches: list[CandidateSearch],
                       checks: dict[str, CitationCheck]) -> str:
    lines = ["# Revision suggestions", "",
             "Nothing is changed until you list the suggestions you accept in `confirm.yaml` in this folder",
             "(`accept: [S1, S3]`, or `- id: S1` with `sentence: ...` to word the sentence yourself) and run",
             "`sitegen loop ... --apply` or the next round. New evidence is marked **[to confirm]**: check that",
             "the work really supports the sentence before you accept it.", ""]
    failed = {s.problem: s for s in searches if s.status != "ok"}
    for row in rows:
        lines += [f"## {row.id}: {row.type}: {_cell(row.location)}", "", f"Evidence: {_cell(row.evidence)}", ""]
        offered = [s for s in made if s.problem == row.id]
        for suggestion in offered:
            lines.append(f"- **{suggestion.id}** {_describe(suggestion, checks)}")
        if row.id in failed:
            lines.append(f"- the search `{row.query}` failed ({failed[row.id].status}): this says nothing about "
                         "whether literature exists; run the round again later")
        elif row.query and not any(s.record for s in offered) and row.type != "conflicting citation":
            hits = [record for search in searches if search.problem == row.id for record in search.records]
            seen = _cell("; ".join(f"{_first_author(r)} ({r.year or 'n.d.'}) {r.title}" for r in hits))
            lines.append(f"- the search `{row.query}` found nothing to suggest" +
                         (f" (its hits are other works: {seen})" if seen else "") +
                         "; search by hand (no hit is not proof that no literature exists)")
        if not offered:
            lines.append(f"- [to check by hand] {row.action}")
        lines.append("")
    return "\n".join(lines)


def _describe(suggestion: Suggestion, checks: dict[str, CitationCheck]) -> str:
    record = suggestion.record
    work = _cell(f"{_first_author(record)} ({record.year or 'n.d.'}) {record.title}" +
                 (f", doi:{record.DOI}" if record.DOI else "")) if record else ""
    if suggestion.action == "remove-citation":
        return f"remove the citation @{suggestion.key} from the sentence"
    if suggestion.action == "cite-candidate":
        instead = f"instead of @{suggestion.key}" if suggestion.key else "in the sentence"
        return f"cite {work} as @{suggestion.new_key} {instead} **[to confirm]**"
    if suggestion.action == "remove-entry":
        return f"remove the entry {suggestion.key} from the .bib and its citations from the draft"
    check = checks.get(suggestion.key)
    diff = field_diff(check.record, record) if check and check.record else []
    changes = _cell("; ".join(f"{name}: {old!r} → {new!r}" for name, old, new in diff) or "no field differs")
    mark = " **[to confirm]**" if suggestion.to_confirm else ""
    return f"replace the entry {suggestion.key} with {work} ({changes}){mark}"


def _first_author(record: Record | None) -> str:
    if record is None or not record.author:
        return "Anonymous"
    first = record.author[0]
    return (first.family or first.literal or "") + (" et al." if len(record.author) > 1 else "")


def field_diff(cited: Record, correct: Record) -> list[tuple[str, str, str]]:
    """The fields that differ between the entry as cited and the correct record."""
    fields = {"title": lambda r: r.title, "first author": lambda r: _first_author(r).removesuffix(" et al."),
              "year": lambda r: str(r.year or ""), "container": lambda r: r.container_title or "",
              "volume": lambda r: r.volume or "", "pages": lambda r: r.page or "", "DOI": lambda r: r.DOI or ""}
    return [(name, get(cited), get(correct)) for name, get in fields.items()
            if get(cited).casefold() != get(correct).casefold() and get(correct)]


def write_summary(manuscript: Manuscript) -> None:
    """final-summary.md: rounds run, problems per round, what was revised, what is left."""
    rounds = manuscript.rounds()
    lines = ["# Evidence loop: summary", "", f"Draft: {manuscript.draft.name}; bibliography: {manuscript.bib.name}.",
             f"Rounds run: {len(rounds)} of at most {MAX_ROUNDS}.", "", "| round | problems | rate-limited | revised |",
             "| --- | --- | --- | --- |"]
    last_rows, last_apart = [], ""
    for number in rounds:
        folder = manuscript.round_dir(number)
        last_rows = read_problems(folder)
        apart = rate_limited_keys(folder)
        last_apart = ", ".join(apart)
        revised = "waiting for confirm.yaml"
        if (folder / "applied.json").is_file():
            applied = Applied.model_validate_json((folder / "applied.json").read_text(encoding="utf-8"))
            revised = ", ".join(applied.accepted) or "none accepted"
        lines.append(f"| {number} | {len(last_rows)} | {len(apart)} | {revised} |")
    lines.append("")
    if rounds and not last_rows:
        lines.append("Converged: the last round found no problem.")
    elif rounds:
        final = len(rounds) >= MAX_ROUNDS
        lines += ["Left after the last round" + (" [to check by hand]:" if final else ":"), ""]
        lines += [f"- {row.id} {row.type}: {_cell(row.location)}" + (" [to check by hand]" if final else "")
                  for row in last_rows]
    if last_apart:
        lines += ["", f"Re-check later (rate-limited, never searched): {last_apart}."]
    atomic_write(manuscript.base / "final-summary.md", "\n".join(lines) + "\n")


def problems_left(manuscript: Manuscript) -> int:
    rounds = manuscript.rounds()
    return len(read_problems(manuscript.round_dir(rounds[-1]))) if rounds else 0
