"""Hostile inputs: CSV cells that break rows, numbers Python cannot hold, files too big to
slurp, and symbolic links anywhere in the review. Each is refused with its file and line,
never a traceback, and nothing is written."""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import tree_bytes
from http_mocks import fetcher
from hypothesis import given, settings
from hypothesis import strategies as st
from test_check import append, check_reports, replace_line
from test_exports import record

from sitegen.errors import SitegenError
from sitegen.records.ids import normalise_doi
from sitegen.records.matching import journal_key, pages
from sitegen.records.model import CONTROL_CHARACTER
from sitegen.records.notices import notice_kind
from sitegen.records.titles import comparable_title
from sitegen.references import read_references
from sitegen.references.records import entry_record
from sitegen.review import parsing
from sitegen.review.parsing import parse_json, parse_yaml, read_json_lines
from sitegen.site.exports import FORMULA_STARTS, page_range, records_csv, records_ris, safe_cell, write_csv
from sitegen.sources import openalex
from sitegen.sources.snapshots import SnapshotStore

# --------------------------------------------------------------------------- CSV

PAYLOAD = "=cmd|' /C calc'!A0"
# Every line break some spreadsheet or other may honour, the lone CR first.
BREAKS = ["\r", "\n", "\r\n", "\u2028", "\u2029", "\x85", "\v", "\f", "\x1c", "\x1d", "\x1e"]


def spreadsheet_rows(text: str) -> int:
    """Rows as the most credulous spreadsheet counts them: any line break outside quotes ends one."""
    rows, quoted, previous = 0, False, ""
    for char in text:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "".join(BREAKS) and not (previous == "\r" and char == "\n"):
            rows += 1
        previous = char
    return rows


def assert_no_formula(rows: list[list[str]]) -> None:
    for row in rows:
        for cell in row:
            for line in [cell, *re.split(f"[{''.join(BREAKS)}]", cell)]:
                assert not line.startswith(FORMULA_STARTS), (cell, line)


@pytest.mark.parametrize("line_break", BREAKS, ids=[f"U+{ord(b[-1]):04X}" for b in BREAKS])
def test_a_line_break_in_a_title_cannot_start_a_row_or_a_formula(line_break):
    title = f"Innocent{line_break}{PAYLOAD}"
    if CONTROL_CHARACTER.search(line_break):  # no record can hold it: the writer itself is the last guard
        text = write_csv(["id", "title", "decision"], [["10.1234/abcd", title, "include"]])
        columns = {"title": 1, "decision": 2}
    else:
        text = records_csv([record(title=title)], {"10.1234/abcd": ("include", "")})
        columns = {"title": 1, "decision": 15}
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == 2 and len(rows[1]) == len(rows[0])
    assert spreadsheet_rows(text) == 2
    assert rows[1][columns["title"]] == f"Innocent{line_break}'{PAYLOAD}"
    assert rows[1][columns["decision"]] == "include"
    assert_no_formula(rows)


@pytest.mark.parametrize("line_break", [b for b in BREAKS if not CONTROL_CHARACTER.search(b)],
                         ids=lambda b: f"U+{ord(b[-1]):04X}")
def test_no_line_break_a_record_can_hold_starts_a_ris_tag_of_its_own(line_break):
    # RIS is read line by line and a reader may end a line at any of these (Python's splitlines() does): a
    # title, name or abstract carrying one must stay on its tag's line, or it could start a record of its own.
    injected = f"Innocent{line_break}ER  - {line_break}TY  - JOUR{line_break}TI  - Injected"
    text = records_ris([record(title=injected, abstract=injected)])
    lines = text.splitlines()
    assert [line[:6] for line in lines if line[:6] in ("TY  - ", "ER  - ")] == ["TY  - ", "ER  - "]
    assert all(re.match(r"[A-Z][A-Z0-9]  - ", line) for line in lines if line), lines


CELLS = st.lists(st.sampled_from(["a", " ", ",", '"', "'", *FORMULA_STARTS, *BREAKS]), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(CELLS | st.text(max_size=5), min_size=3, max_size=3), max_size=4))
def test_write_csv_round_trips_every_cell_and_neutralises_every_line(rows):
    text = write_csv(["a", "b", "c"], rows)
    parsed = list(csv.reader(io.StringIO(text, newline="")))
    assert len(parsed) == len(rows) + 1 == spreadsheet_rows(text)
    assert parsed[1:] == [[safe_cell(value) for value in row] for row in rows]
    assert_no_formula(parsed)
    for written, original in zip(parsed[1:], rows, strict=True):
        for cell, value in zip(written, original, strict=True):
            assert cell.replace("'", "") == value.replace("'", "")  # neutralising only adds quotes


# --------------------------------------------------------------------------- numbers

HUGE_INTEGER = "9" * 5000


def add_json_key(path: Path, lineno: int, number: str) -> None:
    """Give line `lineno` of a JSON-lines file one more key holding `number`, written as is."""
    line = path.read_text().splitlines()[lineno - 1]
    replace_line(path, lineno, line[:-1] + f',"zz":{number}}}')


def lineno_of(path: Path, pattern: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if re.search(pattern, line))


def spoil_number(review: Path, target: str, number: str) -> int:
    """Write `number` into `target` of the review; return the line it is on."""
    path = review / target
    if target.endswith(".jsonl"):
        add_json_key(path, 2, number)
        return 2
    if target.startswith("searches/"):
        path.write_text(re.sub(r'"run_count": \d+', f'"run_count": {number}', path.read_text()))
        return lineno_of(path, '"run_count"')
    if target == "state.json":
        path.write_text(f'{{\n  "schema_version": 1,\n  "digest": {{"max_kept": {number}}}\n}}\n')
        return 3
    if target == "protocol.md":
        replace_line(path, 2, f"version: {number}")
        return 2
    append(path, f"extra: {number}\n")  # review.yaml, evidence: refused before any field is looked at
    return len(path.read_text().splitlines())


NUMBER_FILES = ["review.yaml", "protocol.md", "searches/object-in-context.json", "records.jsonl", "ledger.jsonl",
                "snapshots/index.jsonl", "state.json", "evidence/wilson-2013-lec.yaml"]


@pytest.mark.parametrize("target", NUMBER_FILES)
@pytest.mark.parametrize("number, message", [(HUGE_INTEGER, "number too large"),
                                             ("-1e999", "not a finite number")], ids=["huge", "infinite"])
def test_a_number_python_cannot_hold_is_named_by_file_and_line(sitegen, example_copy, tmp_path, target, number,
                                                               message):
    if number == "-1e999" and target.endswith((".yaml", ".md")):
        number = "-1.0e+999"  # YAML 1.1 writes a float with a dot and a signed exponent
    line = spoil_number(example_copy, target, number)
    check_reports(sitegen, example_copy, target, line, message)
    out = tmp_path / "site"
    code, stdout, stderr = sitegen("build", example_copy, "--out", out)
    assert code == 1 and f"{target}:{line}" in stdout + stderr and "Traceback" not in stdout + stderr
    assert not out.exists()
    if target == "ledger.jsonl":
        code, stdout, stderr = sitegen("ledger", "verify", example_copy)
        assert code == 1 and f"ledger.jsonl:{line}" in stdout and message in stdout


@pytest.mark.parametrize("text, position", [
    ('{\n  "a": "1e999",\n  "b": [1, 2e308]\n}', (3, 12)),
    ('{"s": "\\"9", "n":\n' + HUGE_INTEGER + "}", (2, 1)),
])
def test_json_number_refusals_point_at_the_number_not_a_string_like_it(text, position):
    _, [problem] = parse_json(text, "x.json")
    assert (problem.line, problem.column) == position


@pytest.mark.parametrize("value", ["0x" + "f" * 4000, "0b" + "1" * 4300, ":".join(["59"] * 100_000),
                                   ".inf", "-.Inf", ".nan"])
def test_yaml_integers_in_any_base_are_bounded_and_nothing_is_infinite(value):
    # Base 60 (1:30:00) is also refused quickly, before its quadratic conversion.
    _, [problem] = parse_yaml(f"a: 1\nb: {value}\n", "x.yaml")
    assert (problem.line, problem.column, problem.code) == (2, 4, "number")


@pytest.mark.parametrize("value", ["!!timestamp 2024-13-45", "!!timestamp 99999-01-01", "!!bool maybe", "!!int ''",
                                   "!!int 0x", "!!float abc"])
def test_a_bad_explicitly_tagged_yaml_value_is_a_problem_not_a_traceback(sitegen, example_copy, value):
    path = example_copy / "evidence" / "wilson-2013-lec.yaml"
    append(path, f"extra: {value}\n")
    check_reports(sitegen, example_copy, "evidence/wilson-2013-lec.yaml", len(path.read_text().splitlines()),
                  "is not a valid")


def test_a_null_line_is_not_silently_dropped(sitegen, example_copy):
    replace_line(example_copy / "records.jsonl", 3, "null")
    check_reports(sitegen, example_copy, "records.jsonl", 3, "valid dictionary")


# --------------------------------------------------------------------------- huge files

# Less than twice the file: reading it whole and then decoding it cannot fit, while
# streaming holds one line (at most 64 MB) beside the interpreter.
ADDRESS_SPACE = 3 * 2**29


def limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.mark.parametrize("target", ["ledger.jsonl", "records.jsonl", "snapshots/index.jsonl"])
def test_a_900_megabyte_nul_file_is_refused_at_line_1_without_reading_it_whole(example_copy, target):
    path = example_copy / target
    original, before = path.read_bytes(), tree_bytes(example_copy)
    with path.open("wb") as handle:
        handle.truncate(900_000_000)  # sparse: no disk, no time
    spoiled = path.stat()
    result = subprocess.run([sys.executable, "-m", "sitegen", "check", str(example_copy)], capture_output=True,
                            text=True, preexec_fn=limit_address_space, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{example_copy}/{target}:1: error: file contains a NUL byte" in result.stdout
    assert "MemoryError" not in result.stdout + result.stderr and "Traceback" not in result.stdout + result.stderr
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (spoiled.st_size, spoiled.st_mtime_ns)
    path.write_bytes(original)  # put it back, then prove nothing else was written
    assert tree_bytes(example_copy) == before


def test_json_lines_stop_at_the_first_bad_line(tmp_path, monkeypatch):
    monkeypatch.setattr(parsing, "MAX_LINE_BYTES", 100)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n{"a": 2}\n' + b'{"long": "' + b"x" * 200 + b'"}\n' + b"\x00\n")
    rows, problems = read_json_lines(path, "x.jsonl", 10_000)
    assert rows is None
    assert [(p.line, p.message) for p in problems] == [(3, "line is longer than the 0.0001 MB limit for one line")]
    path.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n\x00')
    assert [(p.line, p.code) for p in read_json_lines(path, "x.jsonl", 10_000)[1]] == [(2, "encoding")]
    path.write_bytes(b'{"a": 1}\r\n{"a": 2}')
    assert read_json_lines(path, "x.jsonl", 10_000) == ([(1, {"a": 1}), (2, {"a": 2})], [])


# --------------------------------------------------------------------------- symbolic links

BODY = "cd/cd03c9735e85ac8d0096f0a4c4411da61b34162183bed0e537ad96e1d6fc4698"


def link_to_a_copy_outside(review: Path, rel: str, outside: Path) -> None:
    """Move `rel` out of the review and leave a symbolic link to it in its place."""
    target = outside / rel.replace("/", "_")
    shutil.move(review / rel, target)
    (review / rel).symlink_to(target, target_is_directory=target.is_dir())


@pytest.mark.parametrize("rel", ["snapshots/ab", f"snapshots/{BODY}", "snapshots", "README.md",
                                 "screening/title-abstract", "searches/object-in-context.json"])
def test_a_symbolic_link_anywhere_in_the_review_is_refused(sitegen, example_copy, tmp_path, rel):
    outside = tmp_path / "outside"
    outside.mkdir()
    link_to_a_copy_outside(example_copy, rel, outside)
    out = check_reports(sitegen, example_copy, rel, None, "is a symbolic link")
    assert out.count(f"{example_copy}/{rel}:") == 1


def test_links_are_found_fast_among_many_snapshot_bodies(example_copy):
    # A few thousand bodies keep the test quick to set up (creating files is slow on some disks);
    # the walk, which reads each entry's type from its folder listing, takes about 0.2 s for 100,000.
    snapshots = example_copy / "snapshots"
    for folder in range(256):
        (snapshots / f"{folder:02x}").mkdir(exist_ok=True)
    for index in range(3_000):
        os.close(os.open(f"{snapshots}/{index % 256:02x}/{index:064x}", os.O_CREAT | os.O_WRONLY))
    (example_copy / "snapshots" / "ff" / "link").symlink_to(example_copy / "README.md")
    start = time.perf_counter()
    assert [rel for rel, entry in parsing.walk(example_copy) if entry.is_symlink()] == ["snapshots/ff/link"]
    assert time.perf_counter() - start < 20  # a guard against a hang, not a speed figure (bench/ measures speed)


def entry_stored_in(store: SnapshotStore, folder: str):
    return next(entry for entry in store._entries.values() if entry.sha256 and entry.sha256.startswith(folder))


@pytest.mark.parametrize("rel", ["snapshots/ab", f"snapshots/{BODY}"])
def test_replay_never_reads_through_a_link(example_copy, tmp_path, rel):
    store = SnapshotStore(example_copy / "snapshots")
    entry = entry_stored_in(store, rel.split("/")[1][:2])
    link_to_a_copy_outside(example_copy, rel, tmp_path)
    with pytest.raises(SitegenError, match=f"{re.escape(str(example_copy / rel))} is a symbolic link"):
        store.body(entry)


@pytest.mark.parametrize("rel", ["snapshots/index.jsonl", "snapshots"])
def test_replay_refuses_a_linked_index_or_snapshots_folder(example_copy, tmp_path, rel):
    link_to_a_copy_outside(example_copy, rel, tmp_path)
    with pytest.raises(SitegenError, match=f"{re.escape(str(example_copy / rel))} is a symbolic link"):
        SnapshotStore(example_copy / "snapshots")


@pytest.mark.parametrize("linked", ["folder", "body"])
def test_record_mode_writes_nothing_outside_the_review(tmp_path, linked):
    answer = b'{"meta": {"count": 0, "next_cursor": null}, "results": []}'
    digest = hashlib.sha256(answer).hexdigest()
    snapshots, outside = tmp_path / "review" / "snapshots", tmp_path / "outside"
    snapshots.mkdir(parents=True)
    outside.mkdir()
    if linked == "folder":
        (snapshots / digest[:2]).symlink_to(outside, target_is_directory=True)
    else:
        (outside / digest).write_bytes(b"planted")
        (snapshots / digest[:2]).mkdir()
        (snapshots / digest[:2] / digest).symlink_to(outside / digest)
    before = tree_bytes(outside)
    fetch, _, _ = fetcher(lambda request: httpx.Response(200, content=answer), mode="record",
                          store=SnapshotStore(snapshots))
    with pytest.raises(SitegenError, match=f"{re.escape(str(snapshots / digest[:2]))}.* is a symbolic link"):
        with fetch:
            fetch.request(openalex.PROVIDER, "https://api.openalex.org/works", [("search", "x")])
    assert tree_bytes(outside) == before
    assert not (snapshots / "index.jsonl").exists()


def test_replay_refuses_a_planted_body_larger_than_any_response(tmp_path):
    from sitegen.review.models import SnapshotEntry
    from sitegen.sources.snapshots import MAX_BODY_BYTES, SnapshotStore

    store = SnapshotStore(tmp_path / "snapshots")
    entry = store.add(SnapshotEntry(fingerprint="0" * 64, url="https://api.openalex.org/works", status=200), b"{}")
    store.save()
    store = SnapshotStore(tmp_path / "snapshots")
    body = tmp_path / "snapshots" / entry.sha256[:2] / entry.sha256
    with body.open("r+b") as handle:
        handle.truncate(MAX_BODY_BYTES + 1)  # sparse: no disk, no memory
    with pytest.raises(SitegenError, match="larger than any response sitegen records"):
        store.body(entry)


# --------------------------------------------------------------------------- positions in large JSON

# Text YAML reads as it is (no control characters or line separators, which YAML counts as line breaks and
# editors do not), as sitegen writes JSON (ensure_ascii=False).
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 1, 2]))
def test_json_positions_are_where_yaml_puts_them(value, indent):
    """Problems in JSON files are placed by walking the text (linear, for files of many MB); the
    positions are the ones YAML's composer gives, including for a key that is not there."""
    import json

    text = json.dumps(value, indent=indent, ensure_ascii=False)
    located, _ = parse_yaml(text, "")
    for path in [*_paths(value), ("no such key",)]:
        expected = next(located.positions[path[:end]] for end in range(len(path), -1, -1)
                        if path[:end] in located.positions)
        assert parsing.json_position(text, path) == expected, path


# --------------------------------------------------------------------------- command-line values


@pytest.mark.parametrize("args, message", [
    (["digest", "{review}", "--week", "0001-W01"], "is before 1900"),
    (["probable-duplicates", "{review}", "--reviewer", "Ann Smith"], "is not a reviewer name"),
    (["state", "set", "{review}", "max_kept", "\u0663"], "max_kept"),
    (["monitor", "add", "{review}", "--id", "x", "--strategy", "openalex", "search=a&api_key=b",
      "--at", "2026-01-01T00:00:00Z"], "OpenAlex cannot run this strategy"),
], ids=["week-too-early", "reviewer-not-a-name", "arabic-indic-digit", "strategy-that-cannot-run"])
def test_odd_command_line_values_are_refused_cleanly(sitegen, example_copy, args, message):
    before = tree_bytes(example_copy)
    code, _, err = sitegen(*[a.replace("{review}", str(example_copy)) for a in args])
    assert code in (1, 2) and message in err and "Traceback" not in err
    assert tree_bytes(example_copy) == before


def test_europe_pmc_names_the_results_it_cannot_track():
    from sitegen.sources import europepmc
    from sitegen.sources.settings import SourceSettings

    agricola = {"id": "IND44012345", "source": "AGR", "title": "A result with only Europe PMC's own id"}
    page = {"hitCount": 1, "nextCursorMark": "end", "resultList": {"result": [agricola]}}
    fetch, _, _ = fetcher(lambda request: httpx.Response(200, json=page))
    outcome = europepmc.search(fetch, SourceSettings(), "x")
    assert outcome.complete and outcome.records == []
    assert outcome.warnings == ["1 Europe PMC result had no DOI, PMID or PMCID and was skipped: AGR:IND44012345"]


@pytest.mark.parametrize("args", [
    ["update", "{review}", "--at", "2026-01-01T00:00:00Z", "--report", "{missing}/r.md"],
    ["update", "{review}", "--at", "2026-01-01T00:00:00Z", "--report", "{review}/r.md"],
    ["digest", "{review}", "--week", "2023-W15", "--out", "{review}/review.yaml"],
    ["digest", "{review}", "--week", "2023-W15", "--out", "{missing}/d.md"],
], ids=["report-in-missing-folder", "report-inside-review", "digest-over-review-file", "digest-in-missing-folder"])
def test_side_files_are_checked_before_anything_runs(sitegen, example_copy, tmp_path, args):
    before = tree_bytes(example_copy)
    argv = [a.replace("{review}", str(example_copy)).replace("{missing}", str(tmp_path / "missing")) for a in args]
    code, _, err = sitegen(*argv)
    assert code == 2 and "Traceback" not in err
    assert tree_bytes(example_copy) == before


@pytest.mark.parametrize("source", ["device", "pipe"])
@pytest.mark.parametrize("args", [
    ["import", "{review}", "{source}", "--at", "2026-06-01T00:00:00Z", "--format", "ris"],
    ["dedupe", "{source}", "--format", "ris", "--out", "{tmp}/sets.csv"],
    ["import-decisions", "{review}", "{source}", "--tool", "rayyan", "--reviewer", "x"],
    ["verify", "{review}", "--snapshots", "replay", "--at", "2023-04-17T00:00:00Z", "--bib", "{source}"],
], ids=["import", "dedupe", "import-decisions", "verify-bib"])
def test_a_device_or_a_named_pipe_given_as_a_file_is_refused_at_once(sitegen, example_copy, tmp_path, args, source):
    """/dev/zero would be read until memory ran out, and a named pipe waited on forever, the review locked. Each
    says so alike (verify's --bib said "([Errno 22] it is a device, …: '/dev/zero')")."""
    path = "/dev/zero" if source == "device" else str(tmp_path / "pipe.ris")
    if source == "pipe":
        os.mkfifo(path)
    before = tree_bytes(example_copy)
    code, _, err = sitegen(*[a.replace("{review}", str(example_copy)).replace("{source}", path)
                             .replace("{tmp}", str(tmp_path)) for a in args])
    assert code == 1 and f"error: {path}: cannot be read (it is a device, pipe or folder, not a regular file)" in err
    assert "Traceback" not in err and "Errno" not in err
    assert tree_bytes(example_copy) == before and not (tmp_path / "sets.csv").exists()


def test_a_file_given_to_sitegen_is_read_up_to_its_limit(tmp_path):
    from sitegen.files import read_file
    from sitegen.manuscript.loop import read_source

    path = tmp_path / "big.ris"
    path.write_bytes(b"x" * 101)
    assert read_file(path, limit=101) == b"x" * 101
    with pytest.raises(OSError, match="larger than the 0 MB a file given to sitegen may be; split it"):
        read_file(path, limit=100)
    with pytest.raises(SitegenError, match="cannot be read .it is a device, pipe or folder"):
        read_source(Path("/dev/zero"))


def test_accents_nested_in_accents_are_refused_at_their_line_not_decoded_for_ever():
    """Each accent nested in another doubles the text the LaTeX decoder makes: 25 deep, a 110-byte file took
    11 s and 880 MB; 100 deep overflowed the decoder's stack. Braces as deep as a real reference has are read."""
    from sitegen.references import ReferenceProblem, read_references

    def bib(depth: int) -> str:
        return "@article{k,\n  title = {" + '{\\"' * depth + "o" + "}" * depth + "},\n  year = {2020}\n}\n"

    [entry] = read_references(bib(3), "bibtex")
    assert 0 < len(entry.get("title")) < 10  # an o and its accents
    for depth in (9, 25, 100, 5000):
        with pytest.raises(ReferenceProblem, match="field 'title' nests its braces more than 8 deep") as caught:
            read_references(bib(depth), "bibtex")
        assert caught.value.line == 2
    # Plain braces (no LaTeX to decode) cost nothing however deep, and are only dropped.
    [plain] = read_references("@article{k,\n  title = {" + "{" * 200 + "Deep" + "}" * 200 + "}\n}\n", "bibtex")
    assert plain.get("title") == "Deep"


@pytest.mark.parametrize("written", ["See \\href{https://example.org}{the site}", "a \\sqrt", "in the \\title",
                                     "\\footnote", '\\"\\texorpdfstring', "\\textcolor{red}",
                                     "\ue0010\ue002 caf\\'e", "$x$ \ue0011\ue002 \ue000",
                                     "A \\~{$\\beta$} title", '\\~{$[\\"$\\alpha${}}xxxxxxxxxxxx'])
def test_latex_the_decoder_fails_on_is_kept_as_written_not_a_traceback(written):
    # pylatexenc raised IndexError, KeyError, TypeError or AttributeError on these (valid LaTeX among them); a value
    # with the decoder's own stand-in characters in it raised IndexError or had them read as the decoder's. An accent
    # whose argument runs on over math marked each character of the math's stand-in, which was then left in the title
    # as invisible private-use characters.
    from sitegen.references import read_references

    [entry] = read_references("@article{k,\n  title = {" + written + "},\n  year = {2020}\n}\n", "bibtex")
    assert entry.get("title") == written


@pytest.mark.parametrize("text, line", [("[" * 5000 + "]" * 5000, 1),
                                        ('[{"id": "a", "title": "T"},\n' + "[" * 5000 + "]" * 5000 + "]", 2),
                                        ('{"id": "a", "title": ' + "[" * 5000 + "]" * 5000 + "}", 1)])
def test_csl_json_nested_too_deeply_is_a_problem_at_its_line_not_a_traceback(text, line):
    from sitegen.references import ReferenceProblem, read_references

    with pytest.raises(ReferenceProblem, match="nested too deeply to read") as caught:
        read_references(text, "csl-json")
    assert caught.value.line == line


def test_bibtex_values_joined_by_hash_and_string_macros_are_read_as_bibtex_reads_them():
    """`"Part one" # " and two"` and `j # " Supplement"` were kept as written, quotes and macro names in the
    title; a macro the file does not define (an abbreviation file it was written with) is kept, and said."""
    from sitegen.references import read_references

    text = ('@string{j = "Journal of Memory"}\n@STRING{jj = {The } # J}\n'
            '@article{k1,\n  title = "Part one" # { and {P}art two},\n  journal = jj # " Supplement",\n'
            '  month = jan, year = 2020,\n  publisher = IEEE_PRESS,\n  note = {A # B "quoted"}\n}\n')
    warnings: list[str] = []
    [entry] = read_references(text, "bibtex", warnings)
    assert entry.get("title") == "Part one and Part two"
    assert entry.get("journal") == "The Journal of Memory Supplement"
    assert (entry.get("month"), entry.get("year"), entry.get("publisher")) == ("jan", "2020", "IEEE_PRESS")
    assert entry.get("note") == 'A # B "quoted"'  # inside braces, '#' and quotes are text
    assert warnings == ["1 value names a macro no @string of the file defines, kept as written "
                        "(line 7: IEEE_PRESS)"]


def test_et_al_and_names_without_a_letter_are_no_authors():
    from sitegen.references import read_references
    from sitegen.references.records import entry_record

    ris = ("TY  - JOUR\nTI  - A title\nAU  - Smith, Jane\nAU  - et al.\nAU  - ,\nAU  - Et Al\nAU  - 3M Company\n"
           "AU  - 王, 小明\nPY  - 2020\nER  - \n")
    [entry] = read_references(ris, "ris")
    record = entry_record(entry)
    assert [name.display() for name in record.author] == ["Smith, Jane", "3M Company", "王, 小明"]


def test_a_record_exported_as_a_bibtex_misc_keeps_its_journal_when_read_back():
    """A record whose type has no BibTeX one is written @misc, its journal as howpublished: read back, the
    journal is the record's container again; a web address in howpublished is none."""
    from sitegen.records.model import Record
    from sitegen.references import read_references
    from sitegen.references.records import entry_record
    from sitegen.site.exports import records_bibtex

    record = Record.model_validate({"id": "10.1000/rt.1", "type": "article", "title": "Object memory in rats",
                                    "container-title": "Journal of Rodents", "DOI": "10.1000/rt.1",
                                    "issued": {"date-parts": [[2020]]}})
    written = records_bibtex([record])
    assert "@misc" in written and "howpublished = {Journal of Rodents}" in written
    [entry] = read_references(written, "bibtex")
    assert entry_record(entry).container_title == "Journal of Rodents"
    [online] = read_references("@misc{k, title = {T}, howpublished = {\\url{https://example.org/x}}}\n", "bibtex")
    assert entry_record(online).container_title is None


def test_csl_json_authors_with_no_name_are_none_and_parts_that_are_not_text_are_refused():
    from sitegen.references import ReferenceProblem, read_references
    from sitegen.references.records import entry_record

    def item(*authors: str) -> str:
        return '[{"id": "a", "title": "T",\n "author": [' + ", ".join(authors) + "]}]"

    [entry] = read_references(item('{"literal": ""}', '{"family": "Doe", "given": "Jane"}', "{}",
                                    '{"given": " "}'), "csl-json")
    assert [name.display() for name in entry_record(entry).author] == ["Doe, Jane"]
    for bad in ('{"family": {"x": 1}}', '{"given": ["A"]}', '{"literal": true}'):
        with pytest.raises(ReferenceProblem, match="an author's (family|given|literal) is not text") as caught:
            read_references(item(bad), "csl-json")
        assert caught.value.line == 1


@pytest.mark.parametrize(("written", "day"), [("[[2008,2,30]]", "day 30 is not from 1 to 29, the days of 2008-02"),
                                               ("[[2023,4,31]]", "day 31 is not from 1 to 30, the days of 2023-04")])
def test_a_records_date_no_calendar_has_is_a_problem_at_its_line(sitegen, example_copy, written, day):
    """Each part was checked alone (a day from 1 to 31), so 30 February passed `check` and went into every export
    ("DA  - 2008/02/30/"), which the readers of records (`calendar_date`) would never have made."""
    records = example_copy / "records.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines(keepends=True)
    line = next(number for number, text in enumerate(lines, 1) if '"issued":{"date-parts":[[' in text)
    lines[line - 1] = re.sub(r'"issued":\{"date-parts":\[\[[0-9,]+\]\]', f'"issued":{{"date-parts":{written}', lines[line - 1])
    records.write_text("".join(lines), encoding="utf-8")
    before = tree_bytes(example_copy)
    code, out, err = sitegen("check", example_copy)
    assert code == 1 and f"{records}:{line}: error: issued: {day} [schema]" in out + err
    assert tree_bytes(example_copy) == before


@pytest.mark.parametrize("at", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"])
def test_a_time_its_offset_moves_out_of_the_calendar_is_a_problem_at_its_place(sitegen, example_copy, at):
    """Times are compared in UTC: one that UTC puts past the year 9999 or before the year 1 raised
    OverflowError from every command that read it."""
    run = example_copy / "runs" / "20230417T000000Z-object-in-context.json"
    run.write_text(run.read_text().replace('"at": "2023-04-17T00:00:00Z"', f'"at": "{at}"'))
    before = tree_bytes(example_copy)
    for command in (["check"], ["prisma"]):
        code, _, err = sitegen(*command, example_copy)
        assert code == 1 and "Traceback" not in err
    code, out, err = sitegen("check", example_copy)
    assert f"{run}:5:3: error: at: '{at}' is outside the years 1 to 9999 in UTC" in out + err
    assert tree_bytes(example_copy) == before


def test_bibtex_values_as_bibtexparser_splits_them_escapes_month_macros_and_limits():
    from sitegen.references import ReferenceProblem, read_references

    def read(text: str) -> tuple[list, list[str]]:
        warnings: list[str] = []
        return read_references(text, "bibtex", warnings), warnings

    [godel], _ = read('@article{a, author = "G\\"odel, Kurt", title = "{\\"O}sterreich \\"uber alles"}')
    assert (godel.get("author"), godel.get("title")) == ("Gödel, Kurt", "Österreich über alles")
    [month], warnings = read('@string{jan = "January"}\n@article{a, title = {T}, month = jan, pages = 12--15}')
    assert month.get("month") == "January" and warnings == []  # the file's own macro; a page range is no macro
    [named], warnings = read('@string{j = undefinedx # " B"}\n@article{k, title = {T}, journal = j}')
    assert named.get("journal") == "undefinedx B" and "line 1: undefinedx" in warnings[0]
    # Each @string may double the one before: 40 of them would make a 2 TB value of a 1 kB file.
    chain = '@string{a0 = "xx"}\n' + "".join(f"@string{{a{n} = a{n - 1} # a{n - 1}}}\n" for n in range(1, 41))
    with pytest.raises(ReferenceProblem, match="over 1,000,000 characters") as caught:
        read(chain + "@article{k, title = {T}, journal = a40}\n")
    assert caught.value.line == 20
    # With --skip-bad a bad @string is skipped as a bad entry is (it stopped the import all the same).
    skipped: list[tuple[int, str]] = []
    [entry] = read_references(chain + "@article{k, title = {T}, journal = a40}\n", "bibtex", [], skipped=skipped)
    assert skipped[0][0] == 20 and "over 1,000,000 characters" in skipped[0][1] and len(entry.get("journal")) < 1000
    with pytest.raises(ReferenceProblem, match="@string 'j' was already defined on line 1") as caught:
        read('@string{j = "A"}\n@string{j = "B"}\n@article{k, title = {T}, journal = j}')
    assert caught.value.line == 2
    # howpublished is a journal only for a @misc, a thesis or a report, and never a web address.
    for text in ("@misc{k, title = {T}, howpublished = {Available at www.who.int}}",
                 "@book{k, title = {T}, howpublished = {Self-published}}"):
        [entry], _ = read(text)
        assert entry.get("journal") == ""


def test_a_small_file_is_read_without_setting_aside_the_limit(tmp_path):
    """read(n) sets n bytes aside at once: reading a 6-byte file must not ask for 512 MB."""
    from sitegen.files import read_file

    small = tmp_path / "small.txt"
    small.write_bytes(b"hello\n")
    code = ("import resource, sys; from pathlib import Path; from sitegen.files import read_file; "
            "resource.setrlimit(resource.RLIMIT_AS, (400 * 2**20, 400 * 2**20)); "
            f"sys.exit(0 if read_file(Path({str(small)!r})) == b'hello\\n' else 1)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
    assert read_file(Path("/proc/self/status")).startswith(b"Name:")  # sized 0 by the system, read whole


@pytest.mark.parametrize(("rel", "bad"), [
    ("snapshots/index.jsonl", "\n"),  # blank lines
    ("records.jsonl", "1\n"),  # lines that are no record
    ("screening/title-abstract/reviewer-a.csv", "x\n"),  # rows of one field
    ("screening/title-abstract/reviewer-a.csv", "10.1002/hipo.22095,perhaps,,\n"),  # rows of no decision
])
def test_a_file_of_many_bad_lines_is_reported_by_its_first_problems(example_copy, sitegen, rel, bad):
    # Each bad line was a problem kept and printed: 4 MB of blank lines took 2.3 GB and printed 4,000,000 lines.
    from sitegen.review.parsing import MAX_PROBLEMS_PER_FILE

    with (example_copy / rel).open("a", encoding="utf-8") as handle:
        handle.write(bad * 50_000)
    code, out, err = sitegen("check", example_copy)
    assert code == 1 and "Traceback" not in err
    of_file = [line for line in out.splitlines() if line.startswith(f"{example_copy / rel}:")]
    assert MAX_PROBLEMS_PER_FILE <= len(of_file) <= MAX_PROBLEMS_PER_FILE + 2
    assert "the rest of the file was not read" in of_file[-1]


def test_evidence_with_more_findings_than_a_study_has_is_refused_at_once(example_copy, sitegen):
    evidence = next((example_copy / "evidence").glob("*.yaml"))
    text = evidence.read_text(encoding="utf-8")
    evidence.write_text(text.split("findings:")[0] + "findings: [" + ", ".join(["a"] * 100_000) + "]\n",
                        encoding="utf-8")
    code, out, _ = sitegen("check", example_copy)
    assert code == 1
    assert len([line for line in out.splitlines() if line.startswith(str(evidence))]) == 1
    assert "at most 1000 items" in out


def test_a_reference_cell_larger_than_any_field_is_refused_as_it_is_read(tmp_path):
    from sitegen.references import ReferenceProblem, read_references

    with pytest.raises(ReferenceProblem, match="field larger than field limit"):
        read_references("ID,title,year\na," + "x" * 17_000_000 + ",2020\n", "csv")


def test_a_decision_file_read_in_part_makes_no_problem_elsewhere(example_copy, sitegen):
    # Reading stopped after 200 problems, and the checks across files then ran on the rows read: 43 false
    # problems (records "not screened in", adjudications "needless").
    path = example_copy / "screening" / "title-abstract" / "reviewer-a.csv"
    header, *rows = path.read_text().splitlines(keepends=True)
    path.write_text(header + "".join(f"10.9999/bad{n},maybee,,\n" for n in range(205)) + "".join(rows))
    code, out, _ = sitegen("check", example_copy)
    codes = re.findall(r"\[([a-z-]+)\]$", out, re.M)
    assert code == 1 and set(codes) <= {"schema", "too-many-problems", "not-checked"}, set(codes)


def test_output_to_a_reader_that_has_gone_is_no_error_message(example_copy):
    """`sitegen prisma DIR | head -1`: once `head` has exited, a line written is a BrokenPipeError, which was shown
    as 'error: Broken pipe' with exit 1. The reader left: nothing to say, and 141 (128 + SIGPIPE) as a shell
    reports a writer stopped by it. The pipe is closed before the program starts, so every write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([sys.executable, "-m", "sitegen", "prisma", str(example_copy)], stdout=write_end,
                                stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (141, "")


# --------------------------------------------------------------------------- long runs of spaces

SPACES = "\t" * 300_000  # a cell, field or record value of 300 KB of white space not followed by what a pattern seeks


def _imported(text: str, format: str) -> None:
    for entry in read_references(text, format):
        entry_record(entry)


@pytest.mark.parametrize("name, run", [
    ("a CSV's authors", lambda: _imported(f"Title,Authors,Covidence #\nA title,\"Smith J{SPACES}x\",#1\n", "csv")),
    ("BibTeX authors and pages", lambda: _imported(
        f"@article{{k, title={{A title}}, author={{Smith, J{SPACES}x and Doe{SPACES}(a@b.c}},"
        f" pages={{1{SPACES}-{SPACES}2}}}}\n", "bibtex")),
    ("a record's page range", lambda: page_range(record(page=f"1{SPACES}x"))),
    ("a page range to match", lambda: pages(f"1{SPACES}x")),
    ("a journal to match", lambda: journal_key(f"J{SPACES}x")),
])
def test_a_long_run_of_spaces_is_read_in_linear_time(name, run):
    """A pattern that starts with white space (`\\s+and\\s+`, `\\s*-+\\s*`) is tried from every space of a run the
    rest of it does not follow: quadratic, so a hostile import, or a record in a pull request, held up `import`,
    `update` or `build` for hours. Read in a second or so, even on a slow runner."""
    started = time.perf_counter()
    run()
    assert time.perf_counter() - started < 10, name


@pytest.mark.parametrize("title, compared", [
    (f"A title{SPACES}[Review]", "a title"),  # the run of spaces before a note
    (f"A title{SPACES}.{SPACES}", "a title"),  # a run no note follows
    ("A title " + "[Review] " * 30_000 + "for rats", "a title " + "review " * 30_000 + "for rats"),
    ("A title. [Review] [33 refs]", "a title"),
])
def test_a_titles_trailing_notes_are_found_in_linear_time(title, compared):
    """Notes an index adds at a title's end ("[Review] [33 refs]") are dropped before titles are compared: found
    by splitting a run of spaces every way before and after each note, from every space, a title holding a
    thousand spaces took seconds to compare and 300 KB of them for ever; one holding thousands of bracketed
    words followed by text was tried from each of them, for minutes."""
    assert comparable_title(title) == compared


@pytest.mark.parametrize("title, kind", [
    (f"A title{SPACES}for rats", ""), (f"A title{SPACES}:{SPACES}Erratum", "erratum"),
    (f"A title{SPACES}- Reply", "reply"),
])
def test_a_title_is_read_as_a_notice_or_not_in_linear_time(title, kind):
    """Whether a title names a notice ('…: Erratum') is read from every record's title: a colon after spaces
    was looked for from every space of a run, so 100 KB of them took a minute and a half."""
    assert notice_kind(title) == kind


@pytest.mark.parametrize("separator", [",", ";", " ", "\u3000", ", ", " ;"])
def test_a_doi_field_is_split_between_dois_in_linear_time(separator):
    """A DOI field is split at each run of separators whose next word holds a DOI's start ("10.1/a, 10.1/b"): the
    run was tried from each of its characters with each of its lengths, reading the next word again each time,
    so a field of 2,000 commas (the most a DOI field may hold) took 15 s, for every record read."""
    run = separator * (2000 // len(separator))
    assert normalise_doi(f"10.1000/abc{run}x") is None
    assert normalise_doi(f"10.1000/abc{run}10.1000/def") is None
    assert normalise_doi(f"10.1000/abc{run}https://doi.org/10.1000/ABC") == "10.1000/abc"


def test_a_line_between_bibtex_entries_is_read_in_linear_time():
    """A line between entries that opens one without its '@' ("article{key,") is refused: with no key, the spaces
    before and after where it belongs were read as two runs, split every way, so a line holding 300 KB of tabs took
    minutes."""
    from sitegen.references import ReferenceProblem

    entry = "@article{k, title={A title}}\n"
    assert [item.get("title") for item in read_references(f"{entry}article{{{SPACES}x\n", "bibtex")] == ["A title"]
    with pytest.raises(ReferenceProblem, match="text outside an entry that looks like one") as caught:
        read_references(f"{entry}article{{{SPACES}x{SPACES},\n", "bibtex")
    assert caught.value.line == 2


@pytest.mark.parametrize("letter, ascii_letter", [("\u0131", "i"), ("\u0130", "I"), ("\u017f", "s"), ("\u212a", "K")])
def test_letters_a_case_blind_pattern_takes_for_ascii_ones_are_read_as_them_not_a_crash(letter, ascii_letter):
    # re.IGNORECASE matches "ı" and "İ" as "i", "ſ" as "s" and the Kelvin sign as "k", which lower() leaves
    # as they are: a title's "Corrıgendum" or an abstract's "sıgma" was looked up as no word known, and every
    # command stopped with a KeyError.
    from sitegen.text import comparable_passage

    def typed(word: str) -> str:
        return word.replace(ascii_letter.lower(), letter).replace(ascii_letter.upper(), letter)

    assert notice_kind(f"A study of rats: {typed('Corrigendum')}") == "erratum"
    assert notice_kind(f"A study of rats: {typed('Retraction notice')}") == "retraction"
    assert comparable_passage(f"the {typed('sigma')} and {typed('kappa')} factors") == "the σ and κ factors"
