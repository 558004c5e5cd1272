"""`sitegen loop` against the defects an adversarial review found, one test per class: rate limits that
hid verdicts, edits of one entry twice, the citation grammar of edits, the apply as one unit, escaping,
bad encodings, symlinks and line endings, the claim check's languages and structures, speed, rounds
counted by folders, confirm.yaml's duplicates, and what the summary says about failed searches.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
import pytest
import test_loop
from click.testing import CliRunner
from test_loop import FIXTURES, TOPIC, Providers, Verdicts, crossref_verifier, problems, round_dir, run

from sitegen import commands
from sitegen.cli import cli
from sitegen.errors import SitegenError, shown_path
from sitegen.manuscript import claims
from sitegen.manuscript import loop as loop_module
from sitegen.manuscript.loop import topic_slug
from sitegen.records.model import Record

# test_loop's fixtures: its recorded providers, its manuscript copy, its command line with the mocks.
no_waiting, manuscript, cli_with_mocks = test_loop.no_waiting, test_loop.manuscript, test_loop.cli_with_mocks


def files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in ("draft.md", "references.bib")}


def suggestions(folder: Path, number: int = 1) -> list[dict]:
    return json.loads((round_dir(folder, number) / "suggestions.json").read_text())


def accept(folder: Path, ids: list[str], number: int = 1) -> None:
    (round_dir(folder, number) / "confirm.yaml").write_text(f"accept: [{', '.join(ids)}]\n")


class Answering(Providers):
    """The recorded providers, with Crossref answering for the rate-limited DOI once `answering` is set."""

    answering = False

    def __call__(self, request):
        if self.answering and request.url.host == "api.crossref.org" and request.url.path.endswith("22081"):
            self.requests.append(request)
            return httpx.Response(200, content=(FIXTURES / "crossref" / "10.2196_22081.json").read_bytes(),
                                  headers={"content-type": "application/json"})
        return super().__call__(request)


# --------------------------------------------------------------------------- 1. rate limits never hide a verdict


def test_a_refusal_grade_verdict_is_a_problem_even_when_another_index_was_rate_limited(manuscript):
    def retracted_but_limited(fetcher, settings, record):
        verdicts = crossref_verifier(fetcher, settings, record)
        if record.DOI == "10.1177/02683962211048201":
            status = verdicts.status.model_copy(update={"verdict": "retracted", "refusal_grade": True,
                                                        "reasons": ["a retraction notice"]})
            identity = verdicts.identity.model_copy(update={"verdict": "inconclusive", "refusal_grade": False})
            return Verdicts(identity, status, True)
        return verdicts

    loop_module_result = commands.loop(manuscript, TOPIC, sources=["openalex"], mode="live",
                                       verify=retracted_but_limited, transport=httpx.MockTransport(Providers()))
    found = {(p["type"], p.get("key")) for p in problems(manuscript, 1)}
    assert ("retracted citation", "wagner2021ai") in found
    assert "wagner2021ai" in loop_module_result.recheck  # its identity is still open: re-check later too


def test_a_round_that_could_not_check_everything_pauses_and_the_next_run_re_verifies(tmp_path, monkeypatch):
    entry = (FIXTURES / "manuscript" / "references.bib").read_text().split("\n\n")[2]
    folder = tmp_path / "short"
    folder.mkdir()
    (folder / "refs.bib").write_text(entry.replace("Patients'", "Patients’") + "\n")  # as Crossref spells it
    (folder / "draft.md").write_text("# Reviews\n\nPatients were asked about teleconsultation "
                                     "[@grenier2020teleconsultation].\n")
    providers = Answering()
    monkeypatch.setattr(commands, "loop", lambda *a, **k: loop_module.step(
        *a, **k, verify=crossref_verifier, transport=httpx.MockTransport(providers)))
    first = CliRunner().invoke(cli, ["loop", str(folder), "--topic", "reviews"])
    assert first.exit_code == 3, first.output
    assert "paused after round 1" in first.output and "converged" not in first.output
    summary = folder / "output" / "evidence-loop" / topic_slug("reviews") / "final-summary.md"
    assert "Paused" in summary.read_text() and "Converged" not in summary.read_text()
    still_limited = CliRunner().invoke(cli, ["loop", str(folder), "--topic", "reviews"])
    assert still_limited.exit_code == 3 and "round 1:" in still_limited.output  # round 1 again, not round 2
    providers.answering = True
    asked = len(providers.requests)
    done = CliRunner().invoke(cli, ["loop", str(folder), "--topic", "reviews"])
    assert done.exit_code == 0 and "converged in round 1" in done.output
    assert len(providers.requests) > asked  # verified again, not taken from the paused round
    assert not (summary.parent / "2").exists()


# --------------------------------------------------------------------------- 2. one entry, one problem, edits by key


def test_an_entry_whose_doi_resolves_to_a_retracted_work_is_never_replaced_by_that_work(manuscript):
    from sitegen.records.model import Record

    other = Record.model_validate({"id": "10.1234/other", "DOI": "10.1234/other", "title": "Another work",
                                   "type": "article-journal", "author": [{"family": "Roe", "given": "R"}]})

    def mismatch_and_retracted(fetcher, settings, record):
        verdicts = crossref_verifier(fetcher, settings, record)
        if record.DOI != "10.17705/1cais.04607":
            return verdicts
        return Verdicts(verdicts.identity.model_copy(update={"verdict": "mismatch", "refusal_grade": True}),
                        verdicts.status.model_copy(update={"verdict": "retracted", "refusal_grade": True}),
                        False, other)

    commands.loop(manuscript, TOPIC, sources=["openalex"], mode="live", verify=mismatch_and_retracted,
                  transport=httpx.MockTransport(Providers()))
    rows = [p for p in problems(manuscript, 1) if p.get("key") == "schryen2021knowledge"]
    assert [row["type"] for row in rows] == ["conflicting citation"] and "also retracted" in rows[0]["evidence"]
    assert [s["action"] for s in suggestions(manuscript) if s.get("key") == "schryen2021knowledge"] == \
        ["remove-entry"]



def test_two_problems_of_one_entry_are_one_row_and_removing_it_leaves_every_other_entry(manuscript):
    bib = (manuscript / "references.bib").read_text()
    fabricated = bib[bib.index("@article{smith2022"):]
    (manuscript / "references.bib").write_text(fabricated + "\n" + bib[:bib.index("@article{smith2022")])
    (manuscript / "draft.md").write_text((manuscript / "draft.md").read_text().replace(" [@smith2022fabricated]", ""))
    run(manuscript)
    rows = [p for p in problems(manuscript, 1) if p.get("key") == "smith2022fabricated"]
    assert len(rows) == 1 and "also uncited entry" in rows[0]["evidence"]
    removals = [s["id"] for s in suggestions(manuscript) if s["action"] == "remove-entry"]
    assert len(removals) == 1
    accept(manuscript, removals)
    run(manuscript, apply=True)
    assert re.findall(r"@article\{([^,]+)", (manuscript / "references.bib").read_text()) == [
        "wagner2021ai", "schryen2021knowledge", "grenier2020teleconsultation"]


def test_a_worded_sentence_another_suggestion_also_changes_is_refused_with_its_line(manuscript):
    text = (manuscript / "draft.md").read_text()
    (manuscript / "draft.md").write_text(text.replace("[@smith2022fabricated]", "[@smith2022fabricated; @ghost2020]"))
    run(manuscript)
    offered = suggestions(manuscript)
    ghost = next(s for s in offered if s["action"] == "remove-citation" and s["key"] == "ghost2020")
    remove = next(s for s in offered if s["action"] == "remove-entry" and s["key"] == "smith2022fabricated")
    (round_dir(manuscript, 1) / "confirm.yaml").write_text(
        f"accept:\n  - {remove['id']}\n  - id: {ghost['id']}\n    sentence: Language models draft summaries.\n")
    before = files(manuscript)
    with pytest.raises(SitegenError, match=rf"confirm.yaml:3: {ghost['id']} words the sentence on line \d+"):
        run(manuscript, apply=True)
    assert files(manuscript) == before
    # without wording, both edits of the one sentence are made in turn
    accept(manuscript, [remove["id"], ghost["id"]])
    run(manuscript, apply=True)
    assert "included studies." in (manuscript / "draft.md").read_text()
    assert not {"smith2022fabricated", "ghost2020"} & set(claims.cited_keys((manuscript / "draft.md").read_text()))


# --------------------------------------------------------------------------- 3. one citation grammar for editing


@pytest.mark.parametrize(("sentence", "left"), [
    ("As described by @smith.", "As described by."),
    ("Models draft it \\cite{smith}.", "Models draft it."),
    ("Models draft it \\citep[p. 2]{wagner, smith}.", "Models draft it \\citep[p. 2]{wagner}."),
    ("Models draft it (@smith).", "Models draft it."),
    ("Models draft it ([@smith]).", "Models draft it."),
    ("Models draft it [see @wagner, p. 3; @smith, p. 4].", "Models draft it [see @wagner, p. 3]."),
    ("Models draft it [@smith; -@wagner].", "Models draft it [-@wagner]."),
    ("Models draft it [@{smith}].", "Models draft it."),
    ("Write to jane@smith.org, not @smith2.", "Write to jane@smith.org, not @smith2."),
])
def test_removing_a_key_takes_out_every_form_of_its_citation(sentence, left):
    assert claims.remove_key(sentence, "smith") == left
    assert "smith" not in claims.cited_keys(claims.remove_key(sentence, "smith"))


def test_renaming_a_key_keeps_each_citation_form():
    assert claims.rename_key("A [-@smith, p. 2] and @smith and \\citet{a, smith}.", "smith", "lala2023") == \
        "A [-@lala2023, p. 2] and @lala2023 and \\citet{a, lala2023}."


@pytest.mark.parametrize("variant", ["as described by @smith2022fabricated.", "\\cite{smith2022fabricated}."])
def test_removing_an_entry_cited_in_text_or_by_latex_takes_the_citation_out(manuscript, variant):
    text = (manuscript / "draft.md").read_text()
    (manuscript / "draft.md").write_text(text.replace("[@smith2022fabricated].", variant))
    run(manuscript)
    [remove] = [s["id"] for s in suggestions(manuscript) if s["action"] == "remove-entry"]
    accept(manuscript, [remove])
    run(manuscript, apply=True)
    assert "smith2022fabricated" not in (manuscript / "draft.md").read_text()


def test_an_entry_still_cited_outside_the_prose_is_not_removed(manuscript):
    text = (manuscript / "draft.md").read_text()
    (manuscript / "draft.md").write_text(text.replace("```text", "| tool | source |\n| --- | --- |\n"
                                                      "| LLM | [@smith2022fabricated] |\n\n```text"))
    run(manuscript)
    [remove] = [s["id"] for s in suggestions(manuscript) if s["action"] == "remove-entry"]
    accept(manuscript, [remove])
    before = files(manuscript)
    with pytest.raises(SitegenError, match=r"still cites @smith2022fabricated on line 24, outside.*nothing was changed"):
        run(manuscript, apply=True)
    assert files(manuscript) == before


# --------------------------------------------------------------------------- 4. the apply is one unit


def test_an_apply_interrupted_between_the_bib_and_the_draft_is_finished_by_the_next_run(manuscript, monkeypatch):
    run(manuscript)
    [cite] = [s for s in suggestions(manuscript) if s["action"] == "cite-candidate"]
    accept(manuscript, [cite["id"]])
    real_write = loop_module.atomic_write

    def full_disk(path, data, **options):
        if path == manuscript / "draft.md":
            raise OSError(28, "No space left on device", str(path))
        return real_write(path, data, **options)

    monkeypatch.setattr(loop_module, "atomic_write", full_disk)
    with pytest.raises(OSError):
        run(manuscript, apply=True)
    assert cite["new_key"] in (manuscript / "references.bib").read_text()
    assert (round_dir(manuscript, 1) / "applying.json").is_file()
    assert not (round_dir(manuscript, 1) / "applied.json").exists()
    monkeypatch.setattr(loop_module, "atomic_write", real_write)
    result = run(manuscript, apply=True)
    assert result.applied.accepted == [cite["id"]]
    assert (manuscript / "references.bib").read_text().count("{" + cite["new_key"] + ",") == 1
    assert f"[@{cite['new_key']}]" in (manuscript / "draft.md").read_text()
    assert not (round_dir(manuscript, 1) / "applying.json").exists()


@pytest.mark.parametrize("name", ["paper", "pa\nper"])
def test_an_interrupted_apply_is_not_finished_over_a_file_changed_since(manuscript, monkeypatch, name):
    # Each refusal is one line, naming the journal and the draft as every message shows a path (shown_path).
    manuscript = manuscript.rename(manuscript.with_name(name))
    run(manuscript)
    [cite] = [s for s in suggestions(manuscript) if s["action"] == "cite-candidate"]
    accept(manuscript, [cite["id"]])
    real_write = loop_module.atomic_write
    monkeypatch.setattr(loop_module, "atomic_write", lambda path, data, **o: (_ for _ in ()).throw(OSError("crash"))
                        if path == manuscript / "draft.md" else real_write(path, data, **o))
    with pytest.raises(OSError):
        run(manuscript, apply=True)
    monkeypatch.setattr(loop_module, "atomic_write", real_write)
    (manuscript / "draft.md").write_text("# Rewritten by hand\n")
    with pytest.raises(SitegenError, match="draft.md\"? changed while round 1's confirmation was being applied") as refused:
        run(manuscript, apply=True)
    assert (manuscript / "draft.md").read_text() == "# Rewritten by hand\n"
    journal = round_dir(manuscript, 1) / "applying.json"
    assert f"recorded in {shown_path(journal)})" in str(refused.value) and "\n" not in str(refused.value)
    journal.write_text("[]")
    with pytest.raises(SitegenError, match="is not an apply journal") as refused:
        run(manuscript, apply=True)
    assert str(refused.value).startswith(shown_path(journal)) and "\n" not in str(refused.value)


def test_a_new_key_taken_since_the_round_is_refused_at_apply(manuscript):
    run(manuscript)
    [cite] = [s for s in suggestions(manuscript) if s["action"] == "cite-candidate"]
    accept(manuscript, [cite["id"]])
    (manuscript / "references.bib").write_text((manuscript / "references.bib").read_text() +
                                              f"\n@misc{{{cite['new_key']},\n  title = {{Added by hand}},\n}}\n")
    before = files(manuscript)
    with pytest.raises(SitegenError, match=rf"confirm.yaml:1: {cite['id']}: the key '{cite['new_key']}' is in "
                                           "references.bib already"):
        run(manuscript, apply=True)
    assert files(manuscript) == before


# --------------------------------------------------------------------------- 9. escaping


def test_hostile_keys_and_titles_are_escaped_in_every_markdown_file(manuscript):
    text = (manuscript / "draft.md").read_text().replace(
        "Language models can also", "Models cite [@{<img src=x onerror=alert(1)>}] too. Language models can also")
    (manuscript / "draft.md").write_text(text)
    bib = (manuscript / "references.bib").read_text()
    bib = bib.replace("grenier2020teleconsultation", "gren<script>alert(1)</script>")
    bib = bib.replace("smith2022fabricated,", "smith`|<i>x</i>,").replace("Smith, Jane", "Smi`th|<b>, Jane")
    bib = bib.replace("{Large language models write systematic review summaries}",
                      "{Large `models` | <script>x</script> [click](javascript:alert(1)) summaries}")
    (manuscript / "references.bib").write_text(bib)
    run(manuscript)
    folder = round_dir(manuscript, 1)
    for name in ("problems.md", "queries.md", "revision-suggestions.md", "../final-summary.md"):
        rendered = re.sub(r"(`+).*?\1", "", (folder / name).read_text())  # a code span shows HTML as text
        assert not re.search(r"<(script|img|i|b)\b", rendered), name
        assert "](javascript" not in rendered, name
        for line in rendered.splitlines():  # no cell of a table row broken by a pipe from the data
            if line.startswith("| P"):
                assert len(re.findall(r"(?<!\\)\|", line)) == 6, line
    queries = (folder / "queries.md").read_text()
    assert re.search(r"``[^`]*Smi`th[^`]*``", queries)  # a backtick in a code span needs a longer fence


# --------------------------------------------------------------------------- 10. encodings


@pytest.mark.parametrize(("name", "data", "message"), [
    ("draft.md", "Caf\xe9 rose by 40% in 2020.\n".encode("latin-1"), r"draft.md:1: byte 3 \(0xe9\) is not UTF-8"),
    ("draft.md", b"Text increased by 40%\x00 here.\n", r"draft.md:1: the file holds a NUL byte"),
    ("references.bib", "@misc{a,\n  title = {Par\xe9},\n}\n".encode("latin-1"), r"references.bib:2: byte 23"),
])
def test_a_file_that_is_not_utf8_text_is_refused_naming_it(manuscript, cli_with_mocks, name, data, message):
    (manuscript / name).write_bytes(data)
    result = cli_with_mocks.invoke(cli, ["loop", str(manuscript), "--topic", TOPIC])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert re.search(message, result.output), result.output
    assert not (manuscript / "output").exists()


def test_a_confirmation_that_is_not_utf8_is_refused_naming_its_line(manuscript):
    run(manuscript)
    (round_dir(manuscript, 1) / "confirm.yaml").write_bytes("accept: [S1]\n# caf\xe9\n".encode("latin-1"))
    with pytest.raises(SitegenError, match=r"confirm.yaml:2: byte 18"):
        run(manuscript, apply=True)


# --------------------------------------------------------------------------- 11. symlinks and line endings


def test_a_symlinked_draft_is_refused_at_apply_and_left_a_link(manuscript, tmp_path):
    real = tmp_path / "real-draft.md"
    real.write_bytes((manuscript / "draft.md").read_bytes())
    (manuscript / "draft.md").unlink()
    (manuscript / "draft.md").symlink_to(real)
    run(manuscript)
    [cite] = [s["id"] for s in suggestions(manuscript) if s["action"] == "cite-candidate"]
    accept(manuscript, [cite])
    with pytest.raises(SitegenError, match="draft.md is a symbolic link"):
        run(manuscript, apply=True)
    assert (manuscript / "draft.md").is_symlink()


def test_crlf_files_keep_their_line_endings_byte_for_byte(manuscript):
    for name in ("draft.md", "references.bib"):
        (manuscript / name).write_bytes((manuscript / name).read_bytes().replace(b"\n", b"\r\n"))
    before = (manuscript / "draft.md").read_bytes()
    run(manuscript)
    [cite] = [s for s in suggestions(manuscript) if s["action"] == "cite-candidate"]
    accept(manuscript, [cite["id"]])
    run(manuscript, apply=True)
    draft, bib = (manuscript / "draft.md").read_bytes(), (manuscript / "references.bib").read_bytes()
    assert draft == before.replace(b"than half.", f"than half [@{cite['new_key']}].".encode())
    assert bib.count(b"\n") == bib.count(b"\r\n")


# --------------------------------------------------------------------------- 5-8. the claim check


def test_chinese_sentences_split_at_full_width_stops_and_claims_are_found():
    text = ("# 引言\n\n人工智能工具已用于文献综述[@wagner2021ai]。自动筛选工具将标题和摘要筛选的工作量降低了一半以上。"
            "我们的研究使用了这些工具！\n\n# 参考文献\n\n1. 王明。研究表明筛选工作量降低了50%。\n")
    read = claims.sentences(text)
    assert [s.text for s in read] == ["人工智能工具已用于文献综述[@wagner2021ai]。",
                                      "自动筛选工具将标题和摘要筛选的工作量降低了一半以上。", "我们的研究使用了这些工具！"]
    review = claims.check(text, ["wagner2021ai"])
    assert [(f.kind, f.sentence.number) for f in review.findings] == [("unsupported claim", 2)]
    assert loop_module.keywords(read[1].text, 4)  # a Chinese claim still gets a query


@pytest.mark.parametrize("heading", ["# Literaturverzeichnis", "## Références", "# 参考文献", "**References**",
                                     "References\n==========", "## 3. Bibliography"])
def test_reference_lists_in_several_languages_and_forms_are_not_read(heading):
    text = f"# Intro\n\nTools help here [@a].\n\n{heading}\n\nSmith (2020). Studies have shown 50% more.\n"
    assert [s.text for s in claims.sentences(text)] == ["Tools help here [@a]."]


@pytest.mark.parametrize("draft", [
    # exported as plain text (pandoc -t plain): no heading markup, paragraphs between blank lines
    "Introduction\n\nTools help here [@a].\n\nREFERENCES\n\n1. Smith J. Models increase the risk of errors. "
    "Nature. 2022;5:1.\n",
    # Word's "plain text": one line per paragraph, no blank line between them
    "Introduction\nTools help here [@a].\n参考文献：\nSmith J. Models increase the risk of errors. Nature 2022.\n"])
def test_a_plain_line_naming_the_reference_list_ends_the_prose(draft):
    # A draft exported from Word heads its references with a plain line: each reference was read as prose, and
    # one naming an effect ("increase the risk of") became an unsupported claim to search and cite.
    assert not [s.text for s in claims.sentences(draft) if "Smith" in s.text]
    assert not [f for f in claims.check(draft, ["a"]).findings]


def test_a_line_reading_references_inside_a_wrapped_sentence_is_prose():
    text = "Tools help here [@a]. The works are listed in the\nReferences\nsection and reduce the risk of errors.\n"
    assert [s.text for s in claims.sentences(text)][1] == \
        "The works are listed in the References section and reduce the risk of errors."


def test_an_unclosed_bracket_does_not_swallow_the_rest_of_the_paragraph():
    text = "Intro (an unclosed aside. Screening time fell by 40% in trials. Tools are used (often) now.\n"
    assert [s.text for s in claims.sentences(text)] == [
        "Intro (an unclosed aside.", "Screening time fell by 40% in trials.", "Tools are used (often) now."]


def test_structures_that_are_not_prose_and_list_items_without_a_stop():
    text = ("\ufeff---\ntitle: Screening time fell by 40% with tools\n---\n\n"
            "- Screening time fell by 40% with tools\n- Extraction is supported too [@a].\n\n"
            "<!-- a comment\nStudies have shown 50% more.\n-->\n\n"
            "tool | share\n--- | ---\nLLM | 50% more than before\n\n"
            "~~~\nx = 90% faster than before\n~~~\n")
    assert [s.text for s in claims.sentences(text)] == ["Screening time fell by 40% with tools",
                                                        "Extraction is supported too [@a]."]


def test_an_entry_cited_only_in_a_table_or_quote_is_not_uncited():
    text = "# Intro\n\nProse here [@a].\n\n| x | [@b] |\n| - | - |\n\n> As @c wrote.\n"
    assert [(f.kind, f.key) for f in claims.check(text, ["a", "b", "c", "d"]).findings] == [("uncited entry", "d")]


# --------------------------------------------------------------------------- 12. linear claim check


def test_a_600_kb_paragraph_is_checked_in_linear_time():
    # A guard against a hang, not a speed figure: checked in about 0.4 s, where a quadratic reading took minutes.
    text = "Intro (unclosed bracket here.\n" + "".join(
        f"Screening time fell by {i}% in trial number {i} of this kind [@a{i}].\n" for i in range(9000))
    assert len(text) > 600_000
    started = time.perf_counter()
    review = claims.check(text, [])
    assert time.perf_counter() - started < 20
    assert review.sentences == 9001


SPACES = " " * 300_000  # a run of spaces pasted into a draft, not followed by what a pattern seeks


def test_a_heading_holding_a_long_run_of_spaces_is_read_in_linear_time():
    """An ATX heading's closing #s were matched after its text (`(.*?)\\s*#*\\s*$`), so a run of spaces in it was
    split every way from each of its characters: 4,000 spaces took for ever."""
    text = f"# Methods{SPACES}and more ##\n\nScreening time fell by 20% in the trial.\n\n# References{SPACES}x\n\nMore."
    assert [(s.section, s.text) for s in claims.sentences(text)] == [
        (f"Methods{SPACES}and more", "Screening time fell by 20% in the trial."), (f"References{SPACES}x", "More.")]



@pytest.mark.parametrize("backticks", ["`" * 300_000, " ".join("`" * length for length in range(3, 775))])
def test_a_line_of_backticks_is_read_in_linear_time(backticks):
    """Inline code was found by `(`+)(.+?)\\1`, tried from each backtick with each shorter length against every
    later place: a line of 4,000 backticks took 5 s, a pasted 300 KB one for ever. A run is now paired with the
    next run of its length (CommonMark), so a run nothing closes is text and the code spans after it are code."""
    text = f"Screening time fell by 20% {backticks} in the trial [@a] and `@b` ``c ` @d``.\n"
    review = claims.check(text, ["a", "b"])
    assert [s.keys for s in review.citing] == [("a",)]
    assert [(f.kind, f.key) for f in review.findings] == [("uncited entry", "b")]


def test_a_line_of_spaces_after_a_paragraph_is_read_in_linear_time():
    """Each line after a paragraph's first is tried as a table's delimiter row (|---|---|), whose optional pipes
    stood between two runs of spaces: a line of 300 KB of spaces, or a row of dashes followed by them, was split
    every way, for ever."""
    text = (f"Screening time fell by 20%\n{SPACES}x in the trial.\nIt rose\n---|---{SPACES}x\n\n"
            f"Rate | Trial\n---|:---:{SPACES}\n20% | 1\n")  # a table, its delimiter row ending in spaces
    assert [s.text for s in claims.sentences(text)] == [
        "Screening time fell by 20% x in the trial.", f"It rose ---|---{SPACES}x"]


def test_a_bold_line_followed_by_a_long_run_of_spaces_is_read_in_linear_time():
    """A bold line naming the reference list ("**References**") ends it; the spaces after the bold text stood on
    either side of an optional colon, so a run of them no colon or line end followed was split every way."""
    text = (f"\n**Results**{SPACES}x rose by 20% in the trial.\n\n**References**{SPACES}\n\n"
            "Smith J. Screening time fell by 20%. Journal 2020.\n")
    assert [s.text for s in claims.sentences(text)] == [f"**Results**{SPACES}x rose by 20% in the trial."]


@pytest.mark.parametrize("sentence, edited", [
    (f"Rates fell{SPACES}x [@a; @b].", f"Rates fell{SPACES}x [@b]."),
    (f"Rates fell @b{SPACES}x @a.", f"Rates fell @b{SPACES}x."),
    (f"Rates fell{SPACES}x \\cite{{a}}.", f"Rates fell{SPACES}x."),
    (f"Rates fell ({SPACES}x) @a.", f"Rates fell ({SPACES}x)."),
    (f"Rates fell ({SPACES}@a{SPACES}).", "Rates fell."),
])
def test_a_citation_is_taken_out_of_a_sentence_holding_a_long_run_of_spaces_in_linear_time(sentence, edited):
    """What `remove_key` takes out (a bracketed citation, an in-text @key, a \\cite, parentheses left empty) was
    matched with the spaces before it from each space of a run: a sentence holding 300 KB of them took for ever."""
    assert claims.remove_key(sentence, "a") == edited


@pytest.mark.parametrize("pasted", [
    "\\cite{" * 50_000, "\\cite[" * 50_000, "\\citep[p. 3]{" * 25_000, "\\" + "cite" * 75_000,
    "\\cites(" * 43_000, "\\autocites(x)[" * 22_000,
])
def test_a_pasted_line_of_unclosed_latex_citations_is_read_in_linear_time(pasted):
    """A \\cite's keys were read up to the next } and its notes up to the next ], so from every \\cite{ or \\cite[
    nothing closed the rest of a pasted line was read (300 KB: minutes), and a word holding "cite" again and again
    was split at each of them. A key list holds no brace and a note no bracket: the citations around still count."""
    text = f"Studies show a rise \\citep{{a}} {pasted} x [@b].\n"
    review = claims.check(text, ["a", "b"])
    assert [s.keys for s in review.citing] == [("b", "a")] and not review.findings
    assert claims.remove_key(text, "a") == f"Studies show a rise {pasted} x [@b].\n"
    assert claims.rename_key(text, "a", "c") == f"Studies show a rise \\citep{{c}} {pasted} x [@b].\n"


def test_a_latex_citation_over_two_lines_or_with_a_command_in_its_note_is_read():
    # LaTeX reads a key list over a line break and a note holding a command; the apply edits the draft's own lines.
    text = "Studies show a rise \\citep[see \\S~2][]{a,\n  b} and \\autocites[p.~\\emph{3}]{c}{d}.\n"
    assert claims.cited_keys(text) == ("a", "b", "c", "d")
    assert claims.remove_key(text, "b") == "Studies show a rise \\citep[see \\S~2][]{a} and \\autocites[p.~\\emph{3}]{c}{d}.\n"

@pytest.mark.parametrize("pasted", ["de " * 100_000, "van  " * 60_000, "(" + "de " * 100_000 + ")"])
def test_a_pasted_run_of_name_particles_is_read_in_linear_time(pasted):
    """An author-year citation's name may follow particles ("de la Cruz et al. (2019)"); as many as came were read,
    so a run of them no name followed was read to its end again from each of them: a pasted line of 300 KB of
    "de de de" took a quarter of an hour to check. A name holds at most four."""
    review = claims.check(f"Studies show a rise {pasted} x, as de la Cruz et al. (2019) found.\n", [])
    [sentence] = review.citing
    assert sentence.other_citations == ("de la Cruz et al. (2019)",) and not review.findings


@pytest.mark.parametrize("pasted", ["A-" * 150_000, "O’" * 150_000, "(" + "Smith-" * 50_000 + ")"])
def test_a_pasted_hyphenated_word_of_capitals_is_read_in_linear_time(pasted):
    """A name of an author-year citation may start after a hyphen or an apostrophe ("al-Ahmad (2019)"); it was read
    to the end of its word from every capital of it and given back a character at a time, so a pasted line of
    300 KB of "A-A-A-" took twenty minutes to check. A name is read to at most a hundred characters, never given back."""
    review = claims.check(f"Studies show a rise {pasted} x, as Smith-Jones et al. (2019) and al-Ahmad (2020) found.\n", [])
    [sentence] = review.citing
    assert sentence.other_citations == ("Smith-Jones et al. (2019)", "Ahmad (2020)") and not review.findings


# --------------------------------------------------------------------------- 13. rounds counted by folders


def test_a_deleted_problems_file_cannot_force_a_third_round(manuscript):
    run(manuscript)
    accept(manuscript, [])
    run(manuscript)
    accept(manuscript, [], number=2)
    (round_dir(manuscript, 1) / "problems.md").unlink()
    with pytest.raises(SitegenError, match="1/problems.md is missing but a later round exists"):
        run(manuscript)
    assert not round_dir(manuscript, 3).exists()


def test_a_gap_in_the_round_folders_is_refused(manuscript):
    run(manuscript)
    round_dir(manuscript, 1).rename(round_dir(manuscript, 2))
    with pytest.raises(SitegenError, match="holds the round folders 2"):
        run(manuscript)


# --------------------------------------------------------------------------- 14. confirm.yaml and duplicates


def test_a_key_given_twice_in_the_confirmation_is_refused_with_its_line(manuscript):
    run(manuscript)
    (round_dir(manuscript, 1) / "confirm.yaml").write_text("accept: [S1]\naccept: [S2]\n")
    with pytest.raises(SitegenError, match=r"confirm.yaml:2: .*'accept' is given twice"):
        run(manuscript, apply=True)


def test_a_worded_sentence_must_cite_the_new_work(manuscript):
    run(manuscript)
    [cite] = [s["id"] for s in suggestions(manuscript) if s["action"] == "cite-candidate"]
    (round_dir(manuscript, 1) / "confirm.yaml").write_text(
        f"accept:\n  - id: {cite}\n    sentence: Automated screening halves the workload.\n")
    with pytest.raises(SitegenError, match=rf"confirm.yaml:2: {cite}'s `sentence:` does not cite"):
        run(manuscript, apply=True)


def test_one_work_suggested_for_two_sentences_is_added_once(manuscript):
    text = (manuscript / "draft.md").read_text()
    (manuscript / "draft.md").write_text(text.replace(
        "more\nthan half.", "more\nthan half.\n\nAutomated screening reduces abstract screening workload in trials."))
    run(manuscript)
    cites = [s for s in suggestions(manuscript) if s["action"] == "cite-candidate"]
    assert len(cites) == 2 and cites[0]["record"]["DOI"] == cites[1]["record"]["DOI"]
    accept(manuscript, [s["id"] for s in cites])
    run(manuscript, apply=True)
    bib = (manuscript / "references.bib").read_text()
    assert bib.lower().count("doi = {" + cites[0]["record"]["DOI"].lower()) == 1
    assert (manuscript / "draft.md").read_text().count(f"[@{cites[0]['new_key']}]") == 2


# --------------------------------------------------------------------------- 15. summary, --topic, --out


def test_the_summary_says_when_searches_failed(manuscript):
    class Down(Providers):
        def __call__(self, request):
            if request.url.host == "api.openalex.org":
                return httpx.Response(503, text="down")
            return super().__call__(request)
    run(manuscript, Down())
    summary = (round_dir(manuscript, 1).parent / "final-summary.md").read_text()
    assert "Only checked, not searched" in summary and "P1" in summary


def test_a_blank_topic_is_a_usage_error(manuscript):
    result = CliRunner().invoke(cli, ["loop", str(manuscript), "--topic", "   "])
    assert result.exit_code == 2 and "--topic" in result.output
    assert not (manuscript / "output").exists()


def test_a_relative_out_is_in_the_manuscript_folder(manuscript, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    run(manuscript, out=Path("rounds"))
    assert (manuscript / "rounds" / topic_slug(TOPIC) / "1" / "problems.md").is_file()
    assert not (tmp_path / "rounds").exists()


@pytest.mark.parametrize("sentence, keys", [
    ("See the summary at <https://medium.com/@drsmith/post> and [@doe2020].", ("doe2020",)),
    ("A post [blog](https://medium.com/@jones/post) says so, as ?user=@x does not.", ()),
    (r"Contact me\@example.org for data, as @smith2019 shows.", ("smith2019",)),
    (r"As \cites[p. 3]{multi1}[p. 5]{multi2} and \autocites{brown_2016}{doe:2017a} show.",
     ("multi1", "brown_2016", "multi2", "doe:2017a")),
])
def test_only_citations_are_read_as_citations(sentence, keys):
    # An @ in a web address or escaped (\@, a literal @ to pandoc) cites nothing, so the loop never suggests
    # removing it (which cut the address); every key group of a biblatex multicite is read.
    from sitegen.manuscript.claims import cited_keys
    assert cited_keys(sentence) == keys


def test_nocite_star_puts_every_entry_in_use():
    from sitegen.manuscript.claims import check
    review = check(r"Rats remember objects in context \cite{a}. \nocite{*}", ["a", "b", "c"])
    assert [(finding.kind, finding.key) for finding in review.findings] == []


@pytest.mark.parametrize("sentence, mark", [
    ("Automated screening reduces the workload by 50% [4].", "[4]"),
    ("Automated screening reduces the workload by 50% [1-3, 7].", "[1-3, 7]"),
    ("Automated screening reduces the workload by 50% [see 3, p. 4].", "[see 3, p. 4]"),
    ("Automated screening reduces the workload by 50%.^2,3^", "^2,3^"),
    ("Automated screening reduces the workload by 50%.¹", "¹"),
    ("Automated screening reduces the workload by 50%[^note].", "[^note]"),
    ("Automated screening outperforms manual screening (Smith et al., 2020; Jones 2019a).",
     "(Smith et al., 2020; Jones 2019a)"),
    ("Automated screening improves recall (see Smith & Jones, 2020, p. 12).", "(see Smith & Jones, 2020, p. 12)"),
    ("Smith and Jones (2019a) showed that automated screening improves recall.", "Smith and Jones (2019a)"),
])
def test_a_claim_cited_in_a_numbered_author_year_or_footnote_style_is_cited_not_unsupported(sentence, mark):
    # A draft in Vancouver, APA or a notes style cites every claim: calling them unsupported, and every entry
    # uncited (then suggesting to remove it), was wrong on each count
    review = claims.check(f"# Results\n\n{sentence}\n", ["smith2020", "jones2019"])
    assert not review.findings
    [read] = review.citing
    assert read.other_citations == (mark,) and review.other_citations == 1


@pytest.mark.parametrize("sentence", [
    "Screening time increased by 20% in 2019.",
    "Screening time increased by 20% (in 2019).",
    "Screening time increased by 20% (March 2020).",
    "The covered area increases to 5 cm².",
])
def test_a_year_or_a_unit_is_no_citation(sentence):
    review = claims.check(f"# Results\n\n{sentence}\n", [])
    assert [finding.kind for finding in review.findings] == ["unsupported claim"]


def test_a_numbered_citation_after_the_full_stop_ends_the_sentence_it_cites():
    text = "# Results\n\nPrevious studies have shown a benefit.[2,3] Evidence suggests it improves recall.\n"
    assert [s.text for s in claims.sentences(text)] == ["Previous studies have shown a benefit.[2,3]",
                                                        "Evidence suggests it improves recall."]


def test_a_numbered_draft_is_not_told_to_remove_its_entries(manuscript):
    draft = manuscript / "draft.md"
    draft.write_text(re.sub(r"\s*\[@[^\]]*\]", " [1]", draft.read_text()))
    run(manuscript)
    assert "uncited entry" not in {row["type"] for row in problems(manuscript, 1)}
    assert "sentences cite in a style naming no .bib key" in (round_dir(manuscript, 1) / "problems.md").read_text()


def test_a_footnote_citing_by_key_is_read_and_leaves_no_entry_unjudged():
    # A pandoc draft whose footnote cites by key: the note's label "[^1]:" is no citation, and a reference to the
    # note cites what the note cites, so an entry nothing cites is still found (it was not, while any note existed)
    text = ("# Results\n\nSleep improves recall.[^1] Rats remember objects [@doe2020].\n\n"
            "[^1]: As shown by @smith2019, sleep consolidates memory.\n")
    review = claims.check(text, ["doe2020", "smith2019", "unused2021"])
    assert [(finding.kind, finding.key) for finding in review.findings] == [("uncited entry", "unused2021")]
    note = next(sentence for sentence in review.citing if sentence.note == "1")
    assert (note.text, note.keys, note.other_citations, note.line) == (
        "As shown by @smith2019, sleep consolidates memory.", ("smith2019",), (), 5)
    assert review.other_citations == 0


def test_a_footnote_citing_in_words_may_name_any_entry():
    text = ("# Results\n\nSleep improves recall.[^a]\n\n"
            "[^a]: J. Smith, Sleep and memory (Oxford, 2019), 33.\n")
    review = claims.check(text, ["smith2019"])
    assert review.findings == ()  # smith2019 is not called uncited
    assert review.other_citations == 2  # the reference to the note, and the note's "(Oxford, 2019)"


def test_the_entry_a_cited_entrys_crossref_names_is_in_use(manuscript):
    # A paper in its proceedings (BibTeX's crossref): the proceedings entry is listed by BibTeX and gives the paper
    # its year and booktitle (never its DOI), so the loop never calls it uncited and suggests removing it
    bib = manuscript / "references.bib"
    bib.write_text(bib.read_text() + "\n@inproceedings{doe2019paper,\n  author = {Doe, Jane},\n"
                   "  title = {Screening with active learning},\n  doi = {10.5555/paper.2019},\n"
                   "  crossref = {Proc2019},\n}\n\n@proceedings{proc2019,\n  title = {Proceedings of Screening 2019},\n"
                   "  year = {2019},\n  publisher = {ACM},\n  doi = {10.5555/proc.2019},\n}\n\n@proceedings{unused2018,\n"
                   "  title = {Proceedings of Screening 2018},\n  year = {2018},\n  doi = {10.5555/proc.2018},\n}\n")
    draft = manuscript / "draft.md"
    draft.write_text(draft.read_text().replace("[@wagner2021ai]", "[@wagner2021ai; @doe2019paper]", 1))
    run(manuscript)
    findings = json.loads((round_dir(manuscript, 1) / "claim-review.json").read_text())["findings"]
    assert [finding["key"] for finding in findings if finding["kind"] == "uncited entry"] == ["unused2018"]
    checks = json.loads((round_dir(manuscript, 1) / "citation-review.json").read_text())
    [paper] = [check for check in checks if check["key"] == "doe2019paper"]
    assert paper["crossref"] == "proc2019"
    assert paper["record"]["issued"] == {"date-parts": [[2019]]}
    assert paper["record"]["container-title"] == "Proceedings of Screening 2019"
    assert paper["record"]["DOI"] == "10.5555/paper.2019"


# --------------------------------------------------------------------------- LaTeX drafts

LATEX_DRAFT = r"""\documentclass{article}
% Studies have shown that screening tools reduce the workload by 50%.
\begin{document}
\section{Introduction}\label{sec:intro}
  Literature reviews take a large share of researchers' time \cite{wagner2021ai}.
  A typology of review types helps \citep[p.~3]{schryen2021knowledge}.
  Automated screening tools reduce the workload of screening by more than half.
\begin{equation}
  y = 0.5 x + 1.25
\end{equation}
\begin{table}
  \begin{tabular}{ll} Tool & 50\% faster than before \\ \end{tabular}
\end{table}
\begin{itemize}
  \item Surveys asked people about teleconsultation \cite{grenier2020teleconsultation}.
  \item Language models draft summaries~\cite{smith2022fabricated}.
\end{itemize}
\section*{References}
Smith J. Language models increase the risk of errors.
\end{document}
"""


def test_a_latex_draft_is_read_by_latex_rules():
    # A .tex draft was read as Markdown: its comments and preamble were prose (a commented-out claim was a problem to
    # search and cite), an indented paragraph was code, a \section no heading, an equation's 0.5 a claim's figure.
    read = claims.sentences(LATEX_DRAFT, latex=True)
    assert [(s.section, s.line, s.text) for s in read] == [
        ("Introduction", 5, "Literature reviews take a large share of researchers' time \\cite{wagner2021ai}."),
        ("Introduction", 6, "A typology of review types helps \\citep[p.~3]{schryen2021knowledge}."),
        ("Introduction", 7, "Automated screening tools reduce the workload of screening by more than half."),
        ("Introduction", 15, "Surveys asked people about teleconsultation \\cite{grenier2020teleconsultation}."),
        ("Introduction", 16, "Language models draft summaries~\\cite{smith2022fabricated}.")]
    assert all(LATEX_DRAFT[s.span[0]:s.span[1]] == s.text for s in read)  # spans are the draft's own
    review = claims.check(LATEX_DRAFT.replace(r"\begin{document}", r"\begin{document}% \cite{gone}"),
                          ["wagner2021ai", "schryen2021knowledge", "grenier2020teleconsultation",
                           "smith2022fabricated", "gone"], latex=True)
    assert [(f.kind, f.key, f.sentence.line if f.sentence else None) for f in review.findings] == [
        ("unsupported claim", None, 7), ("uncited entry", "gone", None)]  # a commented-out citation cites nothing


def test_a_latex_draft_is_revised_in_latex(manuscript):
    # Accepted on a .tex draft, a new citation went in as pandoc's "[@key]" (printed as it is by LaTeX), and a removed
    # "summaries~\cite{key}." left "summaries~." behind.
    (manuscript / "draft.md").unlink()
    (manuscript / "paper.tex").write_text(LATEX_DRAFT)
    run(manuscript, draft=Path("paper.tex"))
    offered = suggestions(manuscript)
    accept(manuscript, [next(s["id"] for s in offered if s["action"] == "cite-candidate"),
                        next(s["id"] for s in offered if s["action"] == "remove-entry")])
    run(manuscript, draft=Path("paper.tex"), apply=True)
    lines = (manuscript / "paper.tex").read_text().splitlines()
    assert lines[6] == "  Automated screening tools reduce the workload of screening by more than half~\\cite{lala2023paperqa}."
    assert lines[15] == "  \\item Language models draft summaries."
    assert "@lala2023paperqa" not in "\n".join(lines)


# --------------------------------------------------------------------------- advice the loop follows


def test_a_search_failed_in_a_round_with_problems_is_tried_again_as_the_loop_does_it(manuscript):
    # "run the round again later", the advice for a failed search, was one the loop refused: a round with problems is
    # never run twice (it waits for confirm.yaml), and no round follows the second.
    class SearchRateLimited(Providers):
        def __call__(self, request):
            if request.url.host == "api.openalex.org":
                self.requests.append(request)
                return httpx.Response(429, headers={"retry-after": "3600"}, text="slow down")
            return super().__call__(request)

    base = round_dir(manuscript, 1).parent
    run(manuscript, SearchRateLimited())
    for text in ((base / "1" / "revision-suggestions.md").read_text(), (base / "final-summary.md").read_text()):
        assert "run the round again" not in text
        assert "round 2 verifies and searches again once round 1's confirm.yaml lists what you accept" in text
    with pytest.raises(SitegenError, match="waiting for your decisions"):
        run(manuscript)  # what the old advice led to
    accept(manuscript, [])
    run(manuscript, SearchRateLimited())
    for text in ((base / "2" / "revision-suggestions.md").read_text(), (base / "final-summary.md").read_text()):
        assert "check by hand: the loop runs no round after round 2" in text
    assert "To re-check them: check by hand" in (base / "final-summary.md").read_text()  # the rate-limited entry


def test_an_entry_edited_since_the_round_is_not_replaced_or_removed_at_apply(manuscript):
    # A sentence changed since the round was refused, an entry was not: the one corrected by hand after round 1 (or
    # another .bib's under the same key) was removed or overwritten by the suggestion made for the entry as it was.
    run(manuscript)
    [remove] = [s["id"] for s in suggestions(manuscript) if s["action"] == "remove-entry"]
    bib = manuscript / "references.bib"
    bib.write_text(bib.read_text().replace("Journal of Imaginary Results", "Journal of Real Results"))
    accept(manuscript, [remove])
    before = files(manuscript)
    with pytest.raises(SitegenError, match=rf"confirm.yaml:1: {remove}: the entry 'smith2022fabricated' of "
                                           r"references.bib changed since the round was run.*nothing was changed"):
        run(manuscript, apply=True)
    assert files(manuscript) == before
    bib.write_text(bib.read_text().replace("  journal = {Journal of Real Results},\n",
                                           "  journal = {Journal of Imaginary Results},\n\n"))  # as it was, laid out anew
    run(manuscript, apply=True)
    assert "smith2022fabricated" not in bib.read_text()


def test_new_keys_of_many_works_of_one_base_are_numbered_in_linear_work(monkeypatch):
    """A new key was found by trying "-2", "-3"… from the start again for each work cited anew: quadratic in the works
    of one author, year and first word (a .bib of a hundred "smith2020effect-n" entries and many problems). Counted,
    not timed: each key tried is a look-up in the set of keys taken. The keys are the ones it gave before."""
    class Counted(set):
        probes = 0

        def __contains__(self, item):
            Counted.probes += 1
            return super().__contains__(item)

    work = {"type": "article-journal", "title": "Effect of things", "author": [{"family": "Smith", "given": "J"}],
            "issued": {"date-parts": [[2020]]}}
    sentence = claims.Sentence(section="Results", paragraph=1, number=1, line=1, text="A claim.", keys=(), span=(0, 8))
    rows = [loop_module.ProblemRow(id=f"P{n}", type="unsupported claim", location="Results", evidence="", action="",
                                   sentence=sentence) for n in range(1000)]
    dois = {row.id: [f"10.1234/{row.id.lower()}-{n}" for n in range(loop_module.CANDIDATES_PER_PROBLEM)] for row in rows}
    found = {row: [Record.model_validate({**work, "id": doi, "DOI": doi}) for doi in row_dois]
             for row, row_dois in dois.items()}
    bib_keys = {"smith2020effect", "other2019"} | {f"smith2020effect-{n}" for n in range(2, 302) if n != 7}
    monkeypatch.setattr(loop_module, "set", Counted, raising=False)  # the keys taken, a set the loop makes
    made = loop_module.suggestions_for(rows, {}, found, bib_keys)
    keys = [suggestion.new_key for suggestion in made]
    cited = sum(len(records) for records in found.values())
    assert keys == ["smith2020effect-7"] + [f"smith2020effect-{n}" for n in range(302, 302 + cited - 1)]
    assert Counted.probes < 2 * (cited + len(bib_keys))  # was about 2,600,000
