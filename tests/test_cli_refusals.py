"""What the command line refuses, and how: a problem of the review's files is exit 1 at its file and line, and
nothing is written."""

from __future__ import annotations

import shutil

import click
import pytest
from click.testing import CliRunner
from conftest import ROOT, tree_bytes
from test_cli_help import _exit_table

from sitegen.cli import TextCommand
from sitegen.errors import EXIT_INVALID, EXIT_USAGE


def test_an_amendment_refused_for_the_protocols_version_names_its_line(sitegen, example_copy):
    """The example's protocol is at version 2: an edit that says version 5 is refused at protocol.md's version line
    (the refusal named no line), and one whose version cannot be raised (written over two lines) likewise."""
    protocol = example_copy / "protocol.md"
    text = protocol.read_text()
    assert text.splitlines()[1] == "version: 2"
    protocol.write_text(text.replace("version: 2\n", "version: 5\n", 1) + "\nOne more sentence.\n")
    before = tree_bytes(example_copy)
    code, _, err = sitegen("protocol", "amend", example_copy, "--at", "2026-01-20T00:00:00Z", "--reason", "clarified")
    assert code == EXIT_INVALID
    assert err.splitlines() == [f"{example_copy}/protocol.md:2:1: error: version 5: the amendment of version 2 must "
                                "be version 3 [protocol-version]", "1 problem found",
                                "error: fix the problems above; nothing was written"]
    assert tree_bytes(example_copy) == before
    protocol.write_text(text.replace("version: 2\n", "version:\n  2\n", 1) + "\nOne more sentence.\n")
    code, _, err = sitegen("protocol", "amend", example_copy, "--at", "2026-01-20T00:00:00Z", "--reason", "clarified")
    assert code == EXIT_INVALID
    assert err.startswith(f"{example_copy}/protocol.md:2:1: error: could not raise the version line; set `version: 3` "
                          "yourself, then amend")


# Each path argument's kind of refusal, on the command line (exit 2, naming the argument and the path, nothing
# written): {file} is a file, {folder} a folder, {review} the example's copy.
PATHS_REFUSED = [
    (("check", "{file}"), "'DIRECTORY': {file} is not a folder"),
    (("build", "{file}/", "--out", "{folder}/site"), "'DIRECTORY': {file}/ cannot be opened (Not a directory)"),
    (("schema", "--out", "{file}/x"), "'--out': {file}/x cannot be opened (Not a directory)"),
    (("dedupe", "{folder}", "--out", "{folder}/o.csv"), "'SOURCE': {folder} is a folder, not a file"),
    (("build", "{review}", "--out", "{file}"), "'--out': {file} is not a folder"),
    (("publish", "{review}", "--out", "{file}"), "'--out': {file} is not a folder"),
    (("init", "{file}"), "'DIRECTORY': {file} is not a folder"),
    (("import", "{review}", "{file}/", "--at", "2026-01-02T00:00:00Z"),
     "'FILES...': {file}/ ends in '/', which names a folder; give a file name"),
    (("import", "{review}", "-", "--at", "2026-01-02T00:00:00Z"),
     "'FILES...': '-' means standard input, which this command does not read; give a path ('./-' for one named '-')"),
    (("import-decisions", "{review}", "", "--tool", "rayyan", "--reviewer", "ab"),
     "'SOURCE': an empty path (an unset variable?): give a file or folder name"),
]


@pytest.mark.parametrize(("args", "said"), PATHS_REFUSED)
def test_a_path_of_the_wrong_kind_is_refused_as_it_is_parsed(sitegen, example_copy, tmp_path, args, said):
    """Each was click's words ("File '-' does not exist.", of a file "x.ris/" too), or reached the command: a
    review folder named with a '/' after a file's name was exit 1, and schema's --out 'FILE/x' said 'File exists'."""
    fill = {"file": tmp_path / "records.ris", "folder": tmp_path / "folder", "review": example_copy}
    fill["file"].write_text("TY  - JOUR\nTI  - A title\nER  - \n", encoding="utf-8")
    fill["folder"].mkdir()
    before = tree_bytes(tmp_path)
    code, printed, err = sitegen(*[arg.format(**fill) for arg in args])
    assert (code, printed) == (EXIT_USAGE, "") and err.endswith(f"Invalid value for {said.format(**fill)}\n"), err
    assert tree_bytes(tmp_path) == before


@pytest.mark.parametrize("command", [("export", "{review}", "--format", "ris"), ("digest", "{review}", "--week", "2023-W15"),
                                     ("dedupe", "{file}")])
def test_a_file_to_write_named_with_a_slash_after_it_is_refused(sitegen, example_copy, tmp_path, command):
    """Path() drops the '/': `--out new.ris/`, a folder to most programs, wrote a file new.ris."""
    fill = {"file": tmp_path / "records.ris", "review": example_copy}
    fill["file"].write_text("TY  - JOUR\nTI  - A title\nER  - \n", encoding="utf-8")
    before = tree_bytes(tmp_path)
    code, _, err = sitegen(*[arg.format(**fill) for arg in command], "--out", f"{tmp_path}/new.ris/")  # a Path drops it too
    assert (code, tree_bytes(tmp_path)) == (EXIT_USAGE, before)
    assert f"'--out': {tmp_path}/new.ris/ ends in '/', which names a folder; give a file name" in err


@pytest.mark.parametrize(("args", "command", "said"), [
    (("digest", "{review}", "--week", "2026-23"), "digest", "'--week': '2026-23' is not an ISO week such as 2026-W23"),
    (("monitor", "add", "{review}", "--id", "Bad Id", "--strategy", "openalex", "q", "--at", "2026-06-01T00:00:00Z"),
     "monitor add", "'--id': 'Bad Id': a saved search's id is"),
])
def test_a_value_the_library_refuses_is_a_usage_error_as_clicks_own(sitegen, example_copy, args, command, said):
    """As an option's callback (--week) or in the command (--id), the library's OptionInvalid: it was shown with no
    usage line and no word of --help, as no click usage error is."""
    before = tree_bytes(example_copy)
    code, printed, err = sitegen(*[arg.format(review=example_copy) for arg in args])
    assert (code, printed) == (EXIT_USAGE, "")
    # "cli": the program's name in click's test runner
    assert err.startswith(f"Usage: cli {command} [OPTIONS] DIRECTORY\nTry 'cli {command} --help' for help.\n\n"
                          f"Error: Invalid value for {said}"), err
    assert tree_bytes(example_copy) == before


# Every option naming a file a command writes, with the rest of a command line that would otherwise run: {file} is
# that file, already there; {review} the example's copy; {ris} a reference file; {runs}, {judgments} evaluate's.
FILES_WRITTEN = [
    ("--report", ["update", "{review}", "--at", "2026-01-02T00:00:00Z", "--snapshots", "replay", "--report", "{file}"]),
    ("--report", ["monitor", "add", "{review}", "--id", "again", "--strategy", "openalex", "x", "--at",
                  "2026-01-02T00:00:00Z", "--snapshots", "replay", "--report", "{file}"]),
    ("--out", ["export", "{review}", "--format", "ris", "--out", "{file}"]),
    ("--out", ["digest", "{review}", "--week", "2023-W15", "--out", "{file}"]),
    ("--out", ["evaluate", "--runs", "{runs}", "--judgments", "{judgments}", "--out", "{file}"]),
    ("--out", ["dedupe", "{ris}", "--out", "{file}"]),
]


@pytest.mark.parametrize(("option", "args"), FILES_WRITTEN, ids=[" ".join(a[:2]) for _, a in FILES_WRITTEN])
def test_every_file_a_command_writes_is_replaced_only_with_force(sitegen, example_copy, tmp_path, option, args):
    """`update --report FILE` (and `monitor add`'s) replaced a file already there without a word, evaluate never
    replaced one, dedupe replaced its own: each now refuses one unless --force, as export and digest did, before
    it reads or writes anything (exit 2, naming the option and the file)."""
    fill = {"review": example_copy, "file": tmp_path / "taken.txt", "ris": tmp_path / "records.ris",
            "runs": tmp_path / "runs.json", "judgments": tmp_path / "judgments.json"}
    fill["ris"].write_text("TY  - JOUR\nTI  - A title\nER  - \n", encoding="utf-8")
    fill["runs"].write_text('{"q1": ["a"]}', encoding="utf-8")
    fill["judgments"].write_text('{"q1": {"a": 1}}', encoding="utf-8")
    # dedupe replaces only a file it wrote (its first line), --force or not
    fill["file"].write_text("merged_ids\r\nmy own line\n" if args[0] == "dedupe" else "my own notes\n", encoding="utf-8")
    before = tree_bytes(tmp_path)
    code, printed, err = sitegen(*[arg.format(**fill) for arg in args])
    assert (code, printed) == (EXIT_USAGE, ""), err
    assert f"Error: {option} {fill['file']}: already exists; give --force to replace it" in err, err
    assert tree_bytes(tmp_path) == before
    code, _, err = sitegen(*[arg.format(**fill) for arg in args], "--force")
    assert "already exists" not in err and "Traceback" not in err, err
    if code in (0, 3):  # the command ran (a replayed run may miss a source's snapshot): the file is replaced
        assert fill["file"].read_text(encoding="utf-8") != before["taken.txt"].decode()


# Every command taking a review folder, with options it would otherwise run with; {file} is a file that is not
# what the option wants (a bad export, a report already there) and {out} a file to write.
REVIEW_COMMANDS = [
    ["build", "{folder}", "--out", "{out}"],
    ["publish", "{folder}", "--out", "{out}", "--now", "2026-01-02T00:00:00Z"],
    ["monitor", "add", "{folder}", "--id", "watch", "--strategy", "openalex", "x", "--at", "2026-01-02T00:00:00Z",
     "--report", "{file}"],
    ["monitor", "status", "{folder}"],
    ["monitor", "validate", "{folder}"],
    ["update", "{folder}", "--at", "2026-01-02T00:00:00Z", "--report", "{file}"],
    ["verify", "{folder}", "--at", "2026-01-02T00:00:00Z", "--bib", "{file}"],
    ["import", "{folder}", "{file}", "--at", "2026-01-02T00:00:00Z"],
    ["prisma", "{folder}"],
    ["probable-duplicates", "{folder}"],
    ["export", "{folder}", "--format", "ris", "--out", "{file}"],
    ["import-decisions", "{folder}", "{file}", "--tool", "rayyan", "--reviewer", "ab"],
    ["screen", "status", "{folder}"],
    ["screen", "conflicts", "{folder}"],
    ["screen", "kappa", "{folder}"],
    ["screen", "rank", "{folder}", "--imported"],
    ["digest", "{folder}", "--week", "2026-W01", "--out", "{file}"],
    ["state", "show", "{folder}"],
    ["state", "advance", "{folder}", "--at", "2026-01-02T00:00:00Z"],
    ["state", "set", "{folder}", "status_note", "x"],
    ["protocol", "lock", "{folder}", "--at", "2026-01-02T00:00:00Z"],
    ["protocol", "amend", "{folder}", "--at", "2026-01-02T00:00:00Z", "--reason", "x"],
    ["ledger", "anchor", "{folder}"],
    ["recover", "{folder}"],
]


@pytest.mark.parametrize("args", REVIEW_COMMANDS, ids=[" ".join(a[:2]) for a in REVIEW_COMMANDS])
def test_a_folder_that_is_no_review_is_said_first_and_alike_by_every_command(sitegen, tmp_path, args):
    """import-decisions read the export first (a wrong folder was told as the export's first line), update and
    export checked their --report/--out first, and the others said it one of two ways (a list of problems, or
    'it has no review.yaml'): each now says it first, in one sentence, before reading or writing anything."""
    folder = tmp_path / "not a review é"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a review\n", encoding="utf-8")
    fill = {"folder": folder, "file": tmp_path / "export.csv", "out": tmp_path / "site"}
    fill["file"].write_text("x\n", encoding="utf-8")  # no export of any tool, no .bib, and there already
    before = tree_bytes(tmp_path)
    code, printed, err = sitegen(*[arg.format(**fill) for arg in args])
    assert (code, printed) == (EXIT_INVALID, "")
    # `init` fills only a new or empty folder: it was suggested for this one, which holds a file, and refused.
    assert err == (f"error: {folder} is not a review folder: review.yaml is missing (`sitegen init` makes one in a "
                   f"new or empty folder, such as `sitegen init '{folder}/my-review'`); nothing was read or "
                   "written\n"), err
    assert tree_bytes(tmp_path) == before


@pytest.mark.parametrize(("given", "said"), [
    (".", "the review folders in it: reviews/a, reviews/b"),  # run at the repository's root
    ("reviews", "the review folders in it: reviews/a, reviews/b"),
    ("reviews/a/screening/full-text", "it is inside the review folder reviews/a: give that"),  # run in its folders
])
def test_a_folder_near_reviews_is_told_which_to_give_not_to_init_one(sitegen, tmp_path, monkeypatch, given, said):
    # Each was told "`sitegen init FOLDER` makes one": init refuses a folder with content, and one made inside a review
    # or beside reviews/ is no review the workflows run.
    repository = tmp_path / "repository"
    for name in ("b", "a"):
        (repository / "reviews" / name / "screening" / "full-text").mkdir(parents=True)
        (repository / "reviews" / name / "review.yaml").write_text("schema_version: 1\n")
    (repository / ".github").mkdir()
    monkeypatch.chdir(repository)
    before = tree_bytes(repository)
    code, printed, err = sitegen("build", given)
    assert (code, printed) == (EXIT_INVALID, "")
    assert err == f"error: {given} is not a review folder: review.yaml is missing ({said}); nothing was read or written\n"
    code, printed, err = sitegen("build", "reviews/c")  # a name mistyped
    assert code == EXIT_INVALID and "reviews/c does not exist (the review folders there: reviews/a, reviews/b)" in err
    assert tree_bytes(repository) == before
    shutil.rmtree(repository / "reviews")  # none yet at a repository's root: made where the workflows look for one
    (repository / ".git").mkdir()
    code, printed, err = sitegen("check", ".")
    assert code == EXIT_INVALID and "such as `sitegen init reviews/my-review`)" in printed, printed


def test_search_with_a_review_that_is_no_review_folder_says_so_first(sitegen, tmp_path):
    """`search --review DIR --snapshots replay` looked for DIR/snapshots and said a response was not recorded."""
    folder = tmp_path / "not a review é"
    folder.mkdir()
    code, printed, err = sitegen("search", "stroke", "--review", folder, "--snapshots", "replay")
    assert (code, printed) == (EXIT_INVALID, "")
    assert err == (f"error: {folder} is not a review folder: review.yaml is missing (`sitegen init '{folder}'` "
                   "makes one); nothing was read or written\n")
    assert list(folder.iterdir()) == []


def test_a_loop_draft_or_bib_that_does_not_exist_is_said_so(sitegen, tmp_path):
    """It said "--draft …/nope.md is not a file", as of a folder, and not where a relative path was looked for. A path
    that is not there, or a folder where a file is wanted, is a usage error (exit 2), as the README's table says: it
    was exit 1, the CLI being unable to tell it (a relative --draft is in the manuscript's folder)."""
    folder = tmp_path / "paper é"
    folder.mkdir()
    (folder / "refs.bib").write_text("", encoding="utf-8")
    code, _, err = sitegen("loop", folder, "--topic", "t", "--draft", "nope.md")
    assert code == EXIT_USAGE
    assert err.endswith(f"Invalid value for '--draft': {folder}/nope.md does not exist (a relative --draft is in "
                        f"{folder})\n"), err
    (folder / "draft.md").mkdir()
    code, _, err = sitegen("loop", folder, "--topic", "t", "--draft", "draft.md")
    assert code == EXIT_USAGE and err.endswith(f"Invalid value for '--draft': {folder}/draft.md is not a file\n"), err
    (folder / "draft.md").rmdir()
    (folder / "draft.md").write_text("A claim [@a].\n", encoding="utf-8")
    (folder / "rounds").write_text("mine\n", encoding="utf-8")  # --out is in the manuscript's folder, as --draft
    code, _, err = sitegen("loop", folder, "--topic", "t", "--out", "rounds", "--snapshots", "replay")
    assert code == EXIT_USAGE and err.endswith(f"Invalid value for '--out': {folder}/rounds is not a folder\n"), err
    assert sorted(path.name for path in folder.iterdir()) == ["draft.md", "refs.bib", "rounds"]


def test_a_site_folder_that_is_a_file_is_a_usage_error_wherever_it_is_found(example_copy, tmp_path):
    """`build --out FILE`: the CLI says "is not a folder" (exit 2) as it parses --out, but the library, called
    itself or finding the file there by the time it builds, refused it as exit 1, the status of a folder sitegen
    will not write into. A path that is not a folder where one is wanted is a wrong command line: exit 2."""
    from sitegen import commands
    from sitegen.errors import OptionInvalid

    taken = tmp_path / "site"
    taken.write_text("mine\n", encoding="utf-8")
    for build in (commands.build, commands.publish):
        with pytest.raises(OptionInvalid) as refused:
            build(example_copy, taken, None)
        assert refused.value.exit_code == EXIT_USAGE and str(refused.value) == f"--out {taken} is a file, not a folder"
    assert taken.read_text(encoding="utf-8") == "mine\n"


def test_a_folder_sitegen_will_not_write_into_is_a_refusal_and_a_file_force_would_replace_a_usage_error(
        sitegen, example_copy, tmp_path):
    """`init DIR` on a folder with content exited 1 where the README's table said nothing of it, beside `export --out`
    on a file already there (exit 2). The rule, one for every command: no option makes sitegen write into a folder
    holding what it may not replace (`init DIR`, `build --out` a folder it did not build), so that is a refusal,
    exit 1; a file already there is replaced with --force, so without it the command line is wrong, exit 2."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("keep me", encoding="utf-8")
    taken = tmp_path / "taken.ris"
    taken.write_text("mine\n", encoding="utf-8")
    for args, status, said in [
        (("init", theirs), EXIT_INVALID, "it exists and is not empty (nothing was written)"),
        (("build", example_copy, "--out", theirs), EXIT_INVALID, "it is not empty and was not built by sitegen"),
        (("export", example_copy, "--format", "ris", "--out", taken), EXIT_USAGE, "already exists; give --force"),
    ]:
        code, _, err = sitegen(*args)
        assert (code, said in err) == (status, True), err
    assert [p.name for p in theirs.iterdir()] == ["notes.txt"] and taken.read_text(encoding="utf-8") == "mine\n"
    table = _exit_table()
    assert "`init DIR` a folder with content" in table[EXIT_INVALID] and "`build --out`" in table[EXIT_INVALID]
    assert "a file to write that is already there, without `--force`" in table[EXIT_USAGE]


def test_a_symbolic_link_given_to_write_to_or_read_is_said_to_be_one_naming_where_it_leads(sitegen, example_copy, tmp_path):
    """`init LINK` to an empty folder was refused as a folder that "exists and is not empty", and a link leading
    nowhere "is not a folder" (`check`) or "does not exist" (`import`, `loop --draft`): each is refused as the link it is, naming
    the real folder to give instead, as `build --out` refuses one. `schema --out` wrote through a link into a review
    (its check of a review around the folder looked at the link's path, not where it leads)."""
    real, link, nowhere = tmp_path / "real", tmp_path / "link", tmp_path / "nowhere"
    real.mkdir()
    link.symlink_to(real, target_is_directory=True)
    nowhere.symlink_to(tmp_path / "gone")
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "draft.md").write_text("A claim [@a].\n", encoding="utf-8")
    (paper / "refs.bib").write_text("", encoding="utf-8")
    for args, status, said in [
        (("init", link), EXIT_INVALID, f"refusing to initialise {link}: it is a symbolic link to {real} (nothing was "
                                       "written); give the real folder"),
        (("init", nowhere), EXIT_INVALID, f"it is a symbolic link to {tmp_path}/gone, which does not exist"),
        (("build", example_copy, "--out", link), EXIT_INVALID, f"it is a symbolic link to {real}; give the real folder"),
        (("schema", "--out", link), EXIT_INVALID, f"it is a symbolic link to {real}; give the real folder"),
        (("check", nowhere), EXIT_INVALID, f"{nowhere}: error: is a symbolic link to {tmp_path}/gone, which does not "
                                           "exist [not-a-folder]"),
        (("prisma", nowhere), EXIT_INVALID, f"{nowhere} is a symbolic link to {tmp_path}/gone, which does not exist"),
        (("import", example_copy, nowhere, "--at", "2026-01-02T00:00:00Z"), EXIT_USAGE,
         f"'FILES...': {nowhere} is a symbolic link to {tmp_path}/gone, which does not exist"),
        (("check", link), EXIT_INVALID, f"(`sitegen init {real}` makes one)"),
        (("loop", paper, "--topic", "t", "--draft", nowhere), EXIT_USAGE,
         f"'--draft': {nowhere} is a symbolic link to {tmp_path}/gone, which does not exist"),
        (("loop", paper, "--topic", "t", "--out", nowhere, "--snapshots", "replay"), EXIT_USAGE,
         f"'--out': {nowhere} is a symbolic link to {tmp_path}/gone, which does not exist"),
    ]:
        code, printed, err = sitegen(*args)  # `check` prints its problems
        assert (code, said in printed + err, "not empty" in err) == (status, True, False), printed + err
    assert list(real.iterdir()) == [] and not (tmp_path / "gone").exists()
    inside = tmp_path / "into-review"
    inside.symlink_to(example_copy / "searches", target_is_directory=True)
    before = tree_bytes(example_copy)
    for out, said in [(inside, "it is a symbolic link to"), (inside / "schemas", "is inside the review folder")]:
        code, _, err = sitegen("schema", "--out", out)
        assert (code, said in err) == (EXIT_INVALID, True), err
    assert tree_bytes(example_copy) == before


# Each command that, as given, only reads, and one that writes of each kind (the review, a file, a site): on a review
# with a problem, only one that would have written says nothing was.
READS_ONLY = [("screen", "status", "{review}"), ("screen", "conflicts", "{review}"), ("screen", "kappa", "{review}"),
              ("screen", "rank", "{review}", "--imported"), ("state", "show", "{review}"), ("prisma", "{review}"),
              ("monitor", "status", "{review}"), ("monitor", "validate", "{review}"),
              ("probable-duplicates", "{review}"), ("export", "{review}", "--format", "ris"),
              ("digest", "{review}", "--week", "2026-W02"), ("verify", "{review}", "--snapshots", "replay")]
WRITES = [("state", "advance", "{review}", "--at", "2026-01-20T00:00:00Z"), ("build", "{review}", "--out", "{site}"),
          ("export", "{review}", "--format", "ris", "--out", "{out}"),
          ("monitor", "validate", "{review}", "--at", "2026-01-20T00:00:00Z")]


def _broken(review) -> None:
    """A review whose records.jsonl's first line is no JSON: every command that loads the review refuses it."""
    path = review / "records.jsonl"
    path.write_text("{\n" + path.read_text().split("\n", 1)[1], encoding="utf-8")


@pytest.mark.parametrize("args", READS_ONLY + WRITES, ids=" ".join)
def test_only_a_command_that_would_write_says_nothing_was_written(sitegen, example_copy, tmp_path, args):
    """`screen status` on a review with a problem ended "nothing was written", which a command that only reads
    never would have."""
    _broken(example_copy)
    before = tree_bytes(example_copy)
    code, _, err = sitegen(*[arg.format(review=example_copy, site=tmp_path / "site", out=tmp_path / "out.ris")
                             for arg in args])
    assert code == EXIT_INVALID and f"{example_copy}/records.jsonl:1:" in err, err
    last = err.splitlines()[-1]
    said = "error: fix the problems above; nothing was written" if args in WRITES else "error: fix the problems above"
    assert last == said
    assert tree_bytes(example_copy) == before


@pytest.mark.parametrize(("args", "option", "taken"), [
    (["monitor", "add", "{review}", "--id", "x", "--strategy", "pubmed", "--at", "2026-01-02T00:00:00Z"],
     "--strategy", "--at"),  # the query left out: it said "Missing option '--at'", which was given
    (["import", "{review}", "{file}", "--source", "--at", "2026-01-02T00:00:00Z"], "--source", "--at"),
    (["build", "{review}", "--out", "--now", "2026-01-02T00:00:00Z"], "--out", "--now"),
    (["check", "{review}", "--format", "--help"], "--format", "--help"),
])
def test_an_option_whose_value_is_left_out_is_named_not_the_option_after_it(sitegen, example_copy, tmp_path, args,
                                                                            option, taken):
    fill = {"review": example_copy, "file": ROOT / "tests" / "fixtures" / "exports" / "records.ris"}
    before = tree_bytes(tmp_path)
    code, printed, err = sitegen(*[arg.format(**fill) for arg in args])
    assert (code, printed) == (EXIT_USAGE, "")
    assert f"Error: Invalid value for '{option}': its value is missing: {taken} after it is an option" in err, err
    assert tree_bytes(tmp_path) == before


@pytest.mark.parametrize("interspersed", [True, False])
def test_a_free_text_argument_refuses_a_word_written_as_an_option_unless_after_the_end_of_options(interspersed):
    """Any command's free-text argument (a note, a query), whether its options may follow its arguments or not: a
    word written as an option is refused (exit 2) unless it comes after `--`; a path argument is taken as given."""
    @click.command(cls=TextCommand, context_settings={"allow_interspersed_args": interspersed})
    @click.argument("folder", type=click.Path())
    @click.argument("text")
    def command(folder: str, text: str) -> None:
        click.echo(f"{folder}|{text}")

    def run(*args: str):
        result = CliRunner().invoke(command, list(args))
        return result.exit_code, result.output

    if not interspersed:  # an option's name after the first argument is read as the argument
        code, output = run("f", "--at")
        assert code == EXIT_USAGE and "--at looks like an option, not a value" in output, output
    code, output = run("f", "--", "--at")
    assert (code, output) == (0, "f|--at\n")
    code, output = run("--", "--f", "--at")
    assert (code, output) == (0, "--f|--at\n")
    if not interspersed:  # a word starting with a single '-' is no option there
        assert run("f", "- pending") == (0, "f|- pending\n")


def test_a_saved_search_added_again_says_what_to_do_instead(sitegen, example_copy):
    # "a saved search 'object-in-context' already exists in …/searches/" left a new user to guess: rerun it, or name
    # the new one otherwise.
    before = tree_bytes(example_copy)
    code, _, err = sitegen("monitor", "add", example_copy, "--id", "object-in-context", "--strategy", "openalex", "x",
                           "--at", "2024-01-01T00:00:00Z", "--snapshots", "replay")
    assert code == EXIT_INVALID
    assert (f"already exists in {example_copy}/searches/: give another --id, or run it again with `sitegen update "
            f"{example_copy} --at TIME`; nothing was written") in err
    assert tree_bytes(example_copy) == before
