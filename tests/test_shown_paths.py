"""A path shown in any message (an error or a success line, check's text) is shown one way: as it is, or in double
quotes with its control characters, bytes that are not UTF-8, backslashes and quotes escaped (errors.shown_path). A
message is one line, and names its path unambiguously. check's GitHub and JSON formats give the path as it is."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, tree_bytes

NOT_UTF8 = "r\udcff"  # a folder named with byte 0xFF, as Python reads it (surrogateescape)


@pytest.mark.parametrize(("path", "shown"), [
    ("site", "site"), ("reviews/été", "reviews/été"),  # nothing to escape: as it is
    ("x\ny", '"x\\ny"'), ("a\tb\r", '"a\\tb\\r"'), ("e\x1b[31m", '"e\\x1b[31m"'),
    (NOT_UTF8, '"r\\xff"'), ("n\x85", '"n\\u0085"'),  # the byte 0x85 and the character U+0085 differ
    ("\u202eevil", '"\\u202eevil"'), ("a\u2028b", '"a\\u2028b"'),  # bidi override, line separator
    ('a"b', '"a\\"b"'), ("a\\xff", '"a\\\\xff"'),  # a quote or backslash of the name's own is escaped
])
def test_a_path_is_shown_as_it_is_or_quoted_and_escaped(path, shown):
    from sitegen.errors import shown_path

    assert shown_path(path) == shown


def test_a_success_line_naming_a_path_is_one_line(sitegen, example_copy, tmp_path):
    out = tmp_path / "x\ny"
    code, printed, err = sitegen("build", example_copy, "--out", out)
    assert code == 0 and printed.startswith(f'built "{tmp_path}/x\\ny" (') and printed.count("\n") == 1, printed + err


def test_an_error_naming_a_path_is_one_line(sitegen, example_copy, tmp_path):
    before = tree_bytes(tmp_path)
    code, _, err = sitegen("export", example_copy, "--format", "ris", "--out", tmp_path / "no\nsuch" / "x.ris")
    assert code == 2 and f'--out "{tmp_path}/no\\nsuch/x.ris": its folder "{tmp_path}/no\\nsuch" does not exist' in err
    assert tree_bytes(tmp_path) == before


def test_a_path_not_utf8_is_shown_alike_by_every_command_and_format(sitegen, example_copy, tmp_path):
    review = tmp_path / NOT_UTF8
    shutil.move(example_copy, review)
    with (review / "state.json").open("a") as state:
        state.write("junk\n")
    before = tree_bytes(tmp_path)
    where = f'"{tmp_path}/r\\xff/state.json":9:1: error: JSON syntax error'
    code, printed, _ = sitegen("check", review)
    assert code == 1 and printed.startswith(where), printed
    code, _, err = sitegen("build", review, "--out", tmp_path / "site")
    assert code == 1 and err.startswith(where), err
    # The machine formats give the path as it is: JSON's escape of the byte reads back as it, and an annotation
    # names the file as the repository does (the runner shows the byte as U+FFFD).
    code, printed, _ = sitegen("check", review, "--format", "json")
    assert code == 1 and json.loads(printed)["problems"][0]["path"] == f"{tmp_path}/{NOT_UTF8}/state.json"
    code, printed, _ = sitegen("check", review, "--format", "github")
    assert code == 1 and f"file={tmp_path}/r\ufffd/state.json,line=9" in printed, printed
    assert tree_bytes(tmp_path) == before


def _run_as_pasted(message: str, cwd) -> subprocess.CompletedProcess:
    """Run the command a message suggests (between backticks) as a shell reads it, with this sitegen."""
    command = re.search(r"`(sitegen [^`]*)`", message).group(1)
    program = f"{shlex.quote(sys.executable)} -m {command}"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    return subprocess.run(["bash", "-c", program], cwd=cwd, env=env, capture_output=True, text=True)


def test_a_command_a_message_suggests_runs_pasted_into_a_shell_on_a_folder_named_with_a_space(sitegen, tmp_path):
    # `sitegen check My Review` is two arguments to a shell: the suggested command names the folder as one.
    folder = tmp_path / "My Review $HOME"
    folder.mkdir()
    code, out, _ = sitegen("check", folder)
    assert code == 1 and "is not a review folder" in out
    assert _run_as_pasted(out, tmp_path).returncode == 0  # `sitegen init …` makes the review
    code, out, _ = sitegen("init", tmp_path / "Another review")
    assert code == 0
    done = _run_as_pasted(out.splitlines()[-1], tmp_path)  # next: … run `sitegen check …`
    assert done.returncode == 0 and "no problems found" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(("given", "args", "said"), [
    ("no\nfile", ("dedupe", "{path}", "--out", "{tmp}/o.csv"), "'SOURCE': \"{tmp}/no\\nfile\" does not exist"),
    (NOT_UTF8 + ".ris", ("import", "{review}", "{path}", "--at", "2026-01-02T00:00:00Z"),
     "'FILES...': \"{tmp}/r\\xff.ris\" does not exist"),
    ("e\x1b[31m", ("search", "x", "--review", "{path}"), "'--review': \"{tmp}/e\\x1b[31m\" does not exist"),
])
def test_a_path_the_command_line_refuses_is_shown_as_every_message_shows_it(sitegen, example_copy, tmp_path, given,
                                                                             args, said):
    """click's own words quoted it with repr() ('no\\nfile'), and showed a byte that is not UTF-8 as U+FFFD."""
    fill = {"path": tmp_path / given, "tmp": tmp_path, "review": example_copy}
    before = tree_bytes(tmp_path)
    code, printed, err = sitegen(*[arg.format(**fill) for arg in args])
    assert (code, printed) == (2, "") and err.endswith(f"Error: Invalid value for {said.format(**fill)}\n"), err
    assert tree_bytes(tmp_path) == before


def test_the_commands_a_new_review_is_told_to_run_name_its_folder_and_run_pasted(sitegen, tmp_path):
    # "lock it (`sitegen protocol lock`)", "`sitegen monitor add` sets one up": pasted, each was refused for want of
    # the folder; the suggestion names it, so that only the time is left to fill in.
    folder = tmp_path / "My Review"
    assert sitegen("init", folder)[0] == 0
    code, out, _ = sitegen("monitor", "status", folder)
    assert code == 0 and f"`sitegen monitor add '{folder}' --id ID --strategy SOURCE QUERY --at TIME`" in out
    code, _, err = sitegen("protocol", "amend", folder, "--at", "2026-01-02T00:00:00Z", "--reason", "x")
    assert code == 1 and f"`sitegen protocol lock '{folder}' --at TIME`" in err
    code, _, err = sitegen("import", folder, ROOT / "tests" / "fixtures" / "exports" / "records.ris",
                           "--at", "2026-01-02T00:00:00Z")
    assert code == 1 and f"`sitegen protocol lock '{folder}' --at TIME`" in err
    done = _run_as_pasted(err.replace("TIME", "2026-01-02T00:00:00Z"), tmp_path)
    assert done.returncode == 0 and "protocol version 1 locked" in done.stdout, done.stdout + done.stderr
    code, _, err = sitegen("protocol", "lock", folder, "--at", "2026-01-03T00:00:00Z")
    assert code == 1 and f"`sitegen protocol amend '{folder}' --at TIME --reason TEXT`" in err
