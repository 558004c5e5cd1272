"""Every example a command's --help shows is a command line that command accepts: an option renamed or
removed since would make the example a wrong one, which a new user copies first. Every command and option is
in README's command table."""

from __future__ import annotations

import re
import shlex

import click
import pytest
from conftest import ROOT

from sitegen.cli import cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def _examples(command: click.Command) -> list[list[str]]:
    """The command lines of the help's "Example:" block, comments left out."""
    help_text = command.help or ""
    if "Example:" not in help_text:
        return []
    block = help_text.split("Example:", 1)[1]
    lines = [line.split("   #")[0].strip() for line in block.splitlines() if line.strip().startswith("sitegen ")]
    return [shlex.split(line)[1:] for line in lines]


EXAMPLES = [(path, example) for path, command in _commands(cli) for example in _examples(command)]


def test_the_commands_people_start_with_show_an_example():
    shown = {path[0] for path, _ in EXAMPLES}
    assert {"init", "check", "build", "publish", "update", "import", "export"} <= shown


def test_each_command_whose_use_is_not_obvious_shows_an_example():
    # Those with a required option or argument beyond DIRECTORY, or a second way to run them: a new user should
    # not have to assemble the command line from the option list.
    shown = {" ".join(path) for path, _ in EXAMPLES}
    assert {"monitor add", "search query", "search validate", "verify", "import-decisions", "dedupe", "evaluate",
            "loop", "digest", "state set", "state advance", "protocol amend", "protocol lock", "monitor retire",
            "monitor reinstate"} <= shown


def test_sitegen_help_shows_a_new_review_s_first_commands_in_order_each_one_its_command_accepts(tmp_path, monkeypatch):
    # `sitegen --help` listed the commands A to Z: a newcomer had no way to tell which comes first (a search or an
    # import is refused until the protocol is locked).
    lines = [line.split("   #")[0].strip() for line in cli.help.split("Example:", 1)[1].splitlines()
             if line.strip().startswith("sitegen ")]
    assert [shlex.split(line)[1] for line in lines[:5]] == ["init", "check", "protocol", "monitor", "import"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reviews" / "my-review").mkdir(parents=True)
    (tmp_path / "embase.ris").touch()
    for line in lines:
        command, words = cli, shlex.split(line)[1:]
        while isinstance(command, click.Group):
            command, words = command.commands[words[0]], words[1:]
        with click.Context(command) as context:
            command.parse_args(context, words)


def _groups(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield (*prefix, name), command
            yield from _groups(command, (*prefix, name))


@pytest.mark.parametrize(("path", "group"), list(_groups(cli)), ids=[" ".join(path) for path, _ in _groups(cli)])
def test_each_group_s_help_names_each_of_its_commands(path, group):
    # `sitegen screen --help` left out `rank`, `sitegen ledger --help` said only "The provenance ledger.": the line a
    # newcomer reads first should say what each command under it is for.
    for name, command in group.commands.items():
        if not command.hidden:
            assert re.search(rf"\b{name}\b", group.help or ""), f"sitegen {' '.join(path)} --help does not name {name}"


@pytest.mark.parametrize(("path", "example"), EXAMPLES, ids=[" ".join(path) for path, _ in EXAMPLES])
def test_each_example_in_the_help_is_a_command_line_its_command_accepts(path, example, tmp_path, monkeypatch):
    command = cli
    for name in path:
        command = command.commands[name]
    # The command the example runs: `sitegen search QUERY` the hidden `search query`, `sitegen search validate`
    # the command `monitor validate` is too.
    runs, words = cli, list(example)
    while isinstance(runs, click.Group):
        name = words[0] if words and words[0] in runs.commands else "query"
        runs, words = runs.commands[name], words[1:] if words and name == words[0] else words
    assert runs is command, example
    example = [*path, *words]
    # Parsed as the command would parse it, without running it, where the files it names exist (parsing
    # checks that an input file is there).
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reviews" / "my-review").mkdir(parents=True)
    (tmp_path / "paper").mkdir()
    for value in example[len(path):]:
        if re.fullmatch(r"[\w-]+\.[a-z]{2,4}", value):
            (tmp_path / value).touch()
    with click.Context(command) as context:
        command.parse_args(context, example[len(path):])


@pytest.mark.parametrize("command", [("init", ""), ("check", ""), ("build", "REVIEW", "--out", ""),
                                     ("export", "REVIEW", "--out", "")])
def test_an_empty_path_is_refused_not_read_as_the_working_folder(command, sitegen, example_copy, tmp_path,
                                                                monkeypatch):
    # `sitegen init "$DIR"` with DIR unset would have initialised the folder the script runs in
    monkeypatch.chdir(tmp_path)
    code, out, err = sitegen(*(str(example_copy) if part == "REVIEW" else part for part in command))
    assert code == 2 and "an empty path (an unset variable?)" in err, out + err
    assert list(tmp_path.iterdir()) == [example_copy]  # nothing written where it runs


def _command_table() -> list[str]:
    """The first cell (the synopsis) of each row of README's command table."""
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("\n## Commands\n"):readme.index("\n### Exit statuses\n")]
    return [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| `sitegen ")]


def _synopsis_name(path: tuple[str, ...], command: click.Command) -> str:
    """How README writes the command: a hidden command (`search query`) is run as its group and arguments."""
    if command.hidden:
        arguments = [param.human_readable_name for param in command.params if isinstance(param, click.Argument)]
        return " ".join(("sitegen", *path[:-1], *arguments))
    return " ".join(("sitegen", *path))


@pytest.mark.parametrize(("path", "command"), list(_commands(cli)), ids=[" ".join(path) for path, _ in _commands(cli)])
def test_every_command_and_option_is_in_the_readme_command_table(path, command):
    # Users read the table, not each --help: an option missing there is one they do not know they have.
    name = _synopsis_name(path, command)
    rows = [cell for cell in _command_table() if f"`{name} " in cell or f"`{name}`" in cell]
    assert rows, f"README's command table has no row for `{name}`"
    missing = [param.opts[0] for param in command.params
               if isinstance(param, click.Option) and not param.hidden and "--help" not in param.opts
               and not any(re.search(rf"{re.escape(option)}(?![\w-])", rows[0])
                           for option in param.opts + param.secondary_opts)]
    assert missing == [], f"README's row for `{name}` does not show {missing}"


def _exit_table() -> dict[int, str]:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("\n### Exit statuses\n"):]
    table = table[:table.index("\n\n", table.index("| status |"))]
    return {int(status): meaning for status, meaning in re.findall(r"^\| (\d+) \| (.+) \|$", table, re.M)}


def test_every_exit_status_is_in_the_readme_table_with_the_commands_that_give_it():
    # One place says every status a script may meet, and the commands that give the ones only some commands give.
    from sitegen import errors

    table = _exit_table()
    assert set(table) == {value for name, value in vars(errors).items() if name.startswith("EXIT_")}
    for path, command in _commands(cli):
        said = re.search(r"Exit status (.+?)(?:\n\n|$)", command.help or "", re.S)
        for status in map(int, re.findall(r"\b(\d+) when", said.group(1) if said else "")):
            assert status in table, f"sitegen {' '.join(path)} --help names exit status {status}"
            if status in (3, 6, 7):  # given by some commands only: the table names them
                assert f"`{_synopsis_name(path, command)}" in table[status], \
                    f"README's exit status {status} does not name sitegen {' '.join(path)}"


def _documented_examples() -> list[tuple[str, list[str]]]:
    """Every `sitegen …` line of a code block in README.md and docs/*.md (a synopsis's optional [--option …]
    read as given; a line with a placeholder `…` left out), as (where, arguments)."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```[a-z]*\n(.*?)```", path.read_text(), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                command = re.search(r"(?:^|&& )(?:\.venv/bin/)?(sitegen .*)", line.split("  #")[0].strip())
                if command is None or "…" in command.group(1):
                    continue
                line = re.sub(r"\[(--[^\[\]]*)\]", r"\1", command.group(1))  # a query's own brackets ("rat"[tiab]) kept
                found.append((f"{path.name}: {line}", shlex.split(line)[1:]))
    return found


DOCUMENTED = _documented_examples()


def test_the_documents_show_examples_of_the_commands_people_start_with():
    assert {args[0] for _, args in DOCUMENTED} >= {"build", "search", "evaluate", "loop", "verify"}


@pytest.mark.parametrize(("where", "example"), DOCUMENTED, ids=[where for where, _ in DOCUMENTED])
def test_each_example_in_the_documents_is_a_command_line_its_command_accepts(where, example, tmp_path, monkeypatch):
    command, arguments = cli, example
    while isinstance(command, click.Group):  # `sitegen search QUERY` is its hidden `query` command
        name = arguments[0] if arguments and arguments[0] in command.commands else "query"
        command, arguments = command.commands[name], arguments[name == arguments[0]:]
    monkeypatch.chdir(tmp_path)  # the folders and files the examples name, so that parsing finds them
    for folder in ("reviews/my-review", "reviews/object-in-context", "paper", "manuscript"):
        (tmp_path / folder).mkdir(parents=True)
    for value in arguments:
        if re.fullmatch(r"[\w/-]+\.[a-z]{2,4}", value):
            (tmp_path / value).touch()
    with click.Context(command) as context:
        command.parse_args(context, arguments)


@pytest.mark.parametrize(("path", "command"), list(_commands(cli)), ids=[" ".join(path) for path, _ in _commands(cli)])
def test_every_option_says_what_it_is_for(path, command):
    # A bare `--stage [title-abstract|full-text]` left a new user guessing whose stage it is.
    for param in command.params:
        if isinstance(param, click.Option) and "--help" not in param.opts:
            assert param.help, f"sitegen {' '.join(path)} {param.opts[0]} has no help"


def test_each_commands_at_says_what_its_time_stamps():
    # Every --at read "The run's time", a protocol's lock and a phase's advance too: each says what it stamps.
    helps = {command: (" ".join(path), param.help) for path, command in _commands(cli) for param in command.params
             if isinstance(param, click.Option) and "--at" in param.opts}  # one command may have two names
    names = {name for name, _ in helps.values()}
    assert {"import", "protocol lock", "protocol amend", "state advance", "update", "verify"} <= names
    said = {}
    for name, text in helps.values():
        assert said.setdefault(text, name) == name, f"sitegen {name} --at says what sitegen {said[text]} --at says"
