"""The one exception family the CLI knows how to show, the exit statuses, and how a message shows a path.

Library code raises these; `sitegen.cli` turns them into a message on stderr and
the exit status below, never a traceback. Anything else escaping is a bug.
"""

from __future__ import annotations

import os
import shlex
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sitegen.review.problems import Problem

# Exit statuses, documented in the README's command reference.
EXIT_OK = 0
EXIT_INVALID = 1  # the review folder (or other input) has problems
EXIT_USAGE = 2  # click's own status for a bad command line
EXIT_INCOMPLETE = 3  # a source could not be reached: results may be missing
EXIT_SCHEMA = 4  # a file's schema_version is not one this sitegen supports
EXIT_BUSY = 5  # another sitegen process holds the review's lock
EXIT_REFUSED = 6  # a citation has a refusal-grade verdict: unresolvable, mismatch, retracted or contradicted
EXIT_LOW_RECALL = 7  # a saved search retrieves fewer known-relevant studies than the protocol's validation_recall
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_BROKEN_PIPE = 141  # the reader of the output went away (`sitegen … | head`): 128 + SIGPIPE, as a shell reports it


class SitegenError(Exception):
    """Base class: a problem the user can act on, shown without a traceback."""

    exit_code = EXIT_INVALID
    # What the command did before it stopped (it finished an interrupted write, say), so the
    # message never claims that nothing was written.
    done: tuple[str, ...] = ()


class OptionInvalid(SitegenError):
    """A command-line option's value that is wrong in itself, whatever the review: `--at` that is no time (or is
    ahead of the clock), `--week` that is no ISO week, `--encoding` that names no text encoding. The command line
    is wrong, so the CLI shows it as click shows its own usage errors: exit 2, naming the option. A value well
    formed but wrong for the review (a time before its ledger's latest event) is a plain SitegenError."""

    exit_code = EXIT_USAGE

    def __init__(self, option: str, message: str):
        self.option, self.message = option, message
        super().__init__(f"{option} {message}")


class ReviewInvalid(SitegenError):
    """The review folder failed validation; `problems` says where and why."""

    def __init__(self, problems: list[Problem]):
        from sitegen.text import counted  # here: errors is imported by every module, and text imports records

        self.problems = problems
        super().__init__(f"the review folder has {counted(len(problems), 'problem')}")


class SchemaVersionError(SitegenError):
    """A file declares a schema_version this sitegen does not support (never coerced)."""

    exit_code = EXIT_SCHEMA

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("unsupported schema_version")


class OutputFileRefused(SitegenError):
    """A file a command was told to write that it may not write: there already (without --force), a folder, a
    device, in a folder that does not exist, inside the review, the same file as an input or another output. The
    command line is wrong, so the CLI shows it as click shows its own usage errors: exit 2."""

    exit_code = EXIT_USAGE


class OutputRefused(SitegenError):
    """A folder a command would write into that it may not write: `build --out` a folder that is not a sitegen site
    (or holds the review), `init DIR` a folder with content. No option makes sitegen write there, so it is a refusal
    (exit 1), not a wrong command line: a file already there (OutputFileRefused) is replaced with --force (exit 2)."""


class BuildError(SitegenError):
    """Rendering failed; the previous site is left untouched."""


class LockHeld(SitegenError):
    """Another sitegen process is writing this review folder."""

    exit_code = EXIT_BUSY


# A character a path is shown with escaped: a control, format (bidi) or line-separating character would break a
# message's line or reorder what it shows; a lone surrogate is a byte that is not UTF-8 (how Python reads one in a
# file name); a backslash and a double quote would be read as part of an escape or of the quotes.
_HIDDEN = ("Cc", "Cf", "Cs", "Zl", "Zp")
_NAMED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", '"': '\\"'}


def shown_path(path: str | os.PathLike[str]) -> str:
    """A path as every message shows it (errors and success lines, text, GitHub annotations and JSON alike): as
    it is, or, when it holds a character that does not show as itself, in double quotes with each such character
    escaped as C writes it, as git shows such a path: \\n, \\", \\\\, \\x01, \\u202e for a character, and
    \\xff for a byte that is not UTF-8. A message is then one line, and names its path unambiguously."""
    text = os.fspath(path)
    if not any(_hidden(char) for char in text):
        return text
    return '"' + "".join(_escaped(char) if _hidden(char) else char for char in text) + '"'


def symbolic_link(path: str | os.PathLike[str]) -> str:
    """Why a path given to write to, a symbolic link, is refused, in words naming the real folder or file it leads to
    (where it leads to nothing, that it does not exist): "a symbolic link to /srv/real", said of the path ("it is …").
    Said as itself, not as what the link looks like from behind it (a folder "not empty", a file that "exists")."""
    target = os.path.realpath(path)
    return f"a symbolic link to {shown_path(target)}{'' if os.path.exists(target) else ', which does not exist'}"


def cannot_read(path: str | os.PathLike[str], error: OSError) -> str:
    """How every message says a file given to sitegen could not be read: its path and why, as the system says it
    (an OSError's own text repeats its number and the path: "[Errno 22] …: '/tmp/x.bib'")."""
    return f"{shown_path(path)}: cannot be read ({error.strerror or error})"


def shown_argument(path: str | os.PathLike[str]) -> str:
    """A path as a command a message suggests names it (`run `sitegen recover DIR``): as `shown_path` shows it,
    in single quotes when a shell would read it as more than one word or expand it (a space, `$`, `*`, `'`),
    so that the command pasted acts on that folder. A path `shown_path` escapes stays as it shows it: one line."""
    shown = shown_path(path)
    return shlex.quote(shown) if shown == os.fspath(path) else shown


def shown_text(text: str) -> str:
    """Text from outside sitegen (a provider's error, a tag or an id it sent) as a message shows it: each character
    that does not show as itself (a control, a bidi or other format character, a line separator, a lone surrogate)
    escaped as `shown_path` escapes it (\\u202e), so that the message is one line and shows what it holds in the
    order it holds it; quotes and backslashes stay as written, as the text is not quoted."""
    if text.isprintable():  # most text, and a scan far quicker than one character at a time
        return text
    return "".join(_escaped(char) if unicodedata.category(char) in _HIDDEN else char for char in text)


def quoted_text(text: str) -> str:
    """Free text a person wrote (a retirement's reason, a work's title) as a message quotes it: in “…” whatever quotes
    it holds, each hidden character escaped (`shown_text`). Python's repr quoted it as code: in '…', in "…" when it
    held an apostrophe, its backslashes doubled. A value whose exact spelling matters (a path, an id, an option's
    value, a query) keeps repr's quotes: there they show where the value starts and ends, spaces and all."""
    return f"“{shown_text(text)}”"


def _hidden(char: str) -> bool:
    return char in _NAMED_ESCAPES or unicodedata.category(char) in _HIDDEN


def _escaped(char: str) -> str:
    code = ord(char)
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as Python's file system encoding reads it
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
