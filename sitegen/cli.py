"""The `sitegen` command line. Each command parses options, calls one library
function, prints the result and exits; all the work happens in the library."""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import io
import json
import os
import re
import select
import stat
import sys
from pathlib import Path
from typing import get_args

import click
from pydantic import ValidationError

from sitegen import __version__, process
from sitegen.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_SCHEMA,
    OptionInvalid,
    OutputFileRefused,
    ReviewInvalid,
    SchemaVersionError,
    SitegenError,
    quoted_text,
    shown_argument,
    shown_path,
    symbolic_link,
)
from sitegen.records.citations import SOURCE as CITATION_SOURCE
from sitegen.records.providers import label as provider_label
from sitegen.references import Format, column_mapping, text_codec
from sitegen.review import kept
from sitegen.review.models import SLUG, Strategy, utc_day, utc_text
from sitegen.review.problems import FORMATTERS, format_human
from sitegen.review.scaffold import init_review, placeholders_left
from sitegen.review.schemas import json_schemas, write_schemas
from sitegen.review.write import atomic_write, written
from sitegen.text import counted


class GivenPath(click.Path):
    """A path on the command line, checked as click.Path checks one (there, a file or a folder, readable), and
    refused naming it as every message names a path (errors.shown_path): click's own words quoted it with repr()
    and showed a byte that is not UTF-8 as U+FFFD, and said "does not exist" of a path that cannot be looked at
    for another reason (a file's name with a '/' after it). Never empty: "" would be the working folder (an unset
    variable in a script, `sitegen init "$DIR"`, would initialise, build into or replace the folder the script
    runs in). Never "-", standard input to most programs: this one reads no file from it ("./-" names a file)."""

    dash = "'-' means standard input, which this command does not read; give a path ('./-' for one named '-')"

    def convert(self, value, param, ctx):
        value = os.fspath(value)  # a default is a Path
        if not value.strip():
            self.fail("an empty path (an unset variable?): give a file or folder name", param, ctx)
        if value == "-":
            self.fail(self.dash, param, ctx)
        if not self.dir_okay and value.endswith(os.sep):  # Path() drops the '/': "new.ris/" wrote a file new.ris
            self.fail(f"{shown_path(value)} ends in '/', which names a folder; give a file name", param, ctx)
        try:
            mode = os.stat(value).st_mode
        except OSError as error:
            if error.errno == errno.ENOENT and not self.exists:  # not there yet: the command makes it
                return self.coerce_path_result(value)
            # Any other reason (a file's name as a folder's, "x.ris/x"; no permission) stops a write there too.
            missing = error.errno == errno.ENOENT
            if missing and os.path.islink(value):  # the link is there: what is missing is where it leads
                self.fail(f"{shown_path(value)} is {symbolic_link(value)}", param, ctx)
            self.fail(f"{shown_path(value)} {'does not exist' if missing else f'cannot be opened ({error.strerror})'}",
                      param, ctx)
        if not self.file_okay and not stat.S_ISDIR(mode):
            self.fail(f"{shown_path(value)} is not a folder", param, ctx)
        if not self.dir_okay and stat.S_ISDIR(mode):
            self.fail(f"{shown_path(value)} is a folder, not a file", param, ctx)
        if self.exists and not os.access(value, os.R_OK):
            self.fail(f"{shown_path(value)} cannot be read (Permission denied)", param, ctx)
        return self.coerce_path_result(value)


REVIEW_DIR = GivenPath(path_type=Path, file_okay=False)


class OutputPath(GivenPath):
    """A file or folder a command writes. "-" is standard output where the command prints what it would write
    when no path is given (`printable`: export's and digest's --out), and refused everywhere else: it was taken
    as a name, so `--out -` wrote a file (or a site) named "-" in the working folder. "./-" names such a file."""

    dash = "'-' means standard output, which this command does not write to; give a path ('./-' for one named '-')"

    def __init__(self, *, printable: bool = False, **kwargs):
        super().__init__(path_type=Path, **kwargs)
        self.printable = printable

    def convert(self, value, param, ctx):
        if value == "-" and self.printable:
            return None  # standard output, as when the option is not given
        return super().convert(value, param, ctx)


def _lazily(name: str):
    """A module loaded when first used (importlib's LazyLoader recipe). `commands` pulls in the whole
    library, the site builder included; loading it only when a command runs keeps `--help` and quick
    commands such as `dedupe` quick to start."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


commands = _lazily("sitegen.commands")


class TextCommand(click.Command):
    """A command whose text values (a name, a query, a time, a field's value) are UTF-8: a shell passes other
    bytes through as they are (a Latin-1 file's line pasted, `$(cat …)`), Python reads each as a lone surrogate
    no text can hold, and they went on to a traceback (`loop --topic`) or a message about something else. Paths
    are left as given: a file name need not be UTF-8. The values are checked as given, before any callback reads
    one (--at, --week, --columns): a callback's own refusal quoted the surrogates, or, once --columns was a
    mapping, let them through to the file's columns."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given, _, _ = self.make_parser(ctx).parse_args(args=list(args))
        args, literal_from = _end_of_options(self, ctx, list(args))
        _no_option_taken_for_a_value(self, ctx, given)
        _no_option_taken_for_an_argument(self, ctx, args, literal_from)
        for param in self.params:
            if isinstance(param.type, click.Path):
                continue
            for text in _texts(given.get(param.name)):
                if byte := next((ord(char) - 0xDC00 for char in text if "\udc80" <= char <= "\udcff"), None):
                    raise click.BadParameter(f"{text!r} is not UTF-8 text (byte 0x{byte:02X}); give it in UTF-8",
                                             ctx, param)
        with _usage_errors(ctx):  # an option's callback (--at, --week) checks its value with the library
            return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        with _usage_errors(ctx):
            return super().invoke(ctx)


def _no_option_taken_for_a_value(command: click.Command, ctx: click.Context, given: dict) -> None:
    """An option whose value was left out takes the next word as its value, even another option's name
    (`--strategy pubmed --at T` took `--at` for the query): the command then said "Missing option '--at'", which
    was given. Said of the option whose value is missing instead."""
    params = command.get_params(ctx)
    names = {name for param in params for name in (*param.opts, *param.secondary_opts) if name.startswith("-")}
    for param in params:
        if isinstance(param, click.Option) and not param.is_flag:
            if taken := next((text for text in _texts(given.get(param.name)) if text in names), None):
                raise click.BadParameter(f"its value is missing: {taken} after it is an option of this command, read "
                                         "as the value (see --help for what it takes)", ctx, param)


def _end_of_options(command: click.Command, ctx: click.Context, args: list[str]) -> tuple[list[str], int]:
    """The words with the `--` that ends a command's options, and where the words after it (taken as they are)
    start. A command whose options come before its arguments (`state set`) keeps a `--` after its first argument
    as one more argument (`state set DIR status_note -- --at` was one too many): that `--` is dropped, so it ends
    the options wherever it is written."""
    if "--" not in args:
        return args, len(args)
    marker = args.index("--")
    if not ctx.allow_interspersed_args and _arguments_given(command, ctx, args[:marker]):  # kept as an argument
        return args[:marker] + args[marker + 1:], marker
    return args, marker + 1


def _arguments_given(command: click.Command, ctx: click.Context, args: list[str]) -> bool:
    given, _, _ = command.make_parser(ctx).parse_args(args=list(args))
    return any(_texts(given.get(param.name)) for param in command.get_params(ctx) if isinstance(param, click.Argument))


OPTION_LIKE = re.compile(r"--[^\W_]")


def _no_option_taken_for_an_argument(command: click.Command, ctx: click.Context, args: list[str],
                                     literal_from: int) -> None:
    """A free-text argument given a word that looks like an option (`state set DIR status_note --at` stored "--at"
    as the note, and the home page showed it): a word written as an option is an option misplaced or mistyped more
    often than a value. Refused, saying how to give it as the value: after `--`. Paths are left as given."""
    words = args[:literal_from] + [""] * (len(args) - literal_from)  # the words after `--` are values: not looked at
    given, _, _ = command.make_parser(ctx).parse_args(args=words)
    for param in command.get_params(ctx):
        if isinstance(param, click.Argument) and not isinstance(param.type, click.Path):
            if taken := next((text for text in _texts(given.get(param.name)) if OPTION_LIKE.match(text)), None):
                raise click.BadParameter(f"{taken} looks like an option, not a value; if it is meant as the value, "
                                         f"put -- before it (… -- {taken})", ctx, param)


@contextlib.contextmanager
def _usage_errors(ctx: click.Context):
    """The library's OptionInvalid shown as click shows a value its own types refuse: exit 2, naming the option,
    under the command's usage line and where to find its help. Raised to the group, which knows no command's
    usage, it was shown without them. A file to write refused (OutputFileRefused: there already, without --force;
    a folder; in a folder that does not exist) is a wrong option too: a usage error (exit 2) as click's own."""
    try:
        yield
    except OptionInvalid as exc:
        _done(exc)
        raise click.BadParameter(exc.message, ctx, param_hint=f"'{exc.option}'") from None
    except OutputFileRefused as exc:
        _done(exc)
        raise click.UsageError(str(exc), ctx) from None


def _texts(value: object) -> list[str]:
    """The strings of a parameter's value as given: itself, or those of a repeated (or two-part) option."""
    if isinstance(value, str):
        return [value]
    return [text for item in value for text in _texts(item)] if isinstance(value, (tuple, list)) else []


class TextCommands(click.Group):
    """A group whose commands are TextCommands, and whose groups are TextCommands' groups too."""

    command_class = TextCommand


TextCommands.group_class = TextCommands


class SitegenGroup(TextCommands):
    """Shows sitegen's own errors as messages with their exit status, never as tracebacks."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except BrokenPipeError:  # `sitegen --help | head`: as a command's output (`invoke`), not click's exit 1
            ctx.exit(EXIT_BROKEN_PIPE)

    def invoke(self, ctx: click.Context):
        written.clear()  # what this command writes (a test runs many in one process)
        try:
            return super().invoke(ctx)
        except (ReviewInvalid, SchemaVersionError) as exc:
            _done(exc)
            root = str(ctx.meta.get("sitegen.review_dir", ""))
            click.echo(format_human(exc.problems, root), err=True)
            nothing = "nothing else was" if exc.done else "nothing was"
            writes = ctx.meta.get("sitegen.writes", True)  # a command that does not say is taken to write
            if isinstance(exc, SchemaVersionError):
                click.echo(f"error: unsupported schema_version; {nothing} read further{' or written' if writes else ''}",
                           err=True)
            else:
                click.echo(f"error: fix the problems above{f'; {nothing} written' if writes else ''}", err=True)
            ctx.exit(exc.exit_code)
        except SitegenError as exc:
            _done(exc)
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except StandardOutputLost:  # said by `main`, which sees it too where no command runs (`sitegen --help`)
            raise
        except BrokenPipeError:  # `sitegen … | head`: the reader has gone, and an error message would go nowhere
            ctx.exit(EXIT_BROKEN_PIPE)
        except OSError as exc:  # a full disk, a path that cannot be created, no permission (a read-only folder)
            _done(exc)
            where = f": {shown_path(exc.filename)}" if exc.filename else ""
            said = _written_said(ctx.meta.get("sitegen.writes", True))
            click.echo(f"error: {exc.strerror or exc}{where}{f'; {said}' if said else ''}", err=True)
            ctx.exit(EXIT_INVALID)
        except MemoryError:  # a limit on the process's memory (a container's, `ulimit -v`): every write is atomic
            click.echo("error: out of memory (a review of 100,000 records needs about 1.5 GB): raise the limit, then "
                       "run the command again; a write it was making is finished or undone by the next command",
                       err=True)
            ctx.exit(EXIT_INVALID)
        except KeyboardInterrupt as exc:  # Ctrl-C: what was done before it is said (a version recorded, say)
            _done(exc)
            click.echo(f"error: {_interrupted(ctx.meta.get('sitegen.writes', True))}", err=True)
            ctx.exit(EXIT_INTERRUPTED)


def _interrupted(writes: bool = True) -> str:
    """What a command stopped by Ctrl-C leaves behind: each write is whole or not made (a transaction's renames
    are finished before Ctrl-C is let through), so what it wrote is what `written` lists. A command that only
    `writes` nothing says only that it was interrupted."""
    if not written:
        return "interrupted; nothing was written" if writes else "interrupted"
    return f"interrupted after {_written_said()}"


def _written_said(writes: bool = True) -> str:
    """What a command that stopped had written, each write whole (`written` lists them): "nothing was written",
    or which files and that nothing else was; "" for a command that only reads and wrote nothing."""
    if not written:
        return "nothing was written" if writes else ""
    return f"it wrote {_written_shown()} (each whole); nothing else was written"


def _written_shown() -> str:
    return ", ".join(shown_path(path) for path in written[:3]) + (f" and {len(written) - 3} more" if len(written) > 3 else "")


def _done(exc: BaseException) -> None:
    for sentence in getattr(exc, "done", ()):  # an OSError says what was done only when a command told it
        click.echo(f"note: {sentence}", err=True)


@click.group(cls=SitegenGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sitegen")
def cli() -> None:
    """Keep a living systematic review current and publish it as a static website.

    A review lives in a folder of plain files (the project's README and its
    docs/review-folder.md describe them); the website is built from it and
    never edited by hand. Each command's --help says more.

    Example: a new review, from its first files to its site

    \b
      sitegen init reviews/my-review --title "My living review"
      sitegen check reviews/my-review            # after editing review.yaml and protocol.md
      sitegen protocol lock reviews/my-review --at 2026-06-01T09:00:00Z
      sitegen monitor add reviews/my-review --id main --strategy pubmed '"object in context"[tiab]' --at 2026-06-01T09:05:00Z
      sitegen import reviews/my-review embase.ris --source Embase --at 2026-06-01T09:10:00Z
      sitegen screen rank reviews/my-review --imported   # the records to screen, with their ids
      sitegen build reviews/my-review --out site
    """


REVIEWER_PLACEHOLDER = "<reviewer>"  # not a valid name: a suggested line pasted unedited fails `check`


def _reviewer_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if value != REVIEWER_PLACEHOLDER and not re.fullmatch(SLUG, value):
        raise click.BadParameter(f"{value!r} is not a reviewer name as duplicates.csv writes one "
                                 "(lower-case letters, digits and '-')", param=param)
    return value


def _column_mapping(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, str] | None:
    if value is None:
        return None
    try:
        return column_mapping(value)
    except ValueError as error:
        raise click.BadParameter(str(error), param=param) from None


COLUMNS_HELP = ("Read a CSV whose columns are not sitegen's: FIELD=COLUMN,... (title=Article Title,ID=key); "
                "Scopus, Embase.com, PubMed, Web of Science (tab-delimited), EBSCOhost, Cochrane Library, OpenAlex, "
                "Zotero, Google Scholar, The Lens, RefWorks (tab-delimited), abstrackr, Covidence and Rayyan exports are "
                "known by their header.")


def _remember(review_dir: Path, *, writes: bool, listed: bool = False) -> Path:
    """The review folder a command was given, kept to show its problems by, and refused first when it is no
    review folder (before a file to write is checked or one to read is read), in the one sentence every command
    says it in; unless the command `listed` it among the problems it prints (`check`). Whether the command, as
    it was given, `writes` anything (a file, the review, a site) is kept too: a command that only reads says no
    "nothing was written" when it stops."""
    from sitegen.review.transaction import refuse_non_review

    meta = click.get_current_context().meta
    meta["sitegen.review_dir"], meta["sitegen.writes"] = review_dir, writes
    if not listed:
        refuse_non_review(review_dir)
    return review_dir


@cli.command()
@click.argument("directory", type=OutputPath(file_okay=False))
@click.option("--title", metavar="TITLE", default="My living review", show_default=True, help="Title written to review.yaml.")
def init(directory: Path, title: str) -> None:
    """Create a new review folder DIRECTORY that passes `check` and builds.

    Example:

    \b
      sitegen init reviews/my-review --title "Exercise for low back pain: a living review"
    """
    files = init_review(directory, title)
    click.echo(f"created {shown_path(directory)} with {counted(len(files), 'file')}:")
    for name in files:
        click.echo(f"  {name}")
    click.echo(f"next: edit review.yaml and protocol.md, then run `sitegen check {shown_argument(directory)}`")


@cli.command()
@click.argument("directory", type=REVIEW_DIR)
@click.option("--format", "output_format", type=click.Choice(sorted(FORMATTERS)), default="human", show_default=True,
              help="human: one line per problem; github: workflow annotations; json: for tools.")
def check(directory: Path, output_format: str) -> None:
    """Validate review folder DIRECTORY without writing anything.

    Exit status 0 when clean, 1 when problems were found, 4 when a file has an
    unsupported schema_version, 5 when another sitegen process is writing the review.

    Example:

    \b
      sitegen check reviews/my-review
      sitegen check reviews/my-review --format github   # in a workflow
    """
    _remember(directory, writes=False, listed=True)
    try:
        problems = commands.check(directory)
    except SchemaVersionError as exc:
        problems = exc.problems
        click.echo(FORMATTERS[output_format](problems, str(directory)))
        raise click.exceptions.Exit(exc.exit_code) from None
    click.echo(FORMATTERS[output_format](problems, str(directory)))
    if problems:
        raise click.exceptions.Exit(EXIT_INVALID)


SITE_OUT = click.option("--out", type=OutputPath(file_okay=False), default=Path("site"),
                        show_default=True, help="Output folder; replaced as a whole only when the new site is complete.")
def _event_time(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--at checked as it is parsed (OptionInvalid: no time, ahead of the clock, before 1970), before the command
    reads the review, and written as the review's files hold times: in UTC. The same instant written with an
    offset (2024-12-30T03:00:00+05:30) has another date in its text, so it fell in another day and ISO week on the
    site than runs beside it."""
    from sitegen.living.ledger import event_time

    return None if value is None else utc_text(event_time(value, param.opts[0]))


def _site_time(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """--now checked as it is parsed (OptionInvalid: no time from 1970 to 3000), and in UTC as --at."""
    from sitegen.site.build import given_now

    return None if value is None else utc_text(given_now(value))


def _encoding(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--encoding checked as it is parsed: a name that is no text encoding is refused before any file is read."""
    if value is not None:
        try:
            text_codec(value)
        except LookupError as error:
            raise click.BadParameter(str(error), ctx, param) from None
    return value


BUILD_TIME = click.option("--now", metavar="RFC3339", default=None, callback=_site_time,
                          help="Build time shown on the site. Default: SOURCE_DATE_EPOCH, else the latest ledger event.")


def _built(result: commands.BuildResult) -> str:
    if not result.changed:
        return (f"{shown_path(result.out)} is up to date ({counted(result.files, 'file')}, "
                f"{counted(result.records, 'record')}, last updated {result.built_at or 'never'})")
    return (f"built {shown_path(result.out)} ({counted(result.files, 'file')}, {result.rendered} rendered, "
            f"{counted(result.records, 'record')}, last updated {result.built_at or 'never'})")


def _print_built(result: commands.BuildResult) -> None:
    click.echo(_built(result))
    if result.replaced is not None:
        click.echo(f"warning: {shown_path(result.out)} held the site of another review, "
                   f"{quoted_text(result.replaced)}, and now holds this one's; give each review its own --out "
                   "to keep both", err=True)


@cli.command()
@click.argument("directory", type=REVIEW_DIR)
@SITE_OUT
@BUILD_TIME
def build(directory: Path, out: Path, now: str | None) -> None:
    """Render review folder DIRECTORY as a static website (every published version included).

    Never writes the review folder: `sitegen publish` records versions.

    Example:

    \b
      sitegen build reviews/my-review --out site
    """
    _remember(directory, writes=True)
    _print_built(commands.build(directory, out, now))


@cli.command()
@click.argument("directory", type=REVIEW_DIR)
@SITE_OUT
@BUILD_TIME
def publish(directory: Path, out: Path, now: str | None) -> None:
    """Record a new version of DIRECTORY if it changed since its latest, then build its site.

    A version (versions/<N>.json, and a `version` event on the ledger) keeps what the
    review published: where the ledger ended, the protocol version, and every record's
    outcomes and a hash of each included study's evidence, so its counts, studies and
    changelog are rebuilt from the folder for good. It is dated like the site (--now,
    else SOURCE_DATE_EPOCH, else the latest ledger event; when only files changed, no
    ledger event is newer than the latest version, and --now is required). When nothing
    changed since the latest version, no version is recorded and the site is still built, dated
    as that version.

    Example:

    \b
      sitegen publish reviews/my-review --out site --now 2026-06-01T00:00:00Z
    """
    _remember(directory, writes=True)
    result = commands.publish(directory, out, now)
    if result.version is not None:
        click.echo(f"published version {result.version.number} ({result.version.published_at}): {result.changes}")
    elif result.latest is not None:
        click.echo(f"nothing changed since version {result.latest.number} of {utc_day(result.latest.published_at)}; "
                   "no new version")
    _print_built(result.site)


SNAPSHOT_MODES = ("live: network only; record: network, saving every response under the review's snapshots/; "
                  "replay: saved responses only, never the network. Also SITEGEN_SNAPSHOT_MODE.")
SNAPSHOT_MODE = click.option(
    "--snapshots", "mode", type=click.Choice(["live", "record", "replay"]), envvar="SITEGEN_SNAPSHOT_MODE",
    default="live", show_default=True, help=SNAPSHOT_MODES)


def at_option(stamped: str, unless: str | None = None):
    """--at, saying what its time stamps: "The run's time" was said of a lock, an import and a phase's advance.
    Required, `unless` it says what the command does without it."""
    # No default given when required: with one (even None), click 8.5 takes the option as given and runs the command.
    optional = {"default": None} if unless else {}
    return click.option("--at", required=unless is None, **optional, metavar="RFC3339", callback=_event_time,
                        help=f"When {stamped}, e.g. 2026-06-01T00:00:00Z. Supplied by the caller, never read from the "
                             f"clock{f'; {unless}' if unless else ''}.")


REPORT = click.option(
    "--report", type=OutputPath(dir_okay=False), default=None,
    help="Also write the Markdown run report (for a pull-request body) to this file, outside the review folder.")
FORCE_REPORT = click.option("--force", is_flag=True, help="Replace --report when it exists.")


def _file_outside_review(path: Path | None, review_dir: Path, option: str, force: bool) -> None:
    """A file a command writes beside its work, checked before the command does anything
    (`commands.check_output_file`): a wrong option, so a usage error (exit 2) as click's own."""
    if path is not None:
        commands.check_output_file(review_dir, path, option, force)


def _progress(message: str) -> None:
    click.echo(message, err=True)


def _print_update(directory: Path, result, as_json: bool, report: Path | None) -> None:
    """Print an update's outcome, write its Markdown report, and exit 3 when a source was missed."""
    from sitegen.living.update import changed, markdown_report, unreached

    markdown = markdown_report(result)
    if as_json:
        click.echo(json.dumps(result.summary(), indent=2, ensure_ascii=False))
    else:
        for search in result.searches:
            if search.new:
                click.echo(f"{search.monitor_id}: {counted(len(search.new), 'new record')} (screening batch {search.batch})")
            elif search.complete:
                click.echo(f"{search.monitor_id}: no new records (every source answered)")
            elif search.answered:
                click.echo(f"{search.monitor_id}: no new records from the sources that answered")
            else:
                click.echo(f"{search.monitor_id}: no source answered in full; new records are unknown this run")
    for sentence in unreached(result):  # on stderr with --json too: a log read by a person says it
        click.echo(f"warning: {sentence}", err=True)
    for sentence in changed(result):
        click.echo(f"note: {sentence}", err=True)
    # The run is recorded already (printed above): a report that cannot be written must not hide it.
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as file:
                file.write(markdown)
        except OSError as error:
            click.echo(f"warning: the run report could not be added to the job summary {shown_path(summary)} "
                       f"({error.strerror or error})", err=True)
    if report is not None:
        try:
            atomic_write(report, markdown, sweep=True)
        except OSError as error:
            raise SitegenError(f"the run at {result.at} was recorded in the review (above), but its report could not "
                               f"be written to {shown_path(report)} ({error.strerror or error}); "
                               f"`sitegen monitor status {shown_argument(directory)}` shows the run") from None
    if not result.complete:
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


@cli.group()
def monitor() -> None:
    """Saved searches: `add` one (and run its baseline), show their `status`, `retire` one or `reinstate` it, and
    `validate` them against the studies known to be relevant (as `sitegen search validate`)."""


@monitor.command("add")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--id", "monitor_id", metavar="ID", required=True, help="Name of the saved search (lower-case letters, digits, -).")
@click.option("--strategy", "strategies", nargs=2, multiple=True, metavar="SOURCE[:LABEL] QUERY",
              help="One per database, recorded verbatim, e.g. --strategy pubmed '(CRISPR[Title])'. Repeatable.")
@click.option("--citations", "citation_searches", multiple=True, metavar="'MODE: SEED, ...'",
              help="A citation search in OpenAlex's citation graph, recorded verbatim and counted in PRISMA under "
                   "other methods: MODE is references (works the seeds cite), citing (works citing them), related, "
                   "or shared (works cited by at least two of 2-5 seeds); seeds are OpenAlex ids (W…) or DOIs, "
                   "e.g. --citations 'citing: W2741809807'. Repeatable; give --strategy, --citations or both.")
@click.option("--syntax", type=click.Choice(["native", "sitegen"]), default="native", show_default=True,
              help="native: each query is the provider's own syntax; sitegen: the Boolean grammar, compiled.")
@click.option("--seed-from-review", is_flag=True,
              help="Count the review's already screened records as seen, so only later ones form a batch.")
@at_option("the search is saved and its baseline runs")
@SNAPSHOT_MODE
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@REPORT
@FORCE_REPORT
def monitor_add(directory: Path, monitor_id: str, strategies: tuple[tuple[str, str], ...],
                citation_searches: tuple[str, ...], syntax: str, seed_from_review: bool, at: str, mode: str,
                as_json: bool, report: Path | None, force: bool) -> None:
    """Save a search in DIRECTORY and run its baseline.

    The first result set becomes the opening screening batch and its ids the
    seen_ids baseline (or, with --seed-from-review, the records already screened).
    Writes searches/<ID>.json, the new records, the run's ledger events and its
    manifest in runs/. Exit status 3 when a source was not reached (the search is
    saved and its run recorded, as `update` records one: its records may be missing).

    Example:

    \b
      sitegen monitor add reviews/my-review --id main --strategy pubmed '"object in context"[tiab]' --at 2026-06-01T00:00:00Z
      sitegen monitor add reviews/my-review --id citing --citations 'citing: W2741809807' --at 2026-06-01T00:00:00Z
    """
    _remember(directory, writes=True)
    _file_outside_review(report, directory, "--report", force)
    parsed = []
    for source_label, text in strategies:
        source, _, label = source_label.partition(":")
        try:
            parsed.append(Strategy(source=source, query=text, label=label or None, syntax=syntax))
        except ValidationError as exc:
            raise click.BadParameter(exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, "),
                                     param_hint="--strategy") from None
    for text in citation_searches:
        try:
            parsed.append(Strategy(source=CITATION_SOURCE, method="citations", query=text))
        except ValidationError as exc:
            raise click.BadParameter(exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, "),
                                     param_hint="--citations") from None
    if not parsed:
        raise click.UsageError("give at least one --strategy or --citations")
    result = commands.add_monitor(directory, monitor_id, parsed, at, mode, seed_from_review, progress=_progress)
    _print_update(directory, result, as_json, report)


@monitor.command("status")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--id", "monitor_id", metavar="ID", default=None, help="Only this saved search.")
@click.option("--json", "as_json", is_flag=True, help="Print the saved state as JSON.")
def monitor_status(directory: Path, monitor_id: str | None, as_json: bool) -> None:
    """Show the saved searches of DIRECTORY: strategies, seen ids, last run."""
    _remember(directory, writes=False)
    searches = commands.search_status(directory, monitor_id)
    if as_json:
        click.echo(json.dumps([search.model_dump(mode="json", exclude_none=True)
                               | ({"retired": {"at": retired.at, "reason": retired.reason}} if retired else {})
                               for search, _, retired in searches], indent=2, ensure_ascii=False))
        return
    if not searches:
        click.echo(f"{shown_path(directory)} has no saved search yet (`sitegen monitor add {shown_argument(directory)} "
                   "--id ID --strategy SOURCE QUERY --at TIME` sets one up)")
    for search, ran, retired in searches:
        click.echo(f"{search.monitor_id}: run {counted(search.run_count, 'time')}, last {search.last_run or 'never'}, "
                   f"{counted(len(search.seen_ids), 'id')} seen"
                   + (f"; retired at {retired.at}, no longer run (why: {quoted_text(retired.reason)})" if retired else ""))
        for strategy, last in zip(search.strategies, ran, strict=True):
            said = "; ".join(filter(None, [
                "not run yet" if last is None else "",
                f"renamed since its last run ({last.at}, when it was "
                f"{f'labelled {last.label!r}' if last.label else 'unlabelled'})"
                if last is not None and last.label != strategy.label else "",
                f"incomplete at its last run ({last.at}): its source did not answer in full, so records may be missing"
                if last is not None and not last.complete else ""]))
            click.echo(f"  {strategy.source}{f' ({strategy.label})' if strategy.label else ''}: {strategy.query}"
                       + (f"  [{said}]" if said else ""))


@monitor.command("retire")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--id", "monitor_id", metavar="ID", required=True, help="The saved search to retire.")
@at_option("the search is retired")
@click.option("--reason", required=True, help="Why it is no longer run (recorded on the ledger and the site).")
def monitor_retire(directory: Path, monitor_id: str, at: str, reason: str) -> None:
    """Retire a saved search of DIRECTORY: `update` no longer runs it.

    Records a `retirement` event on the ledger. searches/<ID>.json stays as it is
    (delete it and every command refuses the review: its seen_ids keep the records
    it found out of later batches), its runs and manifests stay, and PRISMA counts
    the records it identified as before. The searches page shows it retired, with
    when and why. `sitegen monitor reinstate` brings it back.

    Example:

    \b
      sitegen monitor retire reviews/my-review --id main --at 2026-06-01T00:00:00Z --reason "Replaced by main-2027"
    """
    _remember(directory, writes=True)
    event = commands.retire_search(directory, monitor_id, at, reason)
    click.echo(f"saved search {monitor_id} retired (ledger event {event.seq}); `update` no longer runs it")


@monitor.command("reinstate")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--id", "monitor_id", metavar="ID", required=True, help="The retired saved search to bring back.")
@at_option("the search is reinstated")
@click.option("--reason", default=None, help="Why it is run again (recorded on the ledger and the site).")
def monitor_reinstate(directory: Path, monitor_id: str, at: str, reason: str | None) -> None:
    """Bring back a retired saved search of DIRECTORY: `update` runs it again.

    Records a `reinstatement` event on the ledger. Its seen_ids are as they were:
    its next run reports only records it has never seen.

    Example:

    \b
      sitegen monitor reinstate reviews/my-review --id main --at 2026-07-01T00:00:00Z
    """
    _remember(directory, writes=True)
    event = commands.reinstate_search(directory, monitor_id, at, reason)
    click.echo(f"saved search {monitor_id} reinstated (ledger event {event.seq}); `update` runs it again")


@monitor.command("validate")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--id", "monitor_id", metavar="ID", default=None, help="Only this saved search.")
@at_option("the check is recorded on the ledger", unless="without it, the check is only printed")
@click.option("--json", "as_json", is_flag=True, help="Print the validations as JSON.")
def monitor_validate(directory: Path, monitor_id: str | None, at: str | None, as_json: bool) -> None:
    """Validate the saved searches of DIRECTORY: relative recall of the studies known to be relevant
    (the included studies and validation.csv's), per strategy and over its current strategies and their runs, with
    the missed studies and why where that can be told.

    Exit status 7 when a search's measured recall is below the protocol's validation_recall (never on runs that
    did not get a source's answer in full, nor on strategies that have not run: those are not measured).

    Example:

    \b
      sitegen search validate reviews/my-review
      sitegen search validate reviews/my-review --at 2026-06-01T00:00:00Z   # and record it on the ledger
    """
    from sitegen.errors import EXIT_LOW_RECALL
    from sitegen.living.validation import summary_lines

    _remember(directory, writes=at is not None)
    payloads, recorded = commands.validate_searches(directory, at, monitor_id)
    if as_json:
        click.echo(json.dumps([{**p.model_dump(mode="json", exclude_none=True), "recall": p.recall}
                               for p in payloads], indent=2, ensure_ascii=False))
    else:
        for payload in payloads:
            click.echo("\n".join(summary_lines(payload)))
        click.echo("not recorded (give --at to record the check)" if not at else f"recorded on the ledger at {at}"
                   if recorded == len(payloads) else f"recorded on the ledger at {at}: {recorded} new; the rest are "
                   "already there at that time, the same")
    low = [p for p in payloads if p.below_threshold]
    for payload in low:
        click.echo(f"warning: {payload.monitor_id} retrieves {payload.found} of "
                   f"{counted(len(payload.known), 'known-relevant study', 'known-relevant studies')}, below the protocol's validation_recall of {payload.threshold:.0%}", err=True)
    if low:
        raise click.exceptions.Exit(EXIT_LOW_RECALL)


@cli.command()
@click.argument("directory", type=REVIEW_DIR)
@at_option("the saved searches run")
@SNAPSHOT_MODE
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@REPORT
@FORCE_REPORT
def update(directory: Path, at: str, mode: str, as_json: bool, report: Path | None, force: bool) -> None:
    """Rerun every saved search of DIRECTORY and record only the records never seen.

    Writes, in one transaction, the new records (records.jsonl), each saved search's seen_ids and run
    count, the run's ledger events, a run manifest in runs/ and, with --snapshots record, the responses
    in snapshots/.

    Exit status 0 when every source answered, 3 when a source was not reached
    (its new records may be missing: never "no new papers"), 4 on a schema
    mismatch, 5 when another sitegen process holds the review.

    Example:

    \b
      sitegen update reviews/my-review --at 2026-06-01T00:00:00Z --report run-report.md
    """
    _remember(directory, writes=True)
    _file_outside_review(report, directory, "--report", force)
    _print_update(directory, commands.update(directory, at, mode, progress=_progress), as_json, report)


@cli.command()
@click.argument("directory", type=REVIEW_DIR)
# In UTC as every command records times; a replay finds its recorded run by instant, however that was written.
@at_option("the verification runs",
           unless="required unless replaying, which defaults to the latest recorded verification run")
# Verdicts go on the ledger, and a pull request's check replays the latest run: its responses are kept by
# default, as a run without them cannot be replayed.
@click.option("--snapshots", "mode", type=click.Choice(["live", "record", "replay"]), envvar="SITEGEN_SNAPSHOT_MODE",
              default="record", show_default=True,
              help=SNAPSHOT_MODES + " A live run's verdicts cannot be replayed (check.yml replays the latest).")
@click.option("--bib", type=GivenPath(path_type=Path, dir_okay=False, exists=True), default=None,
              help="Also verify every entry of this BibTeX file (reported, not recorded: they are not records "
              "of the review).")
@click.option("--encoding", metavar="NAME", callback=_encoding,
              help="Encoding of the --bib file when it is not UTF-8 or UTF-16, e.g. latin-1 or cp1252.")
@click.option("--source", "sources", multiple=True, type=click.Choice(["crossref", "openalex", "pubmed"]),
              help="Ask only these indexes (repeatable; default all three). With one, no identity can be "
              "verified: only one index would hold the paper.")
@click.option("--json", "as_json", is_flag=True, help="Print every verdict as JSON.")
def verify(directory: Path, at: str | None, mode: str, bib: Path | None, encoding: str | None,
           sources: tuple[str, ...], as_json: bool) -> None:
    """Verify every included study of DIRECTORY: identity (the work exists as cited), status (retracted,
    corrected) and faithfulness (each evidence passage occurs in the abstract or the licensed full text).

    Live and record runs append the verdicts to the ledger at --at. A replay (--snapshots replay) reads
    only the responses a recorded run saved, recomputes its verdicts and compares them with the ledger's;
    it writes nothing. Exit status 0 when nothing is refusal grade (open items such as "inconclusive" are
    listed, never refused), 6 when a citation is unresolvable, a mismatch, retracted or contradicted,
    1 when a replay does not reproduce the recorded verdicts, 3 when an index did not answer (rate limited or
    unreachable) for some verdict of a live or recorded run: verify again later.

    Example:

    \b
      sitegen verify reviews/my-review --at 2026-06-01T00:00:00Z   # record the responses and the verdicts
      sitegen verify reviews/my-review --snapshots replay          # offline, as check.yml does
    """
    from sitegen.errors import EXIT_REFUSED

    _remember(directory, writes=mode != "replay")
    if at is None and mode != "replay":
        raise click.UsageError("--at is required (the run's time, e.g. 2026-06-01T00:00:00Z), but for a replay")
    if encoding is not None and bib is None:
        raise click.UsageError("--encoding names the encoding of the --bib file: give --bib too")
    result = commands.verify(directory, at, mode, bib, sources or None, progress=_progress, bib_encoding=encoding)
    if as_json:
        click.echo(json.dumps({
            "at": result.at, "mode": mode, "recorded": result.recorded, "differences": result.differences,
            "not_in_run": result.not_in_run, "excluded_since": sorted(result.excluded_since),
            "studies": {record_id: [p.model_dump(mode="json", exclude_defaults=True) for p in payloads]
                        for record_id, payloads in result.studies.items()},
            "references": [{"line": item.entry.line, "key": item.entry.key, "id": item.entry.record.id,
                            "rate_limited": item.verdicts.rate_limited,
                            "identity": item.verdicts.identity.model_dump(mode="json", exclude_defaults=True),
                            "status": item.verdicts.status.model_dump(mode="json", exclude_defaults=True)}
                           for item in result.references]}, indent=2, ensure_ascii=False))
    else:
        from sitegen.verify.report import OPEN_ITEMS
        from sitegen.verify.run import grouped_open_items

        studies = result.payloads()  # the .bib entries are printed one by one below
        for payload in (p for p in studies if p.refusal_grade):
            click.echo(f"REFUSAL: {payload.record_id} {payload.axis}: {payload.verdict}: "
                       f"{'; '.join(payload.reasons)[:500]}")
        for item in result.references:  # each entry with its file line and key, as a writer looks it up
            identity, status = item.verdicts.identity, item.verdicts.status
            grade = "REFUSAL" if item.verdicts.refusal_grade else "open item" if (
                {identity.verdict, status.verdict} & OPEN_ITEMS) else "ok"
            later = " (rate limited: check again later)" if item.verdicts.rate_limited else ""
            click.echo(f"{shown_path(bib)}:{item.entry.line}: {item.entry.key}: {grade}: identity {identity.verdict}, "
                       f"status {status.verdict}{later}: {'; '.join(identity.reasons + status.reasons)[:500]}")
        for axis, verdict, reason, ids in grouped_open_items([p for p in studies if p.verdict in OPEN_ITEMS]):
            shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
            click.echo(f"open item: {axis} {verdict} ({len(ids)}): {reason[:4000]}: {shown}")
        verdicts = result.all_verdicts()
        passing = len(verdicts) - len(result.refusals) - len(result.open_items)
        click.echo(f"{counted(len(result.studies), 'included study', 'included studies')} and "
                   f"{counted(len(result.references), '.bib entry', '.bib entries')} checked: "
                   f"{counted(passing, 'verdict passes', 'verdicts pass')}, "
                   f"{counted(len(result.open_items), 'open item')}, {len(result.refusals)} refusal grade"
                   + ("; recorded on the ledger" if result.recorded else ""))
        for difference in result.differences:
            click.echo(f"replay differs: {difference}", err=True)
        if result.excluded_since:
            click.echo(f"note: {len(result.excluded_since)} stud{'y' if len(result.excluded_since) == 1 else 'ies'} the "
                       "run verified no longer included: their verdicts were compared with the ledger's, not counted",
                       err=True)
        if result.not_in_run:
            shown = ", ".join(result.not_in_run[:5]) + (f" and {len(result.not_in_run) - 5} more"
                                                      if len(result.not_in_run) > 5 else "")
            click.echo(f"warning: {len(result.not_in_run)} included stud{'y was' if len(result.not_in_run) == 1 else 'ies were'} "
                       f"not verified by the run replayed ({result.at}), so nothing is known of them yet: {shown}; "
                       f"verify them with `sitegen verify {shown_argument(directory)} --at TIME` where the indexes "
                       "can be reached",
                       err=True)
    unanswered = result.unanswered if mode != "replay" else []  # a replay reproduces the recorded run's answers
    if unanswered:  # on stderr with --json too: a log read by a person says it
        click.echo(f"warning: {len(unanswered)} verdict{'s rest' if len(unanswered) != 1 else ' rests'} on an index "
                   "that did not answer (rate limited, unreachable or refusing access: a key?): they are open items, not negatives; verify "
                   "again later to settle them", err=True)
    if result.differences:
        raise click.exceptions.Exit(EXIT_INVALID)
    if result.refusals:
        raise click.exceptions.Exit(EXIT_REFUSED)
    if unanswered:
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


@cli.command("import")
@click.argument("directory", type=REVIEW_DIR)
@click.argument("files", nargs=-1, required=True, type=GivenPath(path_type=Path, dir_okay=False, exists=True))
@at_option("the files are imported")
@click.option("--format", "format", type=click.Choice(get_args(Format)),
              help="Format of every FILE [default: by its suffix, else by its content].")
@click.option("--source", "sources", metavar="NAME", multiple=True, help="Where the records come from: a provider "
              "sitegen knows (pubmed, openalex, ...) or a database or route by name (Embase, Citation searching); "
              "once for every FILE, or once per FILE in their order (each file's import event its own source and "
              "method, all one run) [default: the database the export names, else the file's name].")
@click.option("--method", type=click.Choice(["database", "other"]), help="PRISMA route: identification from "
              "databases and registers, or other methods [default: database when the source is a provider sitegen "
              "knows, a bibliographic database by name (Embase, Scopus, Web of Science, CINAHL, PsycINFO...), a "
              "study register by name (ClinicalTrials.gov, WHO ICTRP, ISRCTN...; counted as a register) or the "
              "database the export names; other methods otherwise].")
@click.option("--description", metavar="TEXT", help="What the file is, for the ledger [default: its name]; by other "
              "methods, the PRISMA box it counts in when --source does not say (citation searching, websites, "
              "organisations or experts contacted).")
@click.option("--seen", metavar="MONITOR_ID", help="Add the imported ids to this saved search's seen ids, so its "
              "next run reports only what arrived since.")
@click.option("--skip-bad", is_flag=True, help="Skip malformed records, entries that cannot be records and files "
              "that cannot be read, listing each with its line, and import the rest (an error when nothing is left).")
@click.option("--encoding", metavar="NAME", callback=_encoding, help="Text encoding of every FILE (latin-1, cp1252) "
              "[default: UTF-8, or UTF-16 by its byte-order mark].")
@click.option("--columns", metavar="FIELD=COLUMN,...", callback=_column_mapping, help=COLUMNS_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the import as JSON.")
def import_command(directory: Path, files: tuple[Path, ...], at: str, format: Format | None, sources: tuple[str, ...],
                   method: str | None, description: str | None, seen: str | None, skip_bad: bool,
                   encoding: str | None, columns: dict[str, str] | None, as_json: bool) -> None:
    """Import reference files (RIS, EndNote XML, BibTeX, records CSV, ...) into DIRECTORY's records.

    Records are folded in by identity as `update` folds in a search's results; one `import` event per file
    records its name, hash, source and counts (the files of one command are one run in PRISMA). A file or entry that cannot be read stops the import with FILE:LINE
    and nothing is written, unless --skip-bad.

    Example:

    \b
      sitegen import reviews/my-review embase-export.ris --source Embase --at 2026-06-01T00:00:00Z
      sitegen import reviews/my-review embase.ris medline.nbib --source Embase --source MEDLINE --at 2026-06-01T00:00:00Z
    """
    from sitegen.living.imports import report

    _remember(directory, writes=True)
    result = commands.import_files(directory, list(files), at, format, list(sources) or None, method, description, seen,
                                   skip_bad, encoding, columns)
    click.echo(json.dumps(result.summary(), indent=2, ensure_ascii=False) if as_json else report(result), nl=False)


@cli.command()
@click.argument("directory", type=REVIEW_DIR)
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def prisma(directory: Path, as_json: bool) -> None:
    """PRISMA 2020 counts of DIRECTORY, derived from its ledger and decision files.

    Unprefixed screening and report counts are the databases-and-registers route, `other` ones the
    other-methods route; each run's line says what each source returned in it and how much was new.
    """
    _remember(directory, writes=False)
    counts = commands.prisma(directory)
    if as_json:
        click.echo(json.dumps(counts.model_dump(), indent=2))
        return
    from sitegen.living.prisma import arm_runs, in_other_arm, not_in_full

    arms = {"identified_by_source": "databases", "identified_other_by_source": "other"}

    def said(name: str, value: object, among: list | None = None) -> str:
        if name in arms:
            unreached = not_in_full(counts, arms[name], among)
            # As the diagram marks them: a source not reached in full has a number that may be too low, never a 0
            # that passes for "it had nothing".
            value = ", ".join(f"{provider_label(source)} {n}" + (
                f" (not reached in full in run {', '.join(map(str, unreached[source]))}: records it holds may be "
                "missing)" if source in unreached else "") for source, n in value.items()) or "none"
        elif isinstance(value, dict):  # exclusions by reason: words, never Python's {'code': 1}
            value = ", ".join(f"{code} {n}" for code, n in value.items()) or "none"
        elif value is None:  # a new review has no previous version nor new searches: words, never Python's None
            value = "none"
        return f"{name.replace('_', ' ')}: {value}"

    # A new review's arm is the whole review: its output stays as it was, without the updated review's fields.
    updated_only = set() if counts.new_searches is not None else {"new_studies_earlier_runs", "new_reports_earlier_runs"}
    for name, value in counts.model_dump(exclude={"runs", "new_searches", *updated_only}).items():
        click.echo(said(name, value))
    if counts.new_searches is not None:  # the diagram's arm of new studies, as the CSV has it
        runs = arm_runs(counts)
        which = (f"run{'s' if len(runs) > 1 else ''} {', '.join(str(run.run) for run in runs)}" if runs else "no run")
        click.echo(f"new searches ({which}, since the previous version: the identification of new studies):")
        for name, value in counts.new_searches.model_dump().items():
            click.echo(f"  {said(name, value, runs)}")
    for run in counts.runs:
        # What a source returned against what was new to the review (docs/prisma.md: returned vs identified). A run
        # that identified nothing returned only records the review held: said so, as "returned 11, 0 new" under
        # "0 records identified" read as a contradiction. Only then: a record new in the run counts under one route,
        # so a source of the other route may show 0 new of records that were not held before.
        sources = "; ".join(
            f"{provider_label(source)}{' (other methods)' if other else ''}"
            f"{' was not reached in full (records may be missing):' if source in run.incomplete and in_other_arm(run, source) == other else ''} "
            f"returned {returned}, "
            + ("all already in the review" if returned and not run.identified else
               f"{(run.identified_other_by_source if other else run.identified_by_source).get(source, 0)} new")
            for other, by_source in ((False, run.returned_by_source), (True, run.other_returned_by_source))
            for source, returned in by_source.items())
        unreached = [provider_label(source) for source in run.incomplete
                     if source not in run.returned_by_source and source not in run.other_returned_by_source]
        sources += "".join(f"; {name} was not reached" for name in unreached)
        # As the diagram counts: identified for the first time (new to the review), then what is left once
        # duplicates are removed.
        click.echo(f"run {run.run} ({run.at}): {counted(run.identified, 'new record')} identified, {run.records} after "
                   f"duplicates were removed, {counted(run.studies_included, 'now included study', 'now included studies')}; "
                   f"{sources}")


@cli.command("probable-duplicates")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--reviewer", metavar="NAME", default=REVIEWER_PLACEHOLDER, callback=_reviewer_name, help="Your name as in duplicates.csv (lower-case letters, "
              "digits, '-'), written into each suggested line [default: a placeholder to replace].")
@click.option("--json", "as_json", is_flag=True, help="Print the pairs as JSON.")
def probable_duplicates(directory: Path, reviewer: str, as_json: bool) -> None:
    """List pairs of records of DIRECTORY that may be one work and await a reviewer's decision.

    The metadata matcher's probable pairs, and any pair it calls the same that
    identity did not merge, most similar first, leaving out pairs duplicates.csv
    already decides. Nothing is merged: each pair comes with a line to paste into
    duplicates.csv to confirm it (or write `different` in it to keep both).
    """
    _remember(directory, writes=False)
    pairs, records = commands.probable_pairs(directory)
    if as_json:
        click.echo(json.dumps([{"record_id": p.record_id, "duplicate_of": p.duplicate_of, "verdict": p.verdict,
                                "score": p.score, "record_title": records[p.record_id].title,
                                "duplicate_of_title": records[p.duplicate_of].title, "row": p.row(reviewer)}
                               for p in pairs], indent=2))
        return
    for pair in pairs:
        click.echo(f"{pair.score:5.1f} {pair.verdict:8}  {pair.record_id}: {records[pair.record_id].title}\n"
                   f"{'':16}{pair.duplicate_of}: {records[pair.duplicate_of].title}\n{'':16}{pair.row(reviewer)}")
    click.echo(f"{counted(len(pairs), 'pair awaits', 'pairs await')} a decision in duplicates.csv")


@cli.command("export")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--format", "format", type=click.Choice(["ris", "bibtex", "csl-json", "csv", "prisma2020-csv"]),
              required=True, help="ris, bibtex, csl-json or csv: records as the site's downloads write them; "
                                  "prisma2020-csv: the PRISMA 2020 counts as the PRISMA2020 R package reads them.")
@click.option("--records", "selection", type=click.Choice(["included", "all", "screened-in"]),
              help="Which records: the included studies [default], all records but confirmed duplicates (the "
                   "records PRISMA counts), or those sent on to full text (included or maybe at title and abstract).")
@click.option("--out", type=OutputPath(dir_okay=False, printable=True),
              help="File to write (outside the review folder); '-' or none: standard output.")
@click.option("--force", is_flag=True, help="Replace --out when it exists.")
def export(directory: Path, format: str, selection: str | None, out: Path | None, force: bool) -> None:
    """Export DIRECTORY's records (or its PRISMA counts) as a reference file, the same file the site
    offers for download: authors split, every identifier in the field the format's readers take it
    from, one citation key per record. Read back by `sitegen import`.

    Example:

    \b
      sitegen export reviews/my-review --format ris --records all --out all-records.ris
    """
    _remember(directory, writes=out is not None)
    _file_outside_review(out, directory, "--out", force)
    text, count = commands.export(directory, format, selection, out, force)
    if out is None:
        click.echo(text, nl=False)
    else:
        click.echo(f"wrote {shown_path(out)}" + (f" ({counted(count, 'record')})" if count is not None else ""), err=True)


@cli.command("import-decisions")
@click.argument("directory", type=REVIEW_DIR)
@click.argument("source", type=GivenPath(path_type=Path, dir_okay=False, exists=True))
@click.option("--tool", type=click.Choice(["rayyan", "covidence", "asreview"]), required=True,
              help="The tool that wrote SOURCE: Rayyan's CSV export (decisions in its notes column), a Covidence "
                   "CSV export of included or excluded studies, or ASReview LAB's CSV export (labels 1/0).")
@click.option("--reviewer", metavar="NAME", required=True,
              help="Whose decision file to extend: screening/<stage>/<NAME>.csv.")
@click.option("--stage", type=click.Choice(["title-abstract", "full-text"]), default="title-abstract",
              show_default=True, help="The screening stage the exported decisions were made at.")
@click.option("--decision", type=click.Choice(["include", "exclude"]),
              help="What a Covidence export holds, when it has no exclusion reason column to say so (a spreadsheet's "
                   "Decision column, Include, Exclude or Maybe, says it row by row).")
@click.option("--rayyan-reviewer", metavar="NAME", help="The reviewer's name in Rayyan's RAYYAN-INCLUSION [default: --reviewer].")
@click.option("--encoding", metavar="NAME", callback=_encoding,
              help="Encoding of SOURCE when it is not UTF-8 or UTF-16, e.g. latin-1 or cp1252.")
def import_decisions(directory: Path, source: Path, tool: str, reviewer: str, stage: str, decision: str | None,
                     rayyan_reviewer: str | None, encoding: str | None) -> None:
    """Append the screening decisions of SOURCE, a screening tool's export, to a reviewer's decision file
    in DIRECTORY. Each exported reference is matched to a record by DOI, then PMID, then by metadata
    when exactly one record is the same work; a decision already in the file is never changed. Every
    row not written is listed with its line and why. Exclusion reasons become the protocol's codes
    when they name one. Exit status 1, nothing written, when no row could be written and none was there.

    Example:

    \b
      sitegen import-decisions reviews/my-review rayyan-export.csv --tool rayyan --reviewer ann
    """
    _remember(directory, writes=True)
    if not re.fullmatch(SLUG, reviewer):
        raise click.BadParameter("a reviewer name is lower-case letters, digits and hyphens", param_hint="--reviewer")
    report = commands.import_decisions(directory, source, tool, reviewer, stage, decision, rayyan_reviewer, encoding)
    for kind, items in (("undecided", report.undecided), ("unmatched", report.unmatched),
                        ("ambiguous", report.ambiguous), ("conflict", report.conflicts),
                        ("repeated", report.repeated), ("refused", report.refused),
                        ("reason not mapped", report.unmapped_reasons), ("other reasons", report.other_reasons),
                        ("note left out", report.notes_left_out)):
        for item in items:
            click.echo(f"{shown_path(source)}:{item.line}: {kind}: {item.why}" + (f" ({item.title[:80]})" if item.title else ""))
    click.echo(f"{counted(report.rows, 'row')}: {report.matched} matched, {len(report.written)} written to {shown_path(report.path)}, "
               f"{report.already} already there, {len(report.repeated)} repeating another row, "
               f"{len(report.unmatched)} unmatched, {len(report.ambiguous)} "
               f"ambiguous, {len(report.conflicts)} conflicting, {len(report.refused)} refused by the screening "
               f"rules, {len(report.undecided)} without a decision")
    if not report.rows:  # an export of a header alone (a tool's empty export, a wrong file): nothing to import
        click.echo(f"error: nothing was written: {shown_path(source)} holds no row of decisions", err=True)
        raise click.exceptions.Exit(EXIT_INVALID)
    if not report.written and not report.already:  # no row of the export is in the file: no success
        click.echo(f"error: nothing was written: no row of {shown_path(source)} could be imported (each is listed above)", err=True)
        raise click.exceptions.Exit(EXIT_INVALID)


@cli.command("dedupe")
@click.argument("source", type=GivenPath(path_type=Path, dir_okay=False, exists=True))
@click.option("--out", type=OutputPath(dir_okay=False), required=True,
              help="CSV to write: one predicted duplicate set per row, column merged_ids (IDs joined by ';').")
@click.option("--probable", "probable_out", type=OutputPath(dir_okay=False),
              help="CSV of probable pairs (not merged) [default: OUT with '-probable' added to its name].")
@click.option("--versions", "versions_out", type=OutputPath(dir_okay=False),
              help="CSV of preprints and their journal versions (linked, not merged) "
                   "[default: OUT with '-versions' added to its name].")
@click.option("--format", "format", type=click.Choice(get_args(Format)),
              help="Format of SOURCE [default: by its suffix (.csv, .ris, .xml, .bib, .nbib, .ciw, .json), else by "
                   "its content].")
@click.option("--encoding", metavar="NAME", callback=_encoding,
              help="Encoding of SOURCE when it is not UTF-8 or UTF-16, e.g. latin-1 or cp1252.")
@click.option("--columns", metavar="FIELD=COLUMN,...", callback=_column_mapping, help=COLUMNS_HELP)
@click.option("--force", is_flag=True, help="Replace the outputs when they exist (only files dedupe wrote: a file of "
              "another first line is never replaced).")
def dedupe(source: Path, out: Path, probable_out: Path | None, versions_out: Path | None,
           format: Format | None, encoding: str | None, columns: dict[str, str] | None, force: bool) -> None:
    """Find duplicates in SOURCE, a reference file: a records CSV (columns ID, ENTRYTYPE, author,
    title, year, journal, volume, number, pages, doi, abstract; all but ID optional), a RIS file
    (IDs from its ID tags, else ris-1, ris-2, ... by position), an EndNote XML export (IDs are its
    rec-numbers), a BibTeX file (IDs are the keys),
    PubMed MEDLINE (.nbib; IDs are PMIDs), Web of Science plain text (IDs are UT accession numbers)
    or CSL-JSON (IDs are the items' ids).

    Records sharing a DOI are merged by the identity graph, others only when their metadata agree
    closely; near misses are listed as probable pairs for a reviewer and never merged. A malformed
    file is reported as FILE:LINE: message and nothing is written. Reads no review folder.

    Example:

    \b
      sitegen dedupe search-results.ris --out duplicates.csv   # also duplicates-probable.csv, duplicates-versions.csv
    """
    probable_out = probable_out or out.with_name(f"{out.stem}-probable{out.suffix or '.csv'}")
    versions_out = versions_out or out.with_name(f"{out.stem}-versions{out.suffix or '.csv'}")
    count, matches, warnings = commands.dedupe(source, out, probable_out, versions_out, format, encoding, columns,
                                               force)
    for warning in warnings:
        click.echo(f"warning: {shown_path(source)}: {warning}", err=True)
    merged = sum(len(ids) - 1 for ids in matches.sets)
    click.echo(f"{counted(count, 'record')}: {counted(len(matches.sets), 'duplicate set')}, {counted(merged, 'duplicate')} merged, "
               f"{counted(len(matches.probable), 'probable pair')} listed in {shown_path(probable_out)}, "
               f"{counted(len(matches.versions), 'preprint-journal version pair')} in {shown_path(versions_out)}")


@cli.group()
def screen() -> None:
    """Screening: `status` per batch, `conflicts` to adjudicate, agreement between reviewers (`kappa`), and the
    order to screen a batch in (`rank`)."""


def _agreement_line(item) -> str:
    names = " × ".join(item.reviewers)
    pabak = f", PABAK {item.pabak:.2f}" if item.pabak is not None else ""
    if item.kappa is None:
        # Kappa is undefined when every decision was one category, the prevalence extreme where observed
        # agreement and PABAK are what remains to report: they are shown whenever there is a record to measure.
        measured = f", observed agreement {item.percent_agreement:.1%}{pabak}" \
            if item.percent_agreement is not None else ""
        return f"{names}: kappa not available ({item.note}){measured}, n = {item.records}"
    interval = f" (95% CI {item.ci_low:.2f} to {item.ci_high:.2f})" if item.ci_low is not None else ""
    kind = "Cohen's" if item.kappa_method == "cohen" else "Fleiss'"
    return (f"{names}: {kind} kappa {item.kappa:.2f}{interval}, observed agreement {item.percent_agreement:.1%}{pabak}, "
            f"n = {item.records}" + (f" ({item.note})" if item.note else ""))


@screen.command("status")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def screen_status(directory: Path, as_json: bool) -> None:
    """Per batch and stage of DIRECTORY: decided, pending, conflicts."""
    _remember(directory, writes=False)
    per_batch, overall = commands.screening_status(directory)
    if as_json:
        click.echo(json.dumps({"batches": [b.model_dump() for b in per_batch],
                               "overall": [s.model_dump() for s in overall]}, indent=2))
        return
    if not per_batch:
        click.echo("nothing to screen yet: no search has run and no records were imported")
    for item in per_batch:
        batch = item.batch
        name = f"batch {batch.number} ({batch.monitor_id}, {batch.created}, protocol v{batch.protocol_version})" \
            if batch.number else "imported outside a batch (`screen rank --imported`)"
        click.echo(f"{name}: {counted(len(batch.record_ids), 'record')}")
        for stage in item.stages:
            not_retrieved = f", {stage.not_retrieved} not retrieved" if stage.not_retrieved else ""
            # "records at this stage", not "to screen": a stage screened in full has none left to screen.
            click.echo(f"  {stage.stage}: {counted(stage.records, 'record')} at this stage, {stage.include} "
                       f"included, {stage.exclude} excluded{not_retrieved}, {stage.maybe} maybe, "
                       f"{counted(stage.conflicts, 'conflict')}, {stage.pending} pending")


@screen.command("conflicts")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def screen_conflicts(directory: Path, as_json: bool) -> None:
    """Disagreements in DIRECTORY awaiting adjudication (decisions shown, reasons kept blind).

    Settle one by adding a row to screening/<stage>/adjudication.csv.
    """
    _remember(directory, writes=False)
    found = commands.screening_conflicts(directory)
    if as_json:
        click.echo(json.dumps([c.model_dump() for c in found], indent=2, ensure_ascii=False))
        return
    for conflict in found:
        who = ", ".join(f"{reviewer}: {decision}" for reviewer, decision in conflict.decisions.items())
        why = ", for different reasons (not shown while screening is blind)" if conflict.reasons_differ else ""
        click.echo(f"{conflict.stage}  {conflict.record_id}  ({who}{why})\n    {conflict.title}")
    click.echo(f"{counted(len(found), 'conflict')} awaiting adjudication")
    # What to do about them, where the reviewer reads the list: the very files to add a row to.
    for stage in dict.fromkeys(conflict.stage for conflict in found):
        path = shown_path(directory / "screening" / stage / "adjudication.csv")
        click.echo(f"Settle each at {stage} with a row in {path}")


@screen.command("kappa")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def screen_kappa(directory: Path, as_json: bool) -> None:
    """Agreement between DIRECTORY's reviewers, per batch and overall: Cohen's kappa with a 95% CI,
    observed agreement and PABAK over the three choices (Fleiss' kappa when more than two reviewers decided, over the
    records decided by as many reviewers as most are). Observed agreement is what kappa corrects for chance: the share
    of pairs of decisions on a record that agree, averaged over records (Cohen's p_o, Fleiss' P-bar; in the JSON,
    `percent_agreement`, 0 to 1). Agreement is on the decision: at full text, two exclusions for different reasons
    agree, yet are a conflict to adjudicate."""
    _remember(directory, writes=False)
    per_batch, overall = commands.screening_status(directory)
    if as_json:
        click.echo(json.dumps({
            "overall": {s.stage: [a.model_dump() for a in s.agreement] for s in overall},
            "batches": [{"batch": b.batch.number, **{s.stage: [a.model_dump() for a in s.agreement]
                                                      for s in b.stages}} for b in per_batch]}, indent=2))
        return
    lines = [f"{label}, {stage.stage}: {_agreement_line(item)}"
             for label, stages in [("overall", overall)] + [("imported outside a batch" if b.batch.number is None else f"batch {b.batch.number}", b.stages)
                                                            for b in per_batch]
             for stage in stages for item in stage.agreement]
    click.echo("\n".join(lines) or "no agreement to measure yet: no two reviewers have decided the same records")


@screen.command("rank")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--batch", "number", type=click.IntRange(min=1), default=None, help="The screening batch to rank.")
@click.option("--imported", is_flag=True, help="Rank the records imported outside a batch (`sitegen import`), "
              "as one group.")
@click.option("--json", "as_json", is_flag=True, help="Print the order, its method and rows as JSON.")
def screen_rank(directory: Path, number: int | None, imported: bool, as_json: bool) -> None:
    """Order the records of a screening batch of DIRECTORY (or those imported outside one) still to screen
    at title/abstract.

    A model trained on the review's own title/abstract decisions so far (TF-IDF and a linear SVM)
    puts the likeliest includes first; before there is an include and an exclude, the seed-002
    relevance score orders them. It never writes a decision.

    Example:

    \b
      sitegen screen rank reviews/my-review --imported
    """
    if (number is not None) == imported:  # both given, or neither
        raise click.UsageError("give either --batch N or --imported")
    _remember(directory, writes=False)
    order = commands.ranked_batch(directory, number)
    if as_json:
        click.echo(json.dumps(order.model_dump(), indent=2, ensure_ascii=False))
        return
    group = f"batch {number}" if number is not None else "imported outside a batch"
    if not order.rows:
        click.echo(f"{group}: no record is still to screen at title and abstract")
        return
    click.echo(f"{group}: {counted(len(order.rows), 'record')} still to screen, ordered by {order.method}")
    for row in order.rows:  # the method is said once, above; each row says what it adds
        click.echo(f"{row.rank:4}  {row.score:8.3f}  {row.id}\n      {' '.join(row.title.split())}\n"
                   f"      {row.rationale.removeprefix(f'{order.method}: ')}")


def _week(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """--week checked as it is parsed (OptionInvalid: no ISO week), before the command reads the review."""
    from sitegen.screening.digest import week_start

    week_start(value)
    return value


@cli.command()
@click.argument("directory", type=REVIEW_DIR)
@click.option("--week", required=True, metavar="YYYY-Www", callback=_week, help="ISO week, e.g. 2026-W23.")
@click.option("--out", type=OutputPath(dir_okay=False, printable=True), default=None,
              help="Write the Markdown here (outside the review folder) instead of printing it ('-': print it).")
@click.option("--force", is_flag=True, help="Replace --out when it exists.")
def digest(directory: Path, week: str, out: Path | None, force: bool) -> None:
    """The weekly digest of DIRECTORY: new records of that week ranked, with rationales and calibration.

    A score is KEEP from state.json's keep_from (seed 002's 70 where it sets none) and REVIEW from its
    review_from (50), with at most max_kept (25) KEEPs; each rationale names the threshold it was decided by.
    Every week, an earlier one too, is ranked with the thresholds and cap state.json holds now, and the
    calibration says thresholds other than 70 and 50. Change them with `sitegen state set DIR keep_from N`.

    Printed as Markdown, or written to --out; the review folder is never written.

    Example:

    \b
      sitegen digest reviews/my-review --week 2026-W23 --out digest.md
    """
    _remember(directory, writes=out is not None)
    _file_outside_review(out, directory, "--out", force)
    text = commands.digest(directory, week)
    if out is None:
        click.echo(text, nl=False)
    else:
        atomic_write(out, text, sweep=True)
        click.echo(f"wrote {shown_path(out)}")


@cli.group()
def state() -> None:
    """The review's phase and its settable fields: `show` them, `advance` the phase (only through its gate
    checks), `set` a field."""


@state.command("show")
@click.argument("directory", type=REVIEW_DIR)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def state_show(directory: Path, as_json: bool) -> None:
    """Show DIRECTORY's phase, what the next phase needs, and the settable fields."""
    _remember(directory, writes=False)
    shown = commands.state_show(directory)
    if as_json:
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    click.echo(f"phase: {shown['phase']}" + (f" (since {shown['since']})" if shown["since"] else ""))
    if shown["next_phase"]:
        click.echo(f"to advance to {shown['next_phase']}:")
        for gate in shown["gates"]:
            click.echo(f"  [{'x' if gate['ok'] else ' '}] {gate['check']}" + (f": {gate['detail']}" if gate["detail"]
                                                                             and not gate["ok"] else ""))
        if all(gate["ok"] for gate in shown["gates"]):  # nothing holds it back: say how to move on
            click.echo(f"every gate holds: run `sitegen state advance {shown_argument(directory)} --at TIME` to move "
                       f"to {shown['next_phase']}")
    for name, value in shown["settable"].items():
        click.echo(f"{name}: {'(none)' if value is None else value}")


@state.command("advance")
@click.argument("directory", type=REVIEW_DIR)
@at_option("the review moves to its next phase")
def state_advance(directory: Path, at: str) -> None:
    """Move DIRECTORY to its next phase, if every gate predicate holds (recorded on the ledger).

    The phases are protocol, searching, screening, extraction, synthesis and published, one step at a time and
    never by itself. A step is refused, naming what holds it back, until its conditions hold; `sitegen state show
    DIRECTORY` lists them.

    Example:

    \b
      sitegen state advance reviews/my-review --at 2026-06-01T09:01:00Z   # protocol -> searching, once it is locked
    """
    _remember(directory, writes=True)
    before, after = commands.state_advance(directory, at)
    click.echo(f"phase: {before} -> {after}")


# Options come before DIRECTORY: after it, a VALUE starting with '-' ("- pending", -1) is the value, not an option;
# one written as an option (--at) is refused unless after `--` (TextCommand).
@state.command("set", context_settings={"allow_interspersed_args": False})
@click.argument("directory", type=REVIEW_DIR)
@click.argument("field")
@click.argument("value")
def state_set(directory: Path, field: str, value: str) -> None:
    """Set FIELD of DIRECTORY's state.json to VALUE (only max_kept, status_note, keep_from and review_from).

    max_kept: the most KEEPs of a weekly digest (1 to 10,000; 25 by default). keep_from and review_from: the
    digest's scores from which a paper is KEEP and REVIEW (0 to 100, review_from at most keep_from; seed 002's
    70 and 50 by default); every week's digest, earlier ones too, is then ranked with them.

    Example:

    \b
      sitegen state set reviews/my-review max_kept 40
      sitegen state set reviews/my-review keep_from 60
      sitegen state set reviews/my-review status_note "Searches paused until May"
    """
    _remember(directory, writes=True)
    updated = commands.state_set(directory, field, value)
    value_now = getattr(updated, field)
    click.echo(f"{field}: {'(none)' if value_now is None else value_now}")  # as `state show` says a cleared note


@cli.group()
def protocol() -> None:
    """The review protocol: `lock` it before searching and screening, `amend` it after editing it."""


@protocol.command("lock")
@click.argument("directory", type=REVIEW_DIR)
@at_option("the protocol is locked")
@click.option("--reason", default=None, help="Why now (recorded on the ledger).")
def protocol_lock(directory: Path, at: str, reason: str | None) -> None:
    """Lock DIRECTORY's protocol: record protocol.md's hash and version on the ledger.

    Lock it once review.yaml and protocol.md say what the review is, before
    searching, importing or screening (each is refused until then). Later
    edits to protocol.md fail `check` until recorded with `sitegen protocol
    amend`.

    Example:

    \b
      sitegen protocol lock reviews/my-review --at 2026-06-01T09:00:00Z
    """
    _remember(directory, writes=True)
    event = commands.protocol_lock(directory, at, reason)
    click.echo(f"protocol version {event.payload['version']} locked (ledger event {event.seq}, "
               f"sha256 {event.payload['sha256'][:12]}…)")
    left = placeholders_left(directory)
    for name, line, placeholder in left:
        click.echo(f"warning: {shown_path(directory / name)}:{line}: still says init's placeholder "
                   f"{quoted_text(placeholder)}{' (now locked as written)' if name == 'protocol.md' else ''}", err=True)
    if left:
        # Locked is locked: the way on is an amendment, said now rather than found at the next `check`.
        then = (f"; record the edits to protocol.md with `sitegen protocol amend {shown_argument(directory)} --at TIME "
                "--reason TEXT`" if any(name == "protocol.md" for name, _, _ in left) else "")
        click.echo(f"note: replace each placeholder above with the review's own text{then}", err=True)


@protocol.command("amend")
@click.argument("directory", type=REVIEW_DIR)
@at_option("the amendment is recorded")
@click.option("--reason", required=True, help="Why the protocol changed (recorded on the ledger and the site).")
def protocol_amend(directory: Path, at: str, reason: str) -> None:
    """Record the edits to DIRECTORY's locked protocol.md as an amendment.

    Edit protocol.md first; this records the reason and the diff on the ledger
    and raises the version (if you have not), so later batches are screened
    under the new version.

    Example:

    \b
      sitegen protocol amend reviews/my-review --at 2026-06-01T00:00:00Z --reason "Mice added to the population"
    """
    _remember(directory, writes=True)
    event, notes = commands.protocol_amend(directory, at, reason)
    click.echo(f"protocol amended to version {event.payload['version']} (ledger event {event.seq})")
    for sentence in notes:
        click.echo(f"note: {sentence}", err=True)


@cli.group()
def ledger() -> None:
    """The provenance ledger: `verify` its hash chain and tail, or `anchor` the tail of a ledger written before
    sitegen anchored it."""


@ledger.command("anchor")
@click.argument("directory", type=REVIEW_DIR)
def ledger_anchor(directory: Path) -> None:
    """Record in DIRECTORY's state.json where its ledger ends (its ledger_head).

    For a ledger written before sitegen anchored its tail, or whose anchor was lost:
    check first that ledger.jsonl is whole (compare it with Git history), since
    anchoring accepts the ledger as it is. Every command that appends to the
    ledger moves the anchor itself.
    """
    _remember(directory, writes=True)
    event = commands.ledger_anchor(directory)
    click.echo(f"ledger anchored at event {event.seq} ({event.type}, {event.ts})")


@ledger.command("verify")
@click.argument("directory", type=REVIEW_DIR)
def ledger_verify(directory: Path) -> None:
    """Check that no event of DIRECTORY's ledger was edited, reordered or deleted."""
    count, problems = commands.ledger_verify(directory)
    if problems:
        click.echo(format_human(problems, str(directory)))
        # As every command: a schema_version this sitegen does not read is exit 4 (the other problems listed too).
        unsupported = any(problem.code == "schema-version" for problem in problems)
        raise click.exceptions.Exit(EXIT_SCHEMA if unsupported else EXIT_INVALID)
    click.echo(f"ledger intact: {counted(count, 'event')}, each chained to the one before")


@cli.command()
@click.argument("directory", type=REVIEW_DIR)
@click.option("--discard", is_flag=True,
              help="Drop what an interrupted committed write has not done yet, instead of finishing it (when its "
                   "files changed since, as after a git pull); then run the interrupted command again.")
def recover(directory: Path, discard: bool) -> None:
    """Finish a write to DIRECTORY that an earlier sitegen process was interrupted in.

    A write that reached its commit point is completed; one that did not is
    discarded, leaving the files as they were before it. A committed write whose
    files changed since (a git pull after the process was killed) is not finished:
    `--discard` drops it. Leftover temporary files are removed. Writing commands
    do this by themselves before they start.
    """
    _remember(directory, writes=True)
    done = commands.finish_interrupted(directory, discard)
    for line in done:
        click.echo(line)
    click.echo("nothing was interrupted" if not done else f"{shown_path(directory)} is consistent again")


class QueryOrCommand(TextCommands):
    """`sitegen search QUERY …` searches; `sitegen search validate DIR` is a command of its own. Anything that is
    not one of the group's commands is the query of the hidden `query` command."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and args[0] in self.commands:  # `search query validate` searches for the word "validate"
            return super().resolve_command(ctx, args)
        return "query", self.commands["query"], args


@cli.group(cls=QueryOrCommand, invoke_without_command=False,
           context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
def search() -> None:
    """Search providers at once (`sitegen search QUERY`, see `sitegen search query --help`), or check the
    review's saved searches against its known-relevant studies (`sitegen search validate DIR`)."""


search.add_command(monitor_validate, "validate")  # the issue's name for it; `sitegen monitor validate` too


@search.command("query", hidden=True)
@click.argument("query")
@click.option("--sources", metavar="NAME,...", default="openalex,europepmc,pubmed", show_default=True,
              help="Comma-separated providers: openalex, europepmc, pubmed, crossref, arxiv.")
@click.option("--native", is_flag=True, help="Send QUERY to every source verbatim instead of compiling the grammar.")
@click.option("--since", type=click.IntRange(1800, 2999), default=None, help="Only works published from this year.")
@SNAPSHOT_MODE
@click.option("--review", "review_dir", type=GivenPath(path_type=Path, file_okay=False, exists=True), default=None,
              help="Review folder whose snapshots/ record and replay use.")
@click.option("--semantic", is_flag=True,
              help="Add OpenAlex's semantic shortlist (at most 50 works nearest in meaning to QUERY) as one more "
                   "lane: candidates to look at, not a database search, never counted in PRISMA.")
@click.option("--json", "as_json", is_flag=True, help="Print records, warnings, sources and counts as JSON.")
def search_query(query: str, sources: str, native: bool, since: int | None, mode: str, review_dir: Path | None,
                 semantic: bool, as_json: bool) -> None:
    """Search several providers at once, merge the results by identity and order them by
    reciprocal rank fusion of the providers' orders, each with the sources and ranks that found it.

    QUERY uses sitegen's grammar: "quoted phrases", AND / OR / NOT (upper case),
    parentheses, and title: abstract: author: prefixes. Exit status 3 when a
    source could not be reached (its results are unknown, not empty). Writes
    nothing but, with --snapshots record, the responses under the review's snapshots/.

    Example:

    \b
      sitegen search '"object-in-context" AND rat' --sources openalex,europepmc --since 2010
    """
    names = [name.strip() for name in sources.split(",") if name.strip()]
    # Each source's answer was said as it came, on stderr (progress); stdout holds the results only.
    result = commands.search(query, names, native=native, since=since, mode=mode, review_dir=review_dir,
                             semantic=semantic, progress=_progress)
    if as_json:
        click.echo(json.dumps(result.report(), indent=2, ensure_ascii=False))
    else:
        for hit in result.hits:
            click.echo(f"  {hit.record.id}  {hit.record.year or '----'}  {hit.record.title}\n      why: {hit.why()}")
        click.echo(result.summary())
    for sentence in result.unreached():  # on stderr with --json too, as update's: a log read by a person says it
        click.echo(f"warning: {sentence}", err=True)
    if not result.complete:
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


@cli.command()
@click.option("--runs", type=GivenPath(path_type=Path, dir_okay=False), required=True,
              help="JSON: query id -> the record ids a system returned, best first.")
@click.option("--judgments", type=GivenPath(path_type=Path, dir_okay=False), required=True,
              help="JSON: query id -> record id -> grade 0 (not relevant) to 3.")
@click.option("--known", type=GivenPath(path_type=Path, dir_okay=False), default=None,
              help="JSON: query id -> ids of records known to be relevant, for known-item recall.")
@click.option("--k", "ks", type=click.IntRange(1, 10_000), multiple=True, default=(10,), show_default=True,
              help="Cut-off; repeat for several (--k 10 --k 25).")
@click.option("--out", type=OutputPath(dir_okay=False), required=True, help="Report to write (JSON).")
@click.option("--force", is_flag=True, help="Replace --out when it exists.")
def evaluate(runs: Path, judgments: Path, known: Path | None, ks: tuple[int, ...], out: Path, force: bool) -> None:
    """Score frozen search runs offline: precision@k, nDCG@k against the whole judged pool and
    known-item recall@k, per query and as means with coverage counts. A top k holding a record
    nobody judged is reported as "unjudged", never as zero. Inputs are at most 5 MB each; the report
    is written to --out (docs/evaluation.md describes the files).

    Example:

    \b
      sitegen evaluate --runs runs.json --judgments judgments.json --k 10 --k 25 --out report.json
    """
    report = commands.evaluate(runs, judgments, known, list(ks), out, force)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    for name, mean in (("precision", report.precision), ("nDCG", report.ndcg), ("recall", report.recall)):
        click.echo(f"{name}: " + ", ".join(
            f"@{k} {'-' if value is None else f'{value:.3f}'} ({report.coverage(mean, k)})"
            for k, value in mean.value.items()))
    click.echo(f"wrote {shown_path(out)}")


def _not_blank(value: str, option: str) -> str:
    if not value.strip():
        raise click.BadParameter("is empty (or only spaces)", param_hint=option)
    return value


@cli.command("loop")
@click.argument("directory", type=GivenPath(path_type=Path, file_okay=False, exists=True))
@click.option("--topic", required=True, callback=lambda _ctx, _param, value: _not_blank(value, "--topic"),
              help="The manuscript's topic; its folder under output/evidence-loop/ is named by a hash of it.")
@click.option("--draft", type=GivenPath(path_type=Path, dir_okay=False), default=None,
              help="The Markdown draft (default: the only .md file in DIRECTORY); one named *.tex is read as LaTeX.")
@click.option("--bib", type=GivenPath(path_type=Path, dir_okay=False), default=None,
              help="The BibTeX file (default: the only .bib file in DIRECTORY).")
@click.option("--sources", metavar="NAME,...", default="openalex", show_default=True,
              help="Comma-separated providers the targeted searches use.")
@click.option("--out", type=OutputPath(file_okay=False), default=None,
              help="Folder for the loop's rounds instead of DIRECTORY/output/evidence-loop (a relative path is "
              "in DIRECTORY, like --draft and --bib).")
@click.option("--apply", is_flag=True, help="Apply the last round's confirm.yaml to the draft and .bib, and stop.")
# default: sitegen.manuscript.loop.MAX_SEARCHES, not imported here (the CLI loads a command's modules when used)
@click.option("--max-searches", type=click.IntRange(min=0), default=50, show_default=True,
              help="Targeted searches a round sends at most (providers' fair use): the problems over it are listed "
              "as not searched, and the next round searches them first.")
# default: sitegen.manuscript.loop.MAX_LOOKUPS
@click.option("--max-lookups", type=click.IntRange(min=0), default=200, show_default=True,
              help=".bib entries a round verifies at most (providers' fair use): the entries over it are listed as "
              "not verified, never as checked, and the next round (or a repeat of the round) verifies them first.")
@click.option("--snapshots", "mode", type=click.Choice(["live", "record", "replay"]),
              envvar="SITEGEN_SNAPSHOT_MODE", default="live", show_default=True,
              help="live: network only; record: save every response under the loop's snapshots/; replay: saved "
              "responses only, never the network.")
def loop_command(directory: Path, topic: str, draft: Path | None, bib: Path | None, sources: str, out: Path | None,
                 apply: bool, max_searches: int, max_lookups: int, mode: str) -> None:
    """Run the evidence loop on a draft manuscript (Markdown + .bib) in DIRECTORY.

    Each run does one step: round 1 (verify the .bib's entries, check the draft's claims, search for each
    problem, suggest revisions), then, once the round's confirm.yaml lists what you accept, round 2 on the
    revised draft. At most 2 rounds. Nothing in the draft or .bib changes unless confirm.yaml accepts it.
    Exit status 0 when the loop has converged, 1 when problems are left, 3 when it is paused: an index
    was rate limited or refused access (HTTP 401/403: most likely a missing or wrong key; it is asked nothing
    more that round), so some entries could not be checked, or entries were over --max-lookups, or the last round
    left work undone (an index did not answer it in full, or problems over --max-searches);
    run again later to re-verify them (the round is repeated, not counted again).

    Example:

    \b
      sitegen loop paper --topic "AI support for literature reviews"           # round 1
      sitegen loop paper --topic "AI support for literature reviews" --apply   # after editing its confirm.yaml
    """
    names = [name.strip() for name in sources.split(",") if name.strip()]
    result = commands.loop(directory, topic, sources=names, mode=mode, draft=draft, bib=bib, out=out, apply=apply,
                           max_searches=max_searches, max_lookups=max_lookups)
    base = result.manuscript.base
    if result.applied is not None:
        changed = [name for name, flag in (("the draft", result.applied.draft_changed),
                                           ("the .bib", result.applied.bib_changed)) if flag]
        click.echo(f"applied {', '.join(result.applied.accepted) or 'no suggestion'}; changed "
                   f"{' and '.join(changed) or 'nothing'}")
    elif result.round is not None:
        click.echo(f"round {result.round}: {counted(result.left, 'problem')}; see {shown_path(base / str(result.round) / 'problems.md')}")
    click.echo(f"summary: {shown_path(base / 'final-summary.md')}")
    from sitegen.manuscript.loop import again  # here, not at the top: the CLI loads a command's modules when used

    for name, cause in result.refused.items():  # on stderr: what to fix, as `update` says a source not reached
        then = again(result.rounds, result.left, result.paused) if result.left else "run the loop again to check what it could not"
        click.echo(f"warning: {name} refused access in round {result.rounds}, so it was asked nothing more: {cause}; "
                   f"fix that, then {then}", err=True)
    for said in result.incomplete:  # on stderr, as `update` names a source it did not reach
        click.echo(f"warning: round {result.rounds} is incomplete: {said}", err=True)
    if result.unsearched:  # over the round's limit: said, never passed over without a word
        click.echo(f"not searched in round {result.rounds} (over its limit of searches, --max-searches): "
                   f"{', '.join(result.unsearched)}; see {shown_path(base / str(result.rounds) / 'queries.md')}")
    why = "rate-limited or refused access" if result.refused else "rate-limited"
    if result.recheck:
        click.echo(f"re-check later ({why}, not searched): {', '.join(result.recheck)}")
    if result.unverified:  # over the round's limit of lookups: never counted as checked
        click.echo(f"not verified in round {result.rounds} (over its limit of lookups, --max-lookups, not searched): "
                   f"{', '.join(result.unverified)}")
    if not result.left and (result.recheck or result.unverified):
        causes = [f"an index was {'rate limited or refused access' if result.refused else 'rate limited'}"] \
            if result.recheck else []
        causes += ["over the round's limit of lookups, --max-lookups"] if result.unverified else []
        click.echo(f"paused after round {result.rounds}: {counted(len(result.recheck) + len(result.unverified), 'entry', 'entries')} "
                   f"could not be checked ({'; '.join(causes)}); run the loop again{' later' if result.recheck else ''} "
                   f"to {'re-verify' if result.recheck else 'verify'} them")
        raise click.exceptions.Exit(EXIT_INCOMPLETE)
    if not result.left:
        click.echo(f"converged in round {result.rounds}: no problem left")
        return
    if result.paused:  # the last round left something undone (`left_undone`): nothing later would do it
        later = " later" if result.incomplete else ""  # over its limit of searches only: no index to wait for
        click.echo(f"round {result.rounds} is incomplete ({counted(result.left, 'problem')} so far; its files are kept): "
                   f"run the loop again{later} to repeat round {result.rounds} (not a third round), or settle for it "
                   f"by listing what you accept in {shown_path(base / str(result.rounds) / 'confirm.yaml')}")
        raise click.exceptions.Exit(EXIT_INCOMPLETE)
    if result.rounds >= 2:
        click.echo(f"the loop stops after 2 rounds: {counted(result.left, 'problem')} left to check by hand")
    elif result.applied is not None:  # round 1's confirmation is applied: the next run is round 2
        click.echo(f"{counted(result.left, 'problem')} of round {result.rounds} before these changes: run the loop again for "
                   f"round {result.rounds + 1} on the revised draft")
    else:
        click.echo(f"{counted(result.left, 'problem')} left: accept suggestions in {shown_path(base / str(result.rounds) / 'confirm.yaml')} "
                   "(see revision-suggestions.md), then run again")
    raise click.exceptions.Exit(EXIT_INVALID)


@cli.command()
@click.option("--out", type=OutputPath(file_okay=False), default=None,
              help="Write one .schema.json per file format into this folder instead of listing them.")
def schema(out: Path | None) -> None:
    """Export the review-folder file formats as JSON Schema (for editors)."""
    if out is None:
        for name in json_schemas():
            click.echo(name)
        return
    for path in write_schemas(out):
        click.echo(f"wrote {shown_path(path)}")


class StandardOutputLost(OSError):
    """Standard output refused what a command printed: closed (`sitegen export DIR >&-`), a full disk, a file size
    limit. Not its reader gone (`| head`): that is a BrokenPipeError, and EXIT_BROKEN_PIPE."""


class _StandardOutputFile(io.FileIO):
    """File 1 as the program's standard output writes to it: all of what it is given, or StandardOutputLost. A
    write(2) that takes part of its bytes (a disk filling up, a reader leaving) is followed by one for the rest,
    which fails: Python's buffered writer left the rest unwritten, and a full disk cut an export short, exit 0."""

    def write(self, data) -> int:
        left = memoryview(data).cast("B")
        while left:
            try:
                count = super().write(left)
            except BrokenPipeError:
                raise
            except OSError as error:
                raise StandardOutputLost(error.errno, error.strerror) from None
            if count is None:  # a non-blocking output, full for now (a pipe another program set so)
                select.select([], [self], [])
            else:
                left = left[count:]
        return len(data)


def _hold_standard_streams() -> None:
    """Standard input, output and error held, and standard output written through _StandardOutputFile. One closed
    when the program started (`>&-`) is opened on the null device the wrong way round, so that using it fails as
    using a closed one does: else the first file the command opened took its number (the review's lock, which a
    forked renderer, keeping 0-2, then held), and Python left sys.stdout None, so what was printed went nowhere,
    exit 0."""
    for fd, unusable in ((0, os.O_WRONLY), (1, os.O_RDONLY), (2, os.O_RDONLY)):
        try:
            os.fstat(fd)
        except OSError:  # the lowest free number is fd's (the ones below are open by now)
            with contextlib.suppress(OSError):  # no null device (a bare container): nothing to hold it with
                os.open(os.devnull, unusable)
    was = sys.stdout
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(_StandardOutputFile(1, "w", closefd=False)),
                                  encoding=getattr(was, "encoding", None) or "utf-8",
                                  errors=getattr(was, "errors", None) or "strict",
                                  line_buffering=bool(was and was.line_buffering))


def main() -> None:
    """The `sitegen` program: the command, then the process ends at once, its output flushed and the
    writing of kept values waited for (`review.kept`). What the command read is freed with the process, not
    object by object (a third of a second for a review of 100,000 records, `sitegen.process`)."""
    process.held = []
    _hold_standard_streams()
    try:
        cli(prog_name="sitegen")
        status: object = 0
    except SystemExit as exit_:
        status = exit_.code
    except StandardOutputLost as lost:  # what the command printed is not there: it must not seem done
        wrote = f"it wrote {_written_shown()} (each whole)" if written else "it wrote no file"
        click.echo(f"error: standard output could not be written ({lost.strerror}), so what the command printed is "
                   f"missing or cut short; {wrote}", err=True)
        status = EXIT_INVALID
    try:
        if status is not None and not isinstance(status, int):
            click.echo(status, err=True)
            status = 1
        for stream in (sys.stdout, sys.stderr):  # sys.stderr is None when the program was started with it closed
            # A closed pipe (`sitegen ... | head`): what was not read is not wanted.
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        kept.wait_for_writers()
    except KeyboardInterrupt:  # Ctrl-C once the command has said what it did: what it kept is not written
        status = 130
    os._exit(status or 0)  # an int or None by now
