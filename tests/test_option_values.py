"""An option's value that is wrong in itself, whatever the review (no time, no ISO week, no text encoding...),
is a usage error as click's own types make one: exit 2, naming the option, nothing written. A value well formed
but wrong for the review at hand (a time before its ledger's latest event, a saved search it does not have) is
the review's problem: exit 1."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import FIXTURES, tree_bytes

# Real exports (copied from /work/shared/realdata into the fixtures: the suite reads nothing outside the repository).
RIS = str(FIXTURES / "ris" / "example_full.ris")
BIB = str(FIXTURES / "bibtex" / "article.bib")
LATER = "2024-01-01T00:00:00Z"  # after the example's latest ledger event, before the clock

WRONG_IN_THEMSELVES = [
    ("--at", ["update", "{review}", "--at", "notatime", "--snapshots", "replay"]),
    ("--at", ["import", "{review}", RIS, "--at", "2026-06-01"]),
    ("--at", ["state", "advance", "{review}", "--at", "2026-02-30T00:00:00Z"]),  # a day February never has
    ("--at", ["protocol", "lock", "{review}", "--at", "1024-01-01T00:00:00Z"]),  # before 1970: a typo in the year
    ("--at", ["protocol", "amend", "{review}", "--at", "2999-01-01T00:00:00Z", "--reason", "typo"]),  # ahead of the clock
    ("--at", ["monitor", "add", "{review}", "--id", "new", "--strategy", "openalex", "x", "--at", "soon"]),
    ("--at", ["monitor", "validate", "{review}", "--at", "yesterday"]),
    ("--at", ["search", "validate", "{review}", "--at", "yesterday"]),
    ("--at", ["verify", "{review}", "--snapshots", "replay", "--at", "yesterday"]),
    ("--now", ["build", "{review}", "--out", "{tmp}/site", "--now", "now"]),
    ("--now", ["publish", "{review}", "--out", "{tmp}/site", "--now", "1960-01-01T00:00:00Z"]),
    ("--week", ["digest", "{review}", "--week", "2026-23"]),
    ("--week", ["digest", "{review}", "--week", "2026-W54"]),
    ("--week", ["digest", "{review}", "--week", "1800-W01", "--out", "{tmp}/digest.md"]),
    ("--encoding", ["import", "{review}", RIS, "--at", LATER, "--encoding", "klingon"]),
    ("--encoding", ["import", "{review}", RIS, "--at", LATER, "--encoding", "base64"]),  # bytes to bytes: no text
    ("--encoding", ["dedupe", RIS, "--out", "{tmp}/sets.csv", "--encoding", "rot13"]),
    ("--encoding", ["import-decisions", "{review}", RIS, "--tool", "rayyan", "--reviewer", "a", "--encoding", ""]),
    ("--encoding", ["verify", "{review}", "--snapshots", "replay", "--bib", BIB, "--encoding", "zlib"]),
    # Text encodings to Python, of no file's text: a domain name's, a string literal's escapes
    ("--encoding", ["import", "{review}", RIS, "--at", LATER, "--encoding", "idna"]),
    ("--encoding", ["dedupe", RIS, "--out", "{tmp}/sets.csv", "--encoding", "unicode_escape"]),
    ("--encoding", ["import-decisions", "{review}", RIS, "--tool", "rayyan", "--reviewer", "a", "--encoding",
                    "raw-unicode-escape"]),
    ("--reason", ["protocol", "amend", "{review}", "--at", LATER, "--reason", " "]),
    ("--source", ["import", "{review}", RIS, "--at", LATER, "--source", "Em\x07base"]),
    ("--source", ["import", "{review}", RIS, "--at", LATER, "--source", "   "]),  # a name in PRISMA nobody sees
    ("--description", ["import", "{review}", RIS, "--at", LATER, "--description", "x" * 2001]),
    ("--title", ["init", "{tmp}/new", "--title", "a\x01b"]),
    ("--id", ["monitor", "add", "{review}", "--id", "W_1", "--strategy", "openalex", "x", "--at", LATER]),
    ("--strategy", ["monitor", "add", "{review}", "--id", "new", "--syntax", "sitegen", "--strategy", "openalex",
                    "rat AND", "--at", LATER, "--snapshots", "replay"]),
    ("--strategy", ["monitor", "add", "{review}", "--id", "new", "--strategy", "pubmed", "rat", "--strategy",
                    "pubmed", "rat", "--at", LATER, "--snapshots", "replay"]),  # given twice
    ("--citations", ["monitor", "add", "{review}", "--id", "new", "--citations", "citing: W1", "--citations",
                     "citing: https://openalex.org/W1", "--at", LATER, "--snapshots", "replay"]),
    ("--records", ["export", "{review}", "--format", "prisma2020-csv", "--records", "all", "--out", "{tmp}/p.csv"]),
    ("--sources", ["search", "rat", "--sources", "scopus", "--snapshots", "replay", "--review", "{review}"]),
    ("--snapshots", ["search", "rat", "--sources", "openalex", "--snapshots", "record"]),
    ("QUERY", ["search", "rat AND (mouse", "--snapshots", "replay", "--review", "{review}"]),
    ("--batch", ["screen", "rank", "{review}", "--batch", "0"]),
    ("FIELD", ["state", "set", "{review}", "title", "x"]),  # no field state set may set
    ("FIELD", ["state", "set", "{review}", "phase", "published"]),
    ("VALUE", ["state", "set", "{review}", "max_kept", "abc"]),
    ("VALUE", ["state", "set", "{review}", "max_kept", "0"]),
    ("VALUE", ["state", "set", "{review}", "status_note", "a\x01b"]),
    ("--seen", ["import", "{review}", RIS, "--at", LATER, "--seen", ""]),  # no saved search's id
    ("--id", ["monitor", "status", "{review}", "--id", "W_1"]),
    ("--id", ["monitor", "validate", "{review}", "--id", "no such"]),
    ("--id", ["search", "validate", "{review}", "--id", "", "--at", LATER]),
]


@pytest.mark.parametrize(("option", "arguments"), WRONG_IN_THEMSELVES,
                         ids=[" ".join(arguments[:2]) + f" {option}" for option, arguments in WRONG_IN_THEMSELVES])
def test_a_value_wrong_in_itself_is_a_usage_error_naming_its_option(sitegen, example_copy, tmp_path, option,
                                                                    arguments):
    before = tree_bytes(tmp_path)
    code, _, err = sitegen(*(a.format(review=example_copy, tmp=tmp_path) for a in arguments))
    assert code == 2 and f"Invalid value for '{option}'" in err, err
    assert "Traceback" not in err
    assert tree_bytes(tmp_path) == before


WRONG_FOR_THIS_REVIEW = [
    (["update", "{review}", "--at", "2020-01-01T00:00:00Z", "--snapshots", "replay"], "earlier than the latest ledger"),
    (["build", "{review}", "--out", "{tmp}/site", "--now", "2020-01-01T00:00:00Z"], "earlier than the latest ledger"),
    (["import", "{review}", RIS, "--at", LATER, "--seen", "no-such-search"], "has no saved search of that id"),
    (["monitor", "status", "{review}", "--id", "no-such-search"], "no saved search 'no-such-search'"),
    (["monitor", "validate", "{review}", "--id", "no-such-search", "--at", LATER], "no saved search 'no-such-search'"),
    (["screen", "rank", "{review}", "--batch", "99"], "there is no screening batch 99"),
]


@pytest.mark.parametrize(("arguments", "message"), WRONG_FOR_THIS_REVIEW, ids=[m for _, m in WRONG_FOR_THIS_REVIEW])
def test_a_value_well_formed_but_wrong_for_the_review_is_the_reviews_problem(sitegen, example_copy, tmp_path,
                                                                             arguments, message):
    before = tree_bytes(tmp_path)
    code, _, err = sitegen(*(a.format(review=example_copy, tmp=tmp_path) for a in arguments))
    assert code == 1 and message in err, err
    assert tree_bytes(tmp_path) == before


def test_the_library_raises_the_same_error_for_its_callers(example_copy):
    # Called without the command line, the check is the library's own: a SitegenError naming the option.
    from sitegen import commands
    from sitegen.errors import OptionInvalid, SitegenError

    with pytest.raises(OptionInvalid, match="^--week '2026-23' is not an ISO week") as raised:
        commands.digest(example_copy, "2026-23")
    assert isinstance(raised.value, SitegenError) and raised.value.option == "--week"


NOT_UTF8 = "a\udcff\udcfeb"  # bytes 0xFF 0xFE on the command line, as Python reads them (surrogateescape)

NOT_UTF8_TEXT = [
    ("--topic", ["loop", "{tmp}", "--topic", NOT_UTF8, "--snapshots", "replay"]),  # was a traceback
    ("VALUE", ["state", "set", "{review}", "status_note", NOT_UTF8]),
    ("QUERY", ["search", NOT_UTF8, "--snapshots", "replay", "--review", "{review}"]),
    ("--strategy", ["monitor", "add", "{review}", "--id", "new", "--strategy", "pubmed", NOT_UTF8, "--at", LATER]),
    ("--title", ["init", "{tmp}/new", "--title", NOT_UTF8]),
    ("--rayyan-reviewer", ["import-decisions", "{review}", RIS, "--tool", "rayyan", "--reviewer", "a",
                           "--rayyan-reviewer", NOT_UTF8]),
    # read by a callback first: its own message quoted the surrogates, or (--columns) went on to the file's columns
    ("--columns", ["import", "{review}", RIS, "--at", LATER, "--columns", f"title={NOT_UTF8}"]),
    ("--at", ["import", "{review}", RIS, "--at", NOT_UTF8]),
    ("--week", ["digest", "{review}", "--week", NOT_UTF8]),
]


@pytest.mark.parametrize(("parameter", "arguments"), NOT_UTF8_TEXT, ids=[p for p, _ in NOT_UTF8_TEXT])
def test_text_that_is_not_utf8_is_a_usage_error_naming_its_parameter(sitegen, example_copy, tmp_path, parameter,
                                                                     arguments):
    before = tree_bytes(tmp_path)
    code, _, err = sitegen(*(a.format(review=example_copy, tmp=tmp_path) for a in arguments))
    assert code == 2 and f"Invalid value for '{parameter}'" in err and "is not UTF-8 text (byte 0xFF)" in err, err
    assert tree_bytes(tmp_path) == before


def test_a_path_need_not_be_utf8(sitegen, example_copy, tmp_path):
    # File names are bytes: only text is held to UTF-8.
    out = tmp_path / NOT_UTF8
    code, _, err = sitegen("export", example_copy, "--format", "ris", "--out", out)
    assert code == 0 and out.is_file(), err



@pytest.mark.parametrize("name", [f"{NOT_UTF8}.ris", "two\nlines.ris"])
def test_a_file_named_with_bytes_that_are_not_text_is_imported_and_named_as_messages_show_it(sitegen, example_copy,
                                                                                             tmp_path, name):
    # The ledger keeps every import's file name for good, in text only: such a name was 'the import cannot be
    # recorded (name: … unable to parse raw data as a unicode string)', exit 1.
    from sitegen.errors import shown_path

    path = tmp_path / name
    shutil.copy(RIS, path)
    code, printed, err = sitegen("import", example_copy, path, "--at", LATER, "--source", "Embase")
    assert code == 0, err
    event = json.loads((example_copy / "ledger.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert event["payload"]["file"]["name"] == shown_path(name) and shown_path(name).startswith('"')
    assert shown_path(path) in printed

NOT_PRINTABLE = [  # an output path whose content is no text to print: a site, a review, CSVs, a report
    ("--out", ["build", "{review}", "--out", "-"]),
    ("--out", ["publish", "{review}", "--out", "-", "--now", LATER]),
    ("--report", ["update", "{review}", "--at", LATER, "--snapshots", "replay", "--report", "-"]),
    ("--out", ["dedupe", RIS, "--out", "-"]),
    ("--probable", ["dedupe", RIS, "--out", "{tmp}/sets.csv", "--probable", "-"]),
    ("--out", ["evaluate", "--runs", RIS, "--judgments", RIS, "--out", "-"]),
    ("--out", ["loop", "{tmp}", "--topic", "t", "--snapshots", "replay", "--out", "-"]),
    ("--out", ["schema", "--out", "-"]),
    ("DIRECTORY", ["init", "-"]),
]


@pytest.mark.parametrize(("option", "arguments"), NOT_PRINTABLE, ids=[" ".join(a[:2]) + f" {o}" for o, a in NOT_PRINTABLE])
def test_a_dash_for_an_output_that_cannot_be_printed_is_a_usage_error(sitegen, example_copy, tmp_path, monkeypatch,
                                                                      option, arguments):
    # '-' was taken as a name: a site, a review or a file named "-" was written in the working folder.
    monkeypatch.chdir(tmp_path)
    before = tree_bytes(tmp_path)
    code, _, err = sitegen(*(a.format(review=example_copy, tmp=tmp_path) for a in arguments))
    assert code == 2 and f"Invalid value for '{option}'" in err and "'-' means standard output" in err, err
    assert tree_bytes(tmp_path) == before and not (tmp_path / "-").exists()


@pytest.mark.parametrize("arguments", [["export", "{review}", "--format", "ris", "--records", "all"],
                                       ["digest", "{review}", "--week", "2024-W01"]], ids=["export", "digest"])
def test_a_dash_for_an_output_that_can_be_printed_is_standard_output(sitegen, example_copy, tmp_path, monkeypatch,
                                                                     arguments):
    monkeypatch.chdir(tmp_path)
    arguments = [a.format(review=example_copy) for a in arguments]
    before = tree_bytes(tmp_path)
    printed = sitegen(*arguments)
    assert printed[0] == 0 and printed[1], printed
    assert sitegen(*arguments, "--out", "-") == printed
    assert tree_bytes(tmp_path) == before and not (tmp_path / "-").exists()
