"""Parses kept between commands (`sitegen.review.kept`): the same bytes read by the same code give what reading
them gives, whatever is wrong with what was kept, and nothing is ever written into a review."""

from __future__ import annotations

import csv
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import get_args

import numpy
import pytest
from pydantic import BaseModel, ValidationError

from sitegen import process
from sitegen.living.facts import ReviewFacts
from sitegen.review import folder, kept
from sitegen.review.folder import Review, load_review
from sitegen.review.models import EventType
from sitegen.review.problems import Problem
from sitegen.screening.digest import Relevance, rank_batches, weekly_digests
from sitegen.screening.relevance import Scorer
from sitegen.workspace import inspect
from tests.conftest import ROOT, run_cli, tree_bytes


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Parses kept in a folder of the test's own (the suite keeps none otherwise)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(folder))
    monkeypatch.setattr(kept, "_tidied", set())  # as in a process of its own
    yield folder
    kept.wait_for_writers()


def _loaded(review: Path) -> tuple[Review, list[Problem]]:
    """The review loaded as a command of its own would load it, once its kept parses are written."""
    kept._tidied.clear()
    loaded, problems = load_review(review)
    kept.wait_for_writers()
    assert loaded is not None
    return loaded, problems


def _read(review: Path) -> tuple:
    """What loading the review gives of records.jsonl, as a command of its own would load it."""
    loaded, problems = _loaded(review)
    return (loaded.records, loaded.record_lines, loaded.record_digests, loaded.invalid_record_ids,
            loaded.records_loaded, [problem for problem in problems if problem.path == "records.jsonl"])


def _not_read_again(monkeypatch: pytest.MonkeyPatch, reader: str = "read_records") -> None:
    """Fail the test when the loader's `reader` (records.jsonl's by default) reads its file again."""
    def refused(*args: object) -> None:
        raise AssertionError(f"{reader}{args[1:]} read its file again")
    monkeypatch.setattr(folder, reader, refused)


def _reported_alike(review: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, reader: str,
                    read_as: Callable[[Path], tuple], first: tuple, read: tuple) -> None:
    """`check` reports `first` and the loader reads `read` (`read_as`) both with nothing kept and, with the parse kept
    in `cache`, without the loader's `reader` reading its file again."""
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "")
    assert run_cli("check", review) == first  # as read afresh
    assert read_as(review) == read
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(cache))
    with monkeypatch.context() as refusing:
        _not_read_again(refusing, reader)
        assert run_cli("check", review) == first
        assert read_as(review) == read


def _pickles(cache: Path) -> list[Path]:
    return sorted(cache.glob("records-*.pickle"))


def test_the_same_records_read_again_are_the_kept_parse(example_copy: Path, cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    first = _read(example_copy)
    assert len(_pickles(cache)) == 1 and len(first[0]) == 271
    _not_read_again(monkeypatch)
    assert _read(example_copy) == first


def test_a_kept_parse_holds_names_and_dates_as_their_values(example_copy: Path) -> None:
    # A kept parse of 100,000 records holds 450,000 names: pickled as classes with slots, each carried a
    # dictionary of its field names, which unpickling made and then set each field from (a sixth of the time
    # of unpickling the records). Each is now its values, and comes back equal, as the same class.
    records = folder.read_records(example_copy).records
    names = [name for record in records.values() for name in record.author]
    dates = [record.issued for record in records.values() if record.issued]
    assert len(names) > 1000 and len(dates) > 200
    assert any(name.given is None for name in names)
    pickled = pickle.dumps((names, dates), protocol=pickle.HIGHEST_PROTOCOL)
    assert b"family" not in pickled and b"date_parts" not in pickled
    again = pickle.loads(pickled)
    assert again == (names, dates)
    assert {type(name).__name__ for name in again[0]} == {"CslName"}
    assert {type(date).__name__ for date in again[1]} == {"CslDate"}



def test_records_read_share_their_sets_of_fields_given_and_stay_apart(example_copy: Path, cache: Path) -> None:
    # pydantic gives each model its own set of the fields it was given: 90 MB at 100,000 records, which the records
    # of a review hold in a few distinct sets. Read from records.jsonl or from its kept parse, records given the same
    # fields hold one set; a record is changed by making another, which leaves every other record as it was.
    for _ in range(2):  # read, then from the kept parse
        records = list(_read(example_copy)[0].values())
        distinct = {id(record.model_fields_set) for record in records}
        assert len(distinct) < len(records) / 10
        assert len({frozenset(record.model_fields_set) for record in records}) == len(distinct)
    first = next(record for record in records if {"issue", "volume"} - record.model_fields_set
                 and sum(other.model_fields_set is record.model_fields_set for other in records) > 1)
    sharing = [record for record in records if record.model_fields_set is first.model_fields_set]
    field = min({"issue", "volume"} - first.model_fields_set)
    others = [set(record.model_fields_set) for record in records]
    given = [record.keys_given() for record in records]
    changed = first.model_copy(update={field: "7"})
    assert field in changed.model_fields_set and getattr(changed, field) == "7"
    assert [set(record.model_fields_set) for record in records] == others
    assert [record.keys_given() for record in records] == given
    with pytest.raises(ValidationError, match="frozen"):
        sharing[1].title = "Changed in place"
    with pytest.raises(ValidationError, match="frozen"):
        sharing[1].custom.retracted = True

def _broken_records(review: Path) -> None:
    """records.jsonl with a problem of each kind reading it finds: a misspelt field, a record twice, one out of
    order, a version link not named back."""
    path = review / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    misspelt = json.loads(lines[3])
    misspelt["titel"] = misspelt.pop("title", "x")
    linked = json.loads(lines[5])
    linked["custom"]["other_versions"] = [json.loads(lines[6])["id"]]
    lines[3], lines[5] = json.dumps(misspelt), json.dumps(linked)
    lines[7], lines[8] = lines[8], lines[7]
    lines.insert(10, lines[9])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_records_file_with_problems_is_reported_the_same_from_its_kept_parse(
        example_copy: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_records(example_copy)
    first = run_cli("check", example_copy)
    kept.wait_for_writers()
    assert first[0] == 1
    for code in ("duplicate-record", "order", "version-link", "unknown field"):
        assert code in first[1] + first[2]
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "")
    assert run_cli("check", example_copy) == first  # as read afresh
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(cache))
    _not_read_again(monkeypatch)
    assert run_cli("check", example_copy) == first


@pytest.mark.parametrize("damage", ["truncated", "garbage", "another kind", "empty"])
def test_a_damaged_kept_parse_is_passed_over_and_written_again(example_copy: Path, cache: Path, damage: str) -> None:
    first = _read(example_copy)
    [name] = _pickles(cache)
    whole = name.read_bytes()
    name.write_bytes({"truncated": whole[:len(whole) // 2], "garbage": b"\x80\x05not a pickle",
                      "another kind": pickle.dumps({"records": {}}), "empty": b""}[damage])
    assert _read(example_copy) == first
    assert name.read_bytes() == whole  # read afresh, kept again whole


def test_a_kept_parse_others_may_change_is_not_read(example_copy: Path, cache: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    first = _read(example_copy)
    [name] = _pickles(cache)
    name.chmod(0o664)  # writable by the group: anyone in it could have put anything there to be unpickled
    calls = []
    monkeypatch.setattr(folder, "read_records", lambda root, read=folder.read_records: calls.append(root) or read(root))
    assert _read(example_copy) == first
    assert calls == [example_copy]


def test_other_bytes_or_other_code_are_another_parse(example_copy: Path, cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first = _read(example_copy)
    path = example_copy / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["title"] = "A title changed by hand"
    path.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
    changed = _read(example_copy)
    assert changed[0][record["id"]].title == "A title changed by hand" != first[0][record["id"]].title
    assert len(_pickles(cache)) == 2
    monkeypatch.setattr(kept, "code_digest", lambda: "another sitegen")
    calls = []
    monkeypatch.setattr(folder, "read_records", lambda root, read=folder.read_records: calls.append(root) or read(root))
    assert _read(example_copy) == changed and calls == [example_copy]


def test_nothing_is_kept_inside_the_review_or_when_switched_off(example_copy: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    before = tree_bytes(example_copy)
    for setting in (str(example_copy / "cache"), str(example_copy), "", "  "):
        monkeypatch.setenv("SITEGEN_CACHE_DIR", setting)
        assert run_cli("check", example_copy)[0] == 0
        kept.wait_for_writers()
        assert tree_bytes(example_copy) == before
    assert kept.cache_folder({"SITEGEN_CACHE_DIR": ""}, example_copy) is None
    assert kept.cache_folder({"XDG_CACHE_HOME": str(tmp_path)}, example_copy) == tmp_path / "sitegen"
    assert kept.cache_folder({}, example_copy) == Path.home() / ".cache" / "sitegen"


def test_a_cache_folder_that_cannot_be_written_changes_nothing(example_copy: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(blocked / "cache"))
    assert run_cli("check", example_copy) == (0, "no problems found\n", "")
    kept.wait_for_writers()
    assert blocked.read_text() == "not a folder"


def test_only_the_parses_used_last_are_kept_and_killed_writes_are_swept(example_copy: Path, cache: Path) -> None:
    path = example_copy / "records.jsonl"
    first, *rest = path.read_text(encoding="utf-8").splitlines()
    cache.mkdir(mode=0o700)
    # as mkstemp names a writer's temporary file
    abandoned, young = cache / f".records-{'a' * 40}.pickle.k3j_x9.tmp", cache / f".records-{'b' * 40}.pickle.z0q2.tmp"
    for leftover in (abandoned, young):
        leftover.write_bytes(b"half")
    old = time.time() - kept.ABANDONED_SECONDS - 60
    os.utime(abandoned, (old, old))
    for number in range(kept.PARSES_KEPT + 2):
        record = json.loads(first)
        record["title"] = f"{number} {record['title']}"
        path.write_text("\n".join([json.dumps(record), *rest]) + "\n", encoding="utf-8")
        assert _read(example_copy)[0][record["id"]].title == record["title"]
    assert len(_pickles(cache)) == kept.PARSES_KEPT
    assert not abandoned.exists() and young.exists()


def test_the_program_waits_for_its_kept_parse_and_exits_with_the_commands_status(example_copy: Path,
                                                                                   tmp_path: Path) -> None:
    """`python -m sitegen` ends its process at once (cli.main): its output is whole, its status the command's, and
    the parse it kept is written whole before it exits."""
    environment = {**os.environ, "SITEGEN_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "sitegen", "check", str(example_copy)], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "no problems found\n", "")
    [name] = (tmp_path / "cache").glob("records-*.pickle")
    assert not list((tmp_path / "cache").glob(".*.tmp"))
    named, value = pickle.loads(name.read_bytes())
    assert named == name.name and len(value.records) == 271
    _broken_records(example_copy)
    again = subprocess.run([sys.executable, "-m", "sitegen", "check", str(example_copy)], cwd=ROOT, env=environment,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and again.stdout.count("records.jsonl:") >= 4
    assert again.stdout + again.stderr == "".join(run_cli("check", example_copy)[1:])


@pytest.mark.parametrize("closed", [">&-", "2>&-"])
def test_the_program_started_with_its_output_closed_exits_with_a_status(example_copy: Path, closed: str) -> None:
    """Started by a service manager with stdout or stderr closed, Python has None for it: still a status, never a
    traceback. With stderr closed, the command's; with stdout closed, 1: what check printed is lost, whatever it
    found (test_cli_standard_output)."""
    program = f"{sys.executable} -m sitegen check {example_copy}"
    broken = example_copy.parent / "broken"
    for review, status in ((example_copy, 0), (broken, 1)):
        if status:
            shutil.copytree(example_copy, broken)
            _broken_records(broken)
        done = subprocess.run(["bash", "-c", f"{program.replace(str(example_copy), str(review))} {closed}; echo $?"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.stdout.splitlines()[-1] == str(1 if closed == ">&-" else status), done.stderr
        assert "Traceback" not in done.stderr


def test_a_records_file_too_large_to_read_is_not_hashed(example_copy: Path, cache: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A sparse file of gigabytes is refused by its size at once: hashing it first took a minute per command."""
    with (example_copy / "records.jsonl").open("r+b") as file:
        file.truncate(folder.SIZE_LIMITS["records.jsonl"] + 1)
    monkeypatch.setattr(kept.hashlib, "file_digest", lambda *args: pytest.fail("hashed"))
    monkeypatch.setattr(folder, "_load_screening", lambda root, review: [])  # its files are hashed, records.jsonl not
    for other in ("_load_evidence", "_load_ledger"):  # so are these
        monkeypatch.setattr(folder, other, lambda root, review: [])
    code, out, _ = run_cli("check", example_copy)
    assert code == 1 and "too-large" in out and not cache.exists()


def test_files_of_the_users_own_in_the_cache_folder_are_never_pruned(example_copy: Path, cache: Path) -> None:
    cache.mkdir(mode=0o700)
    mine = [cache / "records-2023.pickle", cache / ".records-notes.tmp", cache / "records-x.pickle.bak"]
    for path in mine:
        path.write_text("mine")
        os.utime(path, (0, 0))
    path = example_copy / "records.jsonl"
    first, *rest = path.read_text(encoding="utf-8").splitlines()
    for number in range(kept.PARSES_KEPT + 1):
        record = json.loads(first)
        record["title"] = f"{number} {record['title']}"
        path.write_text("\n".join([json.dumps(record), *rest]) + "\n", encoding="utf-8")
        _read(example_copy)
    assert all(path.read_text() == "mine" for path in mine)
    assert len(_pickles(cache)) == kept.PARSES_KEPT + 1  # the user's records-2023.pickle and sitegen's three


def test_cache_folders_that_would_land_in_the_working_folder_keep_nothing(example_copy: Path, tmp_path: Path) -> None:
    home = Path.home()
    assert kept.cache_folder({"SITEGEN_CACHE_DIR": "~/kept"}, example_copy) == home / "kept"
    assert kept.cache_folder({"SITEGEN_CACHE_DIR": "kept"}, example_copy) is None  # relative: nothing kept
    assert kept.cache_folder({"XDG_CACHE_HOME": "relative"}, example_copy) == home / ".cache" / "sitegen"
    assert kept.cache_folder({"XDG_CACHE_HOME": str(tmp_path)}, example_copy) == tmp_path / "sitegen"


def test_sitegen_run_from_an_archive_keeps_nothing(example_copy: Path, cache: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Code that is not files (a zip archive) gives no digest of the code: a parse named without it could be
    another sitegen's."""
    monkeypatch.setattr(kept, "code_is_files", lambda: False)
    _read(example_copy)
    assert not cache.exists()


def _decisions_read(review: Path) -> tuple:
    """What loading the review gives of its decision files, as a command of its own would load it."""
    loaded, problems = _loaded(review)
    columns = [dict(row.columns) for row in loaded.decisions]  # worked out from each row's line, when asked
    return (loaded.decisions, columns, loaded.decisions_unread, loaded.decisions_invalid,
            [problem for problem in problems if problem.path.startswith("screening/")])


def _broken_decisions(review: Path) -> None:
    """Decision files with a problem of each kind reading them finds, one of them twice under two names: a
    decision misspelt, an id written as a link, a row of too many cells, a note over two lines; a header broken;
    a file of more problems than are reported."""
    stage = review / "screening" / "title-abstract"
    path = stage / "reviewer-a.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace("exclude", "exclued")
    lines[3] = "https://doi.org/" + lines[3]
    lines[4] += ",a cell more"
    lines[5] = lines[5].rstrip(",") + ',,"a note\nof two lines"'
    lines.append("10.9999/no-such-record,include,,")  # the checks across files find it, by its row's columns
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copyfile(path, stage / "reviewer-c.csv")  # the same bytes: its problems name it, not reviewer-a.csv
    (review / "screening" / "full-text" / "reviewer-b.csv").write_text("record_id;decision\n10.1/x;include\n")
    many = ["record_id,decision"] + [f"10.1/{number},yes" for number in range(300)]
    (review / "screening" / "full-text" / "reviewer-c.csv").write_text("\n".join(many) + "\n")


def test_decision_files_read_again_are_their_kept_parses(example_copy: Path, cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    first = _decisions_read(example_copy)
    assert len(list(cache.glob("decisions-*.pickle"))) == 4 and len(first[0]) > 500
    _not_read_again(monkeypatch, "read_decisions")
    again = _decisions_read(example_copy)
    assert again == first
    # each decision as validated: equal, and of the same class, hash and fields as one read afresh
    assert [(type(row.decision), hash(row.decision)) for row in again[0]] == [
        (type(row.decision), hash(row.decision)) for row in first[0]]


def test_decision_files_with_problems_are_reported_the_same_from_their_kept_parses(
        example_copy: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_decisions(example_copy)
    first = run_cli("check", example_copy)
    kept.wait_for_writers()
    assert first[0] == 1
    for where in ("title-abstract/reviewer-a.csv:3:", "title-abstract/reviewer-c.csv:3:",
                  "title-abstract/reviewer-c.csv:5:", "full-text/reviewer-b.csv:1", "full-text/reviewer-c.csv:"):
        assert where in first[1]
    read = _decisions_read(example_copy)
    assert read[2] == ["screening/full-text/reviewer-b.csv", "screening/full-text/reviewer-c.csv"]  # unread
    assert "screening/title-abstract/reviewer-c.csv" in {path for path, _ in read[3].values()}  # rows not read
    _reported_alike(example_copy, cache, monkeypatch, "read_decisions", _decisions_read, first, read)
    for unread in ("reviewer-b.csv", "reviewer-c.csv"):  # the files read in whole checked against each other
        (example_copy / "screening" / "full-text" / unread).unlink()
    checked = run_cli("check", example_copy)
    kept.wait_for_writers()
    assert "not compared" not in checked[1] and "reviewer-c.csv:" in checked[1] and "no-such-record" in checked[1]
    with monkeypatch.context() as refusing:
        _not_read_again(refusing, "read_decisions")
        assert run_cli("check", example_copy) == checked
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "")
    assert run_cli("check", example_copy) == checked  # as read afresh


def test_a_decision_changed_is_read_again_in_its_file_alone(example_copy: Path, cache: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _decisions_read(example_copy)
    path = example_copy / "screening" / "title-abstract" / "reviewer-b.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    changed = "include" if ",exclude," in lines[1] else "exclude"
    lines[1] = lines[1].replace(",include,", f",{changed},").replace(",exclude,", f",{changed},")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    calls = []
    monkeypatch.setattr(folder, "read_decisions",
                        lambda root, rel, read=folder.read_decisions: calls.append(rel) or read(root, rel))
    decisions = _decisions_read(example_copy)[0]
    assert calls == ["screening/title-abstract/reviewer-b.csv"]
    assert next(row for row in decisions if row.path.endswith("reviewer-b.csv")).decision.decision == changed


def _evidence_read(review: Path) -> tuple:
    """What loading the review gives of its evidence files, as a command of its own would load it."""
    loaded, problems = _loaded(review)
    return ([(each.study, each.path, each.evidence, each.parsed) for each in loaded.evidence],
            sorted(path for path in loaded.invalid_files if path.startswith("evidence/")),
            [problem for problem in problems if problem.path.startswith("evidence/")])


def _broken_evidence(review: Path) -> None:
    """Evidence files with a problem of each kind reading them finds, among the folder's other entries (which
    are reported in their place among the files' problems): YAML broken, a list, nothing, a finding missing its
    passage, a record id that is none, a file misnamed, a folder, a file a link, a file too large to read (never hashed: read each time)."""
    evidence = review / "evidence"
    good = sorted(evidence.glob("*.yaml"))[0].read_text(encoding="utf-8")
    (evidence / "a-broken.yaml").write_text(good.replace("findings:", "findings: [", 1), encoding="utf-8")
    (evidence / "b-list.yaml").write_text("- record_id: 10.1/x\n", encoding="utf-8")
    (evidence / "c-empty.yaml").write_text("", encoding="utf-8")
    (evidence / "d-no-passage.yaml").write_text(good.split("    passage:")[0], encoding="utf-8")
    (evidence / "e-bad-id.yaml").write_text(good.replace("record_id: ", "record_id: not an id ", 1), encoding="utf-8")
    (evidence / "F Misnamed.yaml").write_text(good, encoding="utf-8")
    (evidence / "g-folder").mkdir()
    (evidence / "h-link.yaml").symlink_to(sorted(evidence.glob("*.yaml"))[-1].name)
    (evidence / "i-large.yaml").write_text("# " + "x" * folder.SIZE_LIMITS["evidence"] + "\n", encoding="utf-8")
    (evidence / "z-same-bytes.yaml").write_text(good, encoding="utf-8")  # the same bytes as another: named by it


def test_evidence_files_read_again_are_their_kept_parse(example_copy: Path, cache: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    first = _evidence_read(example_copy)
    assert len(list(cache.glob("evidence-*.pickle"))) == 1 and len(first[0]) == 4
    _not_read_again(monkeypatch, "read_evidence")
    again = _evidence_read(example_copy)
    assert again == first
    # each model validated as read afresh: what validation gives (a Literal's own string) is one object
    assert [each[2].findings[0].passage.source is first[0][0][2].findings[0].passage.source for each in again[0]] \
        == [True] * 4


def test_evidence_files_with_problems_are_reported_the_same_from_their_kept_parse(
        example_copy: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_evidence(example_copy)
    first = run_cli("check", example_copy)
    kept.wait_for_writers()
    assert first[0] == 1
    for where in ("a-broken.yaml:", "b-list.yaml:1:", "c-empty.yaml:1:", "d-no-passage.yaml:", "e-bad-id.yaml:",
                  "F Misnamed.yaml", "g-folder", "h-link.yaml", "i-large.yaml"):
        assert where in first[1], where
    read = _evidence_read(example_copy)
    assert len(read[2]) >= 9 and "evidence/z-same-bytes.yaml" in {each[1] for each in read[0]}
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "")
    assert run_cli("check", example_copy) == first  # as read afresh
    assert _evidence_read(example_copy) == read
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(cache))
    reads = []
    monkeypatch.setattr(folder, "read_evidence",
                        lambda root, rel, read=folder.read_evidence: reads.append(rel) or read(root, rel))
    assert run_cli("check", example_copy) == first
    assert _evidence_read(example_copy) == read
    assert set(reads) == {"evidence/i-large.yaml"}  # refused by its size, never hashed: read (and refused) each time


def test_an_evidence_file_changed_is_read_again(example_copy: Path, cache: Path) -> None:
    _evidence_read(example_copy)
    path = sorted((example_copy / "evidence").glob("*.yaml"))[0]
    path.write_text(path.read_text(encoding="utf-8").replace("source: abstract", "source: fulltext"),
                    encoding="utf-8")
    evidence = _evidence_read(example_copy)[0]
    assert evidence[0][2].findings[-1].passage.source == "fulltext"
    assert len(list(cache.glob("evidence-*.pickle"))) == 2


def test_an_evidence_file_changed_is_the_only_one_read_again(example_copy: Path, cache: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _evidence_read(example_copy)
    paths = sorted((example_copy / "evidence").glob("*.yaml"))
    paths[0].write_text(paths[0].read_text(encoding="utf-8").replace("source: abstract", "source: fulltext"),
                        encoding="utf-8")
    paths[1].unlink()
    reads = []
    monkeypatch.setattr(folder, "read_evidence",
                        lambda root, rel, read=folder.read_evidence: reads.append(rel) or read(root, rel))
    evidence = _evidence_read(example_copy)
    assert reads == [f"evidence/{paths[0].name}"]  # the others' parses are the last value's
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "")
    assert _evidence_read(example_copy) == evidence  # as read afresh
    assert evidence[0][0][2].findings[-1].passage.source == "fulltext"


def test_evidence_parses_kept_by_other_code_are_not_taken(example_copy: Path, cache: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _evidence_read(example_copy)
    monkeypatch.setattr(kept, "code_digest", lambda: "other code")
    reads = []
    monkeypatch.setattr(folder, "read_evidence",
                        lambda root, rel, read=folder.read_evidence: reads.append(rel) or read(root, rel))
    _evidence_read(example_copy)
    assert len(reads) == 4  # every file read again: the value kept names its parses by the code that made them


def _ledger_read(review: Path) -> tuple:
    """What loading the review gives of ledger.jsonl, as a command of its own would load it."""
    loaded, problems = _loaded(review)
    return (loaded.ledger, loaded.payloads, loaded.ledger_lines, loaded.ledger_unread, loaded.ledger_misplaced,
            [problem for problem in problems if problem.path == "ledger.jsonl"])


def _texts(value: object) -> Iterator[str]:
    """Every string `value` holds, its models' fields' values in their order."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _texts(getattr(value, name))
    elif isinstance(value, dict):
        for key, each in value.items():
            yield from (*_texts(key), *_texts(each))
    elif isinstance(value, list | tuple):
        for each in value:
            yield from _texts(each)


def test_the_ledger_read_again_is_its_kept_parse(example_copy: Path, cache: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    first = _ledger_read(example_copy)
    assert len(list(cache.glob("ledger-*.pickle"))) == 1 and len(first[0]) == 90
    _not_read_again(monkeypatch, "read_ledger")
    again = _ledger_read(example_copy)
    assert again == first
    # What validation gives of its own (a Literal's string, a default) is that object again, as read afresh: page
    # keys are written by pickle, which writes an object met again as a reference to the first.
    constants = folder._ledger_constants()
    assert {"retrieval", "screening", "phase", "searching", "published", "database"} <= set(constants)
    ours = {id(each) for each in constants}
    assert [id(text) in ours for text in _texts(again[:2])] == [id(text) in ours for text in _texts(first[:2])]
    assert sum(id(text) in ours for text in _texts(first[:2])) > 90
    event_types = {value: value for value in get_args(EventType)}
    assert all(event.type is event_types[event.type] for event in again[0])


def test_a_ledger_with_problems_is_reported_the_same_from_its_kept_parse(
        example_copy: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A payload not valid, an event not valid, an event out of its place, a line that holds no JSON."""
    path = example_copy / "ledger.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"to_phase":"searching"', '"to_phase":"searchin"')
    lines[2] = lines[2].replace('"type":"retrieval"', '"type":"retrieved"')
    lines[3], lines[4] = lines[4], lines[3]
    lines[40] = lines[40][:-5]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    first = run_cli("check", example_copy)
    kept.wait_for_writers()
    assert first[0] == 1
    for where in ("ledger.jsonl:2:", "ledger.jsonl:3:", "ledger.jsonl:41:"):
        assert where in first[1], where
    read = _ledger_read(example_copy)
    assert read[3] == 3 and read[4] is not None and read[1][1] is None  # unread from line 3; misplaced; no payload
    _reported_alike(example_copy, cache, monkeypatch, "read_ledger", _ledger_read, first, read)


def test_pages_built_from_kept_parses_have_the_keys_of_pages_built_afresh(example_copy: Path, tmp_path: Path) -> None:
    """A page key is written by pickle, which writes an object met again as a reference to the first: what a kept
    parse gives back must be one object wherever reading gives one (a decision's value, validated, is its Literal's
    own string), or every page showing it gets another key, and is rendered again, in the next build. (Each build
    in a process of its own, as a user runs them.)"""
    environment = {**os.environ, "SITEGEN_CACHE_DIR": str(tmp_path / "cache")}
    manifests = []
    for number in range(2):
        if number:  # the parses kept by the first build, marked as used long ago: the second uses them
            for name in (tmp_path / "cache").glob("*.pickle"):
                os.utime(name, (0, 0))
        done = subprocess.run([sys.executable, "-m", "sitegen", "build", str(example_copy), "--out",
                               str(tmp_path / f"site-{number}")], cwd=ROOT, env=environment, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        manifests.append((tmp_path / f"site-{number}" / ".sitegen-manifest.json").read_text(encoding="utf-8"))
    used = {name.name.split("-")[0] for name in (tmp_path / "cache").glob("*.pickle") if name.stat().st_mtime > 0}
    assert used >= {"records", "decisions", "evidence", "ledger"}
    assert manifests[1] == manifests[0]


def test_ctrl_c_while_a_parse_is_written_stops_its_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    writer = os.fork()
    if writer == 0:  # stands for a writer: interrupted, it leaves at once (a real one removes its temporary file)
        try:
            time.sleep(60)
        finally:
            os._exit(3)
    monkeypatch.setattr(kept, "_writers", [writer])
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        kept.wait_for_writers()
    assert time.monotonic() - started < 30 and kept._writers == []
    with pytest.raises(ChildProcessError):
        os.waitpid(writer, 0)  # reaped


def test_the_program_holds_only_the_review_it_read_last(example_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `cli.main` ends the process without freeing is the review read last: a command reading its review
    again (publish, after recording a version) must not hold two in memory. Outside the program, nothing is held."""
    inspect(example_copy)
    assert process.held is None
    monkeypatch.setattr(process, "held", [])
    first, _ = inspect(example_copy)
    second, _ = inspect(example_copy)
    assert len(process.held) == 1 and process.held[0] is second is not first


# --------------------------------------------------------------------------- rankings kept between builds


def _rankings(review_dir: Path) -> dict[str, object]:
    """Every batch's ranking and every week's digest, as a build makes them."""
    review, _ = load_review(review_dir)
    screening = ReviewFacts(review).screening
    batches = rank_batches(Relevance(review, screening))
    weeks = weekly_digests(Relevance(review, screening, ranked=batches))
    kept.wait_for_writers()
    return {**{f"batch {n}": r.model_dump() for n, r in batches.items()}, **{w: d.model_dump() for w, d in weeks.items()}}


def _csv_rows(path: Path) -> list[list[str]]:
    return list(csv.reader(path.open(encoding="utf-8", newline="")))


def _write_rows(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as file:
        csv.writer(file, lineterminator="\n").writerows(rows)


def _full_text_decision(review: Path) -> None:
    path = review / "screening" / "full-text" / "reviewer-a.csv"
    rows = _csv_rows(path)
    rows[1][1:3] = ["exclude", "another-reason"] if rows[1][1] == "include" else ["include", ""]
    _write_rows(path, rows)


def _title_abstract_include(review: Path) -> None:
    """A record of the first batch both reviewers excluded now included by both: the prior of later weeks."""
    files = [review / "screening" / "title-abstract" / f"reviewer-{name}.csv" for name in "ab"]
    tables = [_csv_rows(path) for path in files]
    ledger = [json.loads(line) for line in (review / "ledger.jsonl").read_text().splitlines()]
    first_batch = next(event["payload"]["record_ids"] for event in ledger if event["payload"].get("batch") == 1)
    excluded = [row[0] for row in tables[0][1:] if row[0] in first_batch and row[1] == "exclude"
                and any(other[0] == row[0] and other[1] == "exclude" for other in tables[1][1:])]
    for path, rows in zip(files, tables, strict=True):
        for row in rows[1:]:
            if row[0] in excluded[:3]:
                row[1:3] = ["include", ""]
        _write_rows(path, rows)


def _record_title(review: Path) -> None:
    path = review / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        record = json.loads(line)
        record["title"] = f"Object-in-context memory {record.get('title', '')}"
        lines[number] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _cap(review: Path) -> None:
    state = json.loads((review / "state.json").read_text())
    state["max_kept"] = 1
    (review / "state.json").write_text(json.dumps(state))


def _thresholds(review: Path) -> None:
    state = json.loads((review / "state.json").read_text())
    state["keep_from"], state["review_from"] = 60, 40
    (review / "state.json").write_text(json.dumps(state))


def _protocol_terms(review: Path) -> None:
    """The watchlist of the protocol texts the batches were locked under (kept on the ledger), reweighted."""
    path = review / "ledger.jsonl"
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for event in events:
        if isinstance(event["payload"].get("text"), str):
            event["payload"]["text"] = event["payload"]["text"].replace("weight: 1.0", "weight: 0.3")
    path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")


@pytest.mark.parametrize("change", [_full_text_decision, _title_abstract_include, _record_title, _cap, _thresholds,
                                    _protocol_terms])
def test_a_kept_ranking_is_the_ranking_made_afresh(example_copy: Path, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                   change) -> None:
    """Whatever changed, the rankings a build reads (kept or made) are those made afresh: a ranking is named by
    everything it is made from, so a change to any of it (an earlier week's include, a record's text, the cap
    or the thresholds) makes it again, and a change to none of it (a full-text decision) reads it as kept."""
    before = _rankings(example_copy)
    names = set(cache.glob("ranking-*.pickle"))
    assert len(names) >= 2
    change(example_copy)
    kept_or_made = _rankings(example_copy)
    made_again = set(cache.glob("ranking-*.pickle")) - names
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "")
    assert kept_or_made == _rankings(example_copy)
    if change is _full_text_decision:
        assert kept_or_made == before and not made_again
        monkeypatch.setenv("SITEGEN_CACHE_DIR", str(cache))
        monkeypatch.setattr(Scorer, "assess_all", lambda *args: pytest.fail("ranked again"))
        assert _rankings(example_copy) == before
    else:  # made again (the first week's includes are the second's prior: its ranking only)
        assert made_again


def test_a_ranking_is_named_by_the_versions_of_the_libraries_that_rank(example_copy: Path, cache: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _rankings(example_copy)
    names = set(cache.glob("ranking-*.pickle"))
    monkeypatch.setattr(numpy, "__version__", "0.0-another")
    _rankings(example_copy)
    assert set(cache.glob("ranking-*.pickle")) - names


def test_a_value_that_cannot_be_kept_is_still_the_commands(example_copy: Path, cache: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A value that will not pickle, or a cache folder whose times cannot be set, changes nothing but time."""
    unpicklable = [lambda: None]
    assert kept.kept_value("odd", "inputs", cache, lambda: unpicklable, list, libraries=(), kept=1,
                           forked=False) is unpicklable
    assert not list(cache.glob("odd-*"))
    first = _read(example_copy)

    def refused(*args: object) -> None:
        raise PermissionError("a read-only file system")
    monkeypatch.setattr(kept.os, "utime", refused)
    _not_read_again(monkeypatch)
    assert _read(example_copy) == first


def test_no_home_folder_keeps_nothing(example_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No HOME and a user id with no account (a container's `--user 1234`): the check as without a cache."""
    def homeless() -> Path:
        raise RuntimeError("Could not determine home directory.")
    monkeypatch.delenv("SITEGEN_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(homeless))
    assert kept.cache_folder(os.environ, example_copy) is None
    assert run_cli("check", example_copy) == (0, "no problems found\n", "")


def test_nothing_is_kept_in_the_folder_a_build_writes(example_copy: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache folder that is the build's --out: the first build refused the folder its own writer had made."""
    out = tmp_path / "site"
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(out))
    for _ in range(2):
        code, said, _ = run_cli("build", example_copy, "--out", out)
        kept.wait_for_writers()
        assert code == 0 and ("built" in said or "up to date" in said)
        assert not list(out.rglob("*.pickle"))


def test_another_values_file_under_this_name_is_not_read(example_copy: Path, tmp_path: Path, cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept file copied or renamed to another's name (another review's parse) is passed over."""
    first = _read(example_copy)
    [name] = _pickles(cache)
    other = tmp_path / "other"
    shutil.copytree(example_copy, other)
    _broken_records(other)
    _read(other)
    [other_name] = set(_pickles(cache)) - {name}
    other_name.replace(name)
    assert _read(example_copy) == first


def test_abandoned_temporary_files_are_swept_when_values_are_only_read(example_copy: Path, cache: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _read(example_copy)
    abandoned = cache / f".records-{'c' * 40}.pickle.x1y2.tmp"
    abandoned.write_bytes(b"half")
    old = time.time() - kept.ABANDONED_SECONDS - 60
    os.utime(abandoned, (old, old))
    monkeypatch.setattr(kept, "_tidied", set())  # another process
    _not_read_again(monkeypatch)
    _read(example_copy)
    assert not abandoned.exists()


def test_a_writer_forked_as_ctrl_c_comes_is_waited_for(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C raised the moment interrupts are let through again after the fork: the writer is still known, and
    waited for (it outlived the command, writing)."""
    parent, real = os.getpid(), signal.pthread_sigmask

    def interrupted_after(how: int, mask: object) -> object:
        previous = real(how, mask)
        if how == signal.SIG_SETMASK and os.getpid() == parent:
            raise KeyboardInterrupt
        return previous
    monkeypatch.setattr(kept.signal, "pthread_sigmask", interrupted_after)
    monkeypatch.setattr(kept, "_writers", [])
    with pytest.raises(KeyboardInterrupt):
        kept._keep(cache, "odd", cache / f"odd-{'d' * 40}.pickle", ["value"], 1, forked=True)
    assert len(kept._writers) == 1
    kept.wait_for_writers()
    assert kept._writers == []
