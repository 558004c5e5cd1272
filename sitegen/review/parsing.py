"""Read reviewer-editable files and report every problem with a line and column.

Each reader returns the parsed data plus the problems it found; none raises on
bad input. Positions are 1-based, as editors and GitHub annotations count them.
"""

from __future__ import annotations

import bisect
import codecs
import contextlib
import csv
import hashlib
import io
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeVar

import yaml
from pydantic import BaseModel, StringConstraints, TypeAdapter, ValidationError
from pydantic_core import SchemaValidator

from sitegen.files import SPREADSHEETS, utf16_order
from sitegen.records.ids import forced_text, record_id_problem
from sitegen.records.model import CONTROL_CHARACTER, NONCHARACTER, printable
from sitegen.review.problems import Problem

Loc = tuple[str | int, ...]
Position = tuple[int, int]  # (line, column), 1-based


def split_lines(text: str, *, keepends: bool = False) -> list[str]:
    """Lines as editors and Git count them: split on \n only.

    str.splitlines also splits on U+2028, U+0085 and other separators that JSON
    writes raw inside strings, which would cut a record in two.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if keepends:
        return [line + "\n" for line in lines[:-1]] + ([lines[-1] + ("\n" if text.endswith("\n") else "")]
                                                        if lines else [])
    return [line.removesuffix("\r") for line in lines]


def symlink_problem(rel: str) -> Problem:
    # A link could make sitegen read (and publish) a file from outside the review, or write one there.
    return Problem(rel, None, None, "symlink",
                   "is a symbolic link; sitegen reads only real files and folders inside the review")


def walk(root: Path) -> Iterator[tuple[str, os.DirEntry]]:
    """(path relative to `root` with forward slashes, entry) for everything under `root`.

    Links are never followed. os.scandir reads each entry's type with the folder listing,
    so a hundred thousand snapshot bodies cost no call each. Git's own `.git` is not the review's.
    """
    folders = [root]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                yield Path(entry.path).relative_to(root).as_posix(), entry
                if entry.is_dir(follow_symlinks=False) and entry.name != ".git":
                    folders.append(Path(entry.path))


def unreadable(rel: str, error: OSError) -> Problem:
    """The problem of a file the system would not let sitegen read (permission denied, an input/output error): a
    problem on that file, like any other, not the end of the command, so `check` still reports the rest."""
    advice = ": give the user sitegen runs as permission to read it" if isinstance(error, PermissionError) else ""
    return Problem(rel, None, None, "unreadable", f"file could not be read ({error.strerror or error}){advice}")


def _refusal(path: Path, rel: str, limit: int) -> Problem | None:
    """Why `path` is not a regular file of at most `limit` bytes that may be read, or None when it is one."""
    try:
        if path.is_symlink():
            return symlink_problem(rel)
        if not path.exists():
            return Problem(rel, None, None, "missing", "file is missing")
        if not path.is_file():
            return Problem(rel, None, None, "not-a-file", "not a regular file (a folder, device or pipe)")
        size = path.stat().st_size
    except OSError as error:  # a folder on its path that may not be searched
        return unreadable(rel, error)
    if size > limit:
        return Problem(rel, None, None, "too-large",
                       f"file is {size / 1e6:.1f} MB, larger than the {limit / 1e6:g} MB limit for this kind of file")
    return None


def _utf16_text(raw: bytes) -> bool:
    """Whether `raw` reads as UTF-16 text, by its byte-order mark or, without one (as some tools write it), its
    zeros, and a first line in ASCII (as the first line of every file sitegen reads is: a CSV header, with tabs
    between its names in a spreadsheet's "Unicode text"; a JSON or YAML key), so bytes that merely begin as the
    mark does are not called UTF-16."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    elif order := utf16_order(raw):
        encoding = f"utf-16-{order}"
    else:
        return False
    try:
        first = raw.decode(encoding).partition("\n")[0].rstrip("\r")
    except UnicodeDecodeError:
        return False
    return first.strip() != "" and first.isascii() and first.replace("\t", " ").isprintable()


def save_as_utf8(rel: str) -> str:
    """How to mend a file in another encoding: a CSV is most often a spreadsheet's, whose plain "CSV" is
    Windows-1252 on Windows and its "Unicode text" UTF-16."""
    return "save it as UTF-8" + (' (in a spreadsheet, as "CSV UTF-8")' if rel.lower().endswith(".csv") else "")


def _decode(raw: bytes, rel: str, first_line: int) -> tuple[str | None, Problem | None]:
    """`raw` (which starts on line `first_line`) as text, or the problem on the line of its first bad byte."""
    try:
        # On line 1, tolerate the byte-order mark spreadsheets add.
        text = raw.decode("utf-8-sig" if first_line == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        line, why = first_line + raw.count(b"\n", 0, exc.start), f"file is not valid UTF-8 text: {save_as_utf8(rel)}"
    else:
        if "\x00" not in text:
            return text, None
        line, why = first_line + text.count("\n", 0, text.index("\x00")), "file contains a NUL byte (binary data?)"
    if first_line == 1 and raw.startswith(SPREADSHEETS):
        return None, Problem(rel, 1, None, "encoding", "file is a spreadsheet's workbook (.xlsx or .xls), not text: "
                                                       + save_as_utf8(rel).replace("save it", "save it again", 1))
    if first_line == 1 and _utf16_text(raw):
        # What a spreadsheet's "Unicode text" writes: every character is there, in the wrong encoding (without its
        # byte-order mark, ASCII in UTF-16 is valid UTF-8 holding NULs).
        return None, Problem(rel, 1, None, "encoding", f"file is UTF-16 text, not UTF-8: {save_as_utf8(rel)}")
    return None, Problem(rel, line, None, "encoding", why)


def read_text(path: Path, rel: str, limit: int) -> tuple[str | None, list[Problem]]:
    """Read a UTF-8 text file no larger than `limit` bytes; refuse links, binary and a merge left unresolved."""
    refusal = _refusal(path, rel, limit)
    if refusal is not None:
        return None, [refusal]
    try:
        raw = path.read_bytes()
    except OSError as error:
        return None, [unreadable(rel, error)]
    text, problem = _decode(raw, rel, 1)
    if text is not None and problem is None and (problem := merge_conflict(text, rel)):
        return None, [problem]
    return text, [problem] if problem else []


# The lines Git writes around a merge conflict it could not resolve: "<<<<<<< HEAD", then "=======" (which alone
# could be a Markdown heading's underline), then ">>>>>>> branch"; with merge.conflictStyle diff3, "||||||| base"
# before the "=======".
_CONFLICT_START = re.compile(r"^<{7}(?: .*)?\r?$", re.MULTILINE)
_CONFLICT_END = re.compile(r"^>{7}(?: .*)?\r?$", re.MULTILINE)
# One of them left alone, a conflict resolved in part (its start or end marker not removed): no review file holds
# such a line otherwise, as `git diff --check` takes it for a leftover marker too. "=======" alone is left to the
# file's own reading: it underlines a Markdown heading, and may be a line of a note.
_LONE_MARKER = re.compile(r"^(?:<{7}|>{7}|\|{7})(?: .*)?\r?$", re.MULTILINE)


def merge_conflict(text: str, rel: str, first_line: int = 1) -> Problem | None:
    """The problem of a Git merge conflict left in `text` (starting on `first_line`), at its first marker, or of a
    marker left alone."""
    if "<<<<<<<" not in text and ">>>>>>>" not in text and "|||||||" not in text:  # most files: scans in C
        return None
    start = _CONFLICT_START.search(text)
    if start is not None and _CONFLICT_END.search(text, start.end()):
        return Problem(rel, first_line + text.count("\n", 0, start.start()), 1, "merge-conflict", CONFLICT_MESSAGE)
    if (lone := _LONE_MARKER.search(text)) is None:
        return None
    return Problem(rel, first_line + text.count("\n", 0, lone.start()), 1, "merge-conflict",
                   f"a line Git writes around a merge conflict ({lone.group().rstrip()[:40]!r}) was left here: the "
                   "conflict was resolved only in part; keep the lines meant, remove the marker, then check again")


CONFLICT_MESSAGE = ("a Git merge conflict was left unresolved here (the lines Git writes as '<<<<<<<', '=======' and "
                    "'>>>>>>>'): keep the lines meant, remove the markers, then check again")
_CONFLICT_LINE = re.compile(r"(?:<{7}|>{7}|\|{7})(?: .*)?\r?|={7}\r?")


# One line of a JSON-lines file holds one record, ledger event or snapshot entry. The longest real ones are
# retrieval events listing every record id a run found: a million ids take about 30 MB. 64 MB leaves room for
# that while bounding what one line of a bad file (say, 900 MB without a line break) can make sitegen hold.
MAX_LINE_BYTES = 64 * 1_000_000
# Problems reported of one file before reading it stops: a few megabytes of bad lines (4,000,000 blank ones)
# made millions of problems, gigabytes of memory and as many lines of output, where the first ones say it all.
MAX_PROBLEMS_PER_FILE = 200


def stopped(rel: str, line: int | None) -> Problem:
    """The problem that ends the reading of a file with MAX_PROBLEMS_PER_FILE problems found before `line`."""
    return Problem(rel, line, None, "too-many-problems",
                   f"{MAX_PROBLEMS_PER_FILE} problems found before this line: the rest of the file was not read "
                   "(fix these, then check again)")


def read_lines(path: Path, rel: str, limit: int, problems: list[Problem]) -> Iterator[tuple[int, str]]:
    """(line number, line) for each line of a UTF-8 file of at most `limit` bytes, read as a stream.

    Lines are split as `split_lines` splits them. At a line that is too long, not UTF-8
    or holds a NUL byte, the problem is added to `problems` and reading stops there:
    the rest of a bad file is never read.
    """
    refusal = _refusal(path, rel, limit)
    if refusal is not None:
        problems.append(refusal)
        return
    with contextlib.closing(_pieces_of_file(path, rel, problems)) as pieces:  # closing the file when reading stops
        yield from _lines_of_pieces(pieces, rel, problems)


def _lines_of_pieces(pieces: Iterator[bytes], rel: str, problems: list[Problem]) -> Iterator[tuple[int, str]]:
    """(line number, line) for each line of `pieces`, the pieces of a file, as `read_lines` reads them."""
    first = 1  # the line each piece starts on
    for piece in pieces:
        text = _piece_text(piece, first)
        if text is None:  # a problem somewhere in it: judged line by line, to name the line
            for lineno, raw in enumerate(_raw_lines(piece), start=first):
                line, problem = _judged_line(raw, rel, lineno)
                if problem is not None:
                    problems.append(problem)
                    return
                yield lineno, line
        else:
            lines = text.split("\n")
            if piece.endswith(b"\n"):  # nothing after its last line break (a line 1 of only a BOM is a line)
                lines.pop()
            for lineno, line in enumerate(lines, start=first):
                yield lineno, line.removesuffix("\r")
        first += piece.count(b"\n")


# A file is read in pieces of whole lines of about this size, each decoded and split at once: a call per
# line (readline, decode) cost more than the rest of reading a record.
_PIECE_BYTES = 1 << 20


def _pieces_of_file(path: Path, rel: str, problems: list[Problem]) -> Iterator[bytes]:
    """The pieces of the file at `path` (see _pieces_of_lines); when the system will not let it be opened or read
    to its end, its problem is added to `problems` and the pieces end there."""
    try:
        with path.open("rb") as handle:
            yield from _pieces_of_lines(handle)
    except OSError as error:
        problems.append(unreadable(rel, error))


def _pieces_of_lines(handle: BinaryIO) -> Iterator[bytes]:
    """The bytes of `handle` in pieces that each end with a line break but the file's last. A line
    longer than MAX_LINE_BYTES is cut after MAX_LINE_BYTES + 1 bytes (enough to know it is too long)
    and ends the pieces, so one bad line never makes sitegen hold more."""
    pending: list[bytes] = []  # the start of a line that has not ended yet
    pending_size = 0
    while block := handle.read(_PIECE_BYTES):
        end = block.rfind(b"\n") + 1
        if end == 0:
            pending.append(block)
            pending_size += len(block)
            if pending_size > MAX_LINE_BYTES + 1:
                yield b"".join(pending)[: MAX_LINE_BYTES + 1]
                return
            continue
        yield b"".join((*pending, block[:end]))
        pending, pending_size = [block[end:]], len(block) - end
    if pending_size:  # the last line, with no line break after it
        yield b"".join(pending)


def _piece_text(piece: bytes, first_line: int) -> str | None:
    """`piece` (which starts on line `first_line`) as text when none of its lines has a problem, else None.
    A piece no longer than a line may be holds no line that is too long."""
    if len(piece) > MAX_LINE_BYTES:
        return None
    try:
        text = piece.decode("utf-8-sig" if first_line == 1 else "utf-8")  # as _decode reads line 1
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def _raw_lines(piece: bytes) -> Iterator[bytes]:
    """The lines of `piece`, each with its line break."""
    parts = piece.split(b"\n")
    for part in parts[:-1]:
        yield part + b"\n"
    if parts[-1]:
        yield parts[-1]


def _judged_line(raw: bytes, rel: str, lineno: int) -> tuple[str, None] | tuple[None, Problem]:
    """Line `lineno` (its bytes `raw`, with its line break) as text, or the problem that stops reading at it."""
    raw = raw[: MAX_LINE_BYTES + 1]  # what is read of a line before it is known to be too long
    if len(raw) - raw.endswith(b"\n") > MAX_LINE_BYTES and b"\x00" not in raw:
        return None, Problem(rel, lineno, None, "too-large",
                             f"line is longer than the {MAX_LINE_BYTES / 1e6:g} MB limit for one line")
    line, problem = _decode(raw, rel, lineno)  # binary data is named as such, however long its line
    if problem is not None:
        return None, problem
    return line.removesuffix("\n").removesuffix("\r"), None


def lone_carriage_return(rel: str, line: int) -> Problem:
    """The problem of a file whose lines end with a carriage return alone (at `line`, the first such): Git, editors
    and sitegen end a line only at "\n", so such a file reads as one line, and its records or rows run together."""
    return Problem(rel, line, 1, "line-ends", f"{Path(rel).name} ends its lines with a carriage return alone (as "
                                              "classic Mac OS wrote text): save it with LF or CRLF line ends")


def _filled_lines(path: Path, rel: str, limit: int, problems: list[Problem],
                  unreadable: list[Problem]) -> Iterator[tuple[int, str]]:
    """(line number, line) for each line of a JSON-lines file that is not blank, a problem added for each
    blank one; the problem that stops reading (the file cannot be read to its end) goes to `unreadable`."""
    for lineno, line in read_lines(path, rel, limit, unreadable):
        if len(problems) >= MAX_PROBLEMS_PER_FILE:
            unreadable.append(stopped(rel, lineno))
            return
        if line.strip():
            yield lineno, line
        else:
            problems.append(Problem(rel, lineno, 1, "blank-line", "blank line (one JSON object per line, no gaps)"))


def json_lines(path: Path, rel: str, limit: int, problems: list[Problem],
               unreadable: list[Problem]) -> Iterator[tuple[int, Any, str]]:
    """(line number, value, line) for each line of a JSON-lines file that holds a JSON value, read as a
    stream. The problems of other lines are added to `problems`; the one that stops reading (the file
    cannot be read to its end) to `unreadable`."""
    for lineno, line in _filled_lines(path, rel, limit, problems, unreadable):
        value, line_problems = parse_json_line(line, rel, lineno)
        if line_problems:
            problems += line_problems
        else:
            yield lineno, value, line


class CountsItsKeys(Protocol):
    """A model that can say how many keys the JSON it was read from gave, at least: the fields it was
    given, and those of the values it holds (a field given as null may go uncounted). `model_lines`
    reads such models; none of them holds a float."""

    def keys_given(self) -> int: ...


# `model_lines` first lets pydantic read a line, in Rust (3.5 s for 100,000 records, where load_json and
# a validation of what it gives took 4.3). Its reader refuses what load_json refuses (a lone surrogate, a
# raw control character, an integer of more digits than MAX_INTEGER_DIGITS) but two things: a number
# beyond floating point, NaN or Infinity (which a model holding no float refuses) and a key given twice in
# one object (it keeps the last). Every key of the line ends in a quote and a colon, so the line holds at
# least as many of those as keys: when that is no more than the keys its value was given, no key was given
# twice. Otherwise, or when it finds a problem, the line is read again the way that places each problem.
_KEY_END = re.compile(r'"[ \t\r\n]*:')
# Escapes that can write a character `printable` refuses: \b, \f and \uXXXX (\n, \r and \t it allows).
# An escaped backslash before a b, f or u is counted too, which only sends a line the slower way.
_UNPRINTABLE_ESCAPE = re.compile(r"\\[bfu]")


def _proves_printable(line: str) -> bool:
    """Whether every text a JSON line holds is sure to pass `printable`: no character of the line itself
    is unprintable (the C1 controls, noncharacters, DEL and lone surrogates are not; JSON allows no
    raw C0 control in text) and no escape writes one. Most lines are ASCII, checked quickest."""
    return ((line.isascii() and "\x7f" not in line) or line.isprintable()) \
        and ("\\" not in line or not _UNPRINTABLE_ESCAPE.search(line))


@cache
def _printable_proven(model: type[BaseModel]) -> SchemaValidator:
    """`model`'s validator without its `printable` checks, for lines `_proves_printable` vouches for.
    Each check is a call into Python for each text of a record, a third of the time to read one: the
    schema is `model`'s own with those checks taken out, so every other rule still applies."""
    def without_printable(schema: Any) -> Any:
        if isinstance(schema, dict):
            function = schema.get("function")
            if schema.get("type") == "function-after" and isinstance(function, dict) \
                    and function.get("function") is printable:
                return without_printable(schema["schema"])
            return {key: without_printable(value) for key, value in schema.items()}
        if isinstance(schema, list):
            return [without_printable(value) for value in schema]
        return schema
    return SchemaValidator(without_printable(model.__pydantic_core_schema__))


K = TypeVar("K", bound=CountsItsKeys)


def model_lines(model: type[K], path: Path, rel: str, limit: int, problems: list[Problem],
                unreadable: list[Problem]) -> Iterator[tuple[int, K | None, str, list[Problem]]]:
    """(line number, value as `model` or None, line, the value's problems) for each line of a JSON-lines
    file that holds a JSON value, read as a stream; other problems are added as `json_lines` adds them."""
    proven = _printable_proven(model)
    found = 0  # problems of values, which the caller keeps
    for lineno, line in _filled_lines(path, rel, limit, problems, unreadable):
        if len(problems) + found >= MAX_PROBLEMS_PER_FILE:
            unreadable.append(stopped(rel, lineno))
            return
        try:
            value = (proven.validate_json(line) if _proves_printable(line) else model.model_validate_json(line))
        except ValidationError:
            value = None
        if value is not None and len(_KEY_END.findall(line)) == value.keys_given():
            yield lineno, value, line, []
            continue
        data, line_problems = parse_json_line(line, rel, lineno)
        if line_problems:
            problems += line_problems
        else:
            value, value_problems = validate(model, Parsed(data), rel, line=lineno)
            found += len(value_problems)
            yield lineno, value, line, value_problems


def read_json_lines(path: Path, rel: str, limit: int) -> tuple[list[tuple[int, Any]] | None, list[Problem]]:
    """(line number, value) for each line of a JSON-lines file; None when the file cannot be read to its end."""
    problems: list[Problem] = []
    unreadable: list[Problem] = []
    rows = [(lineno, value) for lineno, value, _ in json_lines(path, rel, limit, problems, unreadable)]
    return (None if unreadable else rows), problems + unreadable


def line_digest(line: str) -> bytes:
    """What a line says, in 16 bytes."""
    return hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=16).digest()


# --------------------------------------------------------------------------- numbers

# Python refuses to convert an integer of more than 4,300 digits to or from text (CVE-2020-10735);
# no count, version or year in a review comes near, so a longer one is a mistake or an attack.
MAX_INTEGER_DIGITS = 4300
_INTEGER_LIMIT = 10**MAX_INTEGER_DIGITS


class _NumberRefused(ValueError):
    code = "number"


def _integer(literal: str, parse: Callable[[str], int]) -> int:
    """`parse(literal)`, refusing an integer of more than MAX_INTEGER_DIGITS digits.

    The literal's length is checked before parsing it: Python refuses to convert a longer
    one, and YAML's base-60 form (1:30:00) takes quadratic time. The value is checked
    after, as YAML's hexadecimal and binary forms pack more than a digit into a character.
    """
    if len(literal.lstrip("+-")) > MAX_INTEGER_DIGITS or abs(value := parse(literal)) >= _INTEGER_LIMIT:
        raise _NumberRefused(f"number too large: an integer may have at most {MAX_INTEGER_DIGITS} digits")
    return value


def _finite(value: float, literal: str) -> float:
    # Infinity and NaN are not numbers a review can use, and a number too large for
    # floating point (1e999) would silently become one.
    if not math.isfinite(value):
        shown = literal if len(literal) <= 40 else literal[:37] + "..."
        raise _NumberRefused(f"not a finite number: {shown}")
    return value


# --------------------------------------------------------------------------- YAML


class _StrictConstructor(yaml.constructor.SafeConstructor):
    """SafeConstructor whose refusal of a value says where the value is, with the number limits above."""

    def construct_object(self, node, deep=False):  # type: ignore[override]
        # PyYAML's constructors fail on a bad value (!!timestamp 2024-13-45, !!bool x, !!int "")
        # with plain Python errors that carry no position: give them the node's.
        try:
            value = super().construct_object(node, deep)
        except _NumberRefused as exc:
            raise _ValueRefused(node.start_mark, exc.code, str(exc)) from None
        except (ValueError, LookupError, AttributeError, TypeError, OverflowError):
            kind = node.tag.rsplit(":", 1)[-1]
            raise _ValueRefused(node.start_mark, "yaml-value", f"YAML error: this value is not a valid {kind}") from None
        if isinstance(value, str) and _SURROGATE.search(value):  # a "\\udfff" escape: no character
            value = _paired_surrogates(value)
            if value is None:
                raise _ValueRefused(node.start_mark, "yaml-value", "YAML error: this text holds a lone UTF-16 "
                                    "surrogate escape (\\ud800-\\udfff), which is no character")
        return value


def _paired_surrogates(text: str) -> str | None:
    """`text` with each pair of surrogate escapes as the one character it writes, as JSON reads "\\ud83d\\ude00"
    (😀), which is YAML too: a file written by a JSON writer escapes every character beyond U+FFFF so, and PyYAML
    reads the pair as two lone surrogates. None when a surrogate is left without its pair."""
    try:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        return None


class _ValueRefused(yaml.YAMLError):
    def __init__(self, mark: yaml.Mark, code: str, message: str):
        super().__init__(message)
        self.mark, self.code, self.message = mark, code, message


# YAML 1.1 reads numbers in forms a reviewer does not mean as numbers, or not as that number: a leading 0 makes
# it octal (010 is 8), 0x and 0b hexadecimal and binary, ':' base 60 (1:00 is 60, 12:30 is 750), and '_' is
# skipped (1_0 is 10). A count so read (title_abstract_reviewers: 010, full_text_reviewers: 1_0) would silently
# be another, and the PRISMA counts with it: a number is written in decimal digits alone, as JSON writes it.
_NOT_DECIMAL = (
    (re.compile(r"[-+]?0[0-7_]+"), "a leading 0 making it octal"),
    (re.compile(r"[-+]?0x[0-9a-fA-F_]+"), "reading 0x as hexadecimal"),
    (re.compile(r"[-+]?0b[01_]+"), "reading 0b as binary"),
    (re.compile(r"[^:]*:.*"), "reading ':' as base 60 (minutes and seconds)"),
    (re.compile(r"[^_]*_.*"), "skipping each '_'"),
)


def _decimal_only(literal: str, value: int | float) -> None:
    """Refuse a YAML number written otherwise than in decimal digits (see _NOT_DECIMAL), saying what YAML read."""
    for form, why in _NOT_DECIMAL:
        if form.fullmatch(literal):
            shown = literal if len(literal) <= 40 else literal[:37] + "..."
            read = f"{value:g}" if isinstance(value, float) else value
            raise _NumberRefused(f"YAML reads {shown} as {read}, {why}: write the number in decimal digits alone, "
                                 "without leading zeros, and put text in quotes")


def _construct_integer(loader: _StrictConstructor, node: yaml.ScalarNode) -> int:
    value = _integer(node.value, lambda _: yaml.constructor.SafeConstructor.construct_yaml_int(loader, node))
    _decimal_only(node.value, value)
    return value


def _construct_float(loader: _StrictConstructor, node: yaml.ScalarNode) -> float:
    value = _finite(yaml.constructor.SafeConstructor.construct_yaml_float(loader, node), node.value)
    _decimal_only(node.value, value)
    return value


_StrictConstructor.add_constructor("tag:yaml.org,2002:int", _construct_integer)
_StrictConstructor.add_constructor("tag:yaml.org,2002:float", _construct_float)

_BOOL = "tag:yaml.org,2002:bool"
_MERGE = "tag:yaml.org,2002:merge"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def _reviewer_friendly_resolvers() -> dict:
    # YAML 1.1 reads yes/no/on/off as booleans and 2024-01-01 as a date, but
    # reviewers mean text. Only true/false stay booleans; dates stay strings.
    table = {
        first: [(tag, rx) for tag, rx in entries if tag not in (_BOOL, _TIMESTAMP)]
        for first, entries in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
    }
    for first in "tTfF":
        table.setdefault(first, []).insert(0, (_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")))
    return table


class _ReviewerResolver(yaml.resolver.Resolver):
    yaml_implicit_resolvers = _reviewer_friendly_resolvers()


# What may follow blanks at the end of a line: a line break (YAML's own), a comment, or the end of the text.
_ENDS_A_LINE = "#\0\r\n\x85\u2028\u2029"


class _StrictYamlLoader(_StrictConstructor, _ReviewerResolver, yaml.SafeLoader):
    """PyYAML's loader written in Python, with the rules above; it refuses aliases (no billion laughs) as it
    composes. It reads what libyaml does not (see `_fast_parse`) and places every problem.

    It skips tabs among the blanks that end a line (before its line break or comment), as YAML 1.2 does (a tab is
    separation there: the YAML test suite's "Various trailing tabs", DC7X) and libyaml does: PyYAML refused
    'title: My review<tab>' as a syntax error, which looks like 'title: My review' in an editor. Other tabs
    outside quotes and block text stay refused (see `TAB_REFUSED`)."""

    def _blanks_ending_line(self) -> int:
        """How many spaces and tabs from here end the line; 0 when something else follows them on it."""
        length = 0
        while self.peek(length) in " \t":
            length += 1
        return length if self.peek(length) in _ENDS_A_LINE else 0

    def scan_to_next_token(self):  # type: ignore[override]
        super().scan_to_next_token()  # stops at the first tab: skip those that end their line, and go on
        while blanks := self._blanks_ending_line():
            self.forward(blanks)
            super().scan_to_next_token()

    def scan_plain_spaces(self, indent, start_mark):  # type: ignore[override]
        # Blanks ending a line of plain text, then the line break: the text goes on on the next line, if indented.
        self.forward(self._blanks_ending_line())
        return super().scan_plain_spaces(indent, start_mark)

    def scan_block_scalar_ignored_line(self, start_mark):  # type: ignore[override]
        self.forward(self._blanks_ending_line())  # after '|' or '>' and its indicators
        return super().scan_block_scalar_ignored_line(start_mark)

    def compose_node(self, parent, index):  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.MarkedYAMLError(None, None, "aliases (*name) are not allowed", event.start_mark)
        return super().compose_node(parent, index)


# The same rules over libyaml's parser and composer, written in C: four times as fast for an evidence file. PyYAML built without
# libyaml (from source, where libyaml is absent) has none, and reads every file with the loader above.
_LibyamlLoader = (type("_LibyamlLoader", (_StrictConstructor, _ReviewerResolver, yaml.CSafeLoader), {})
                  if yaml.__with_libyaml__ else None)

# libyaml refuses nesting deeper than 1,000, but only after spending memory that grows with the square of the
# depth (measured: 20,000 '[' took 0.4 GB, 100,000 took 10 GB). Each collection starts at a character of its
# own among these ('[' '{', a block sequence's first '-', a mapping's first ':' or '?'), so their count bounds
# the depth: a text with more is left to the Python loader, which stops at Python's recursion limit.
_COLLECTION_MARKS = "[{-:?"
_LIBYAML_MARKS = 5000
# Where libyaml and PyYAML read alike text differently (found by tests/test_quick_yaml_csv.py): libyaml accepts
# tabs where PyYAML refuses them ("a:\tb", "a\tb") and a comment straight after a block scalar's indicator
# ("|#"), reads a lone "!" tag as text, not null, and skips a byte-order mark (U+FEFF) inside the text where
# PyYAML reads it as a character. These go to the Python loader, as does an empty item or key (see `_walk`).
_UNLIKE = re.compile("[\t!\ufeff]|[|>][-+0-9]*#")


# YAML ends a line at a lone carriage return and at U+0085, U+2028 and U+2029 too (a passage pasted from a PDF
# may hold one); editors and Git end lines only at "\n". A YAML mark's line is then not the file's.
_OTHER_LINE_ENDS = re.compile("\r(?!\n)|[\x85\u2028\u2029]")


@dataclass(frozen=True)
class _Placer:
    """(line, column) of a YAML mark in the file, as editors count them, for text starting `line_offset`
    lines into the file."""

    line_offset: int
    line_starts: list[int] | None = None  # where each line starts, for a text YAML counts lines of otherwise

    @classmethod
    def of(cls, text: str, line_offset: int) -> _Placer:
        if not _OTHER_LINE_ENDS.search(text):
            return cls(line_offset)
        return cls(line_offset, [0, *(found.end() for found in re.finditer("\n", text))])

    def __call__(self, mark: yaml.Mark) -> Position:
        if self.line_starts is None:
            return mark.line + 1 + self.line_offset, mark.column + 1
        line = bisect.bisect_right(self.line_starts, mark.index) - 1  # mark.index counts characters
        return line + 1 + self.line_offset, mark.index - self.line_starts[line] + 1


def _only_document(loader: Any) -> yaml.Node | None:
    """The one document of a YAML stream (None when it has none). An empty document after it (a last "---"
    some editors and tools leave) is no second one; a second document with anything in it is refused, as
    PyYAML refuses it, at its start."""
    node = loader.get_node() if loader.check_node() else None
    while loader.check_node():
        extra = loader.get_node()
        if not (isinstance(extra, yaml.ScalarNode) and extra.tag == "tag:yaml.org,2002:null" and extra.value == ""):
            raise yaml.composer.ComposerError("expected a single document in the stream",
                                              node.start_mark if node is not None else None,
                                              "but found another document", extra.start_mark)
    return node


def _fast_parse(text: str, place: _Placer) -> Parsed | None:
    """`text` read by libyaml when it is one valid document with no alias, no duplicate key and text for keys;
    otherwise None: the Python loader then reads it as sitegen always has, and places whatever is wrong. So
    libyaml's parser, whose messages and positions differ from PyYAML's, never words a problem."""
    if _LibyamlLoader is None or sum(map(text.count, _COLLECTION_MARKS)) > _LIBYAML_MARKS or _UNLIKE.search(text):
        return None
    loader = None
    try:
        loader = _LibyamlLoader(text)
        node = _only_document(loader)
        if node is None:
            return Parsed(None)
        walked = _walk(node, "", place, libyaml=True)
        if walked is None or walked[1]:
            return None
        return Parsed(loader.construct_document(node), walked[0])
    except Exception:  # whatever libyaml or a constructor refuses, the Python loader reads again: it accepts it
        return None   # as sitegen always has, or says what is wrong and where
    finally:
        if loader is not None:
            loader.dispose()


@dataclass
class Parsed:
    """Parsed data with the position of every mapping key and value found in it.

    For JSON a position is worked out only when a problem needs one (a valid file
    never does), by walking the text down to it.
    """

    data: Any
    positions: dict[Loc, Position] = field(default_factory=dict)
    source: str | None = None  # JSON text, where positions are found on demand

    def character_position(self, loc: Loc, offset: int) -> Position | None:
        """Where character `offset` (0-based) of the string at `loc` is written (JSON only), else where `loc` is."""
        if self.source is not None and (found := json_character_position(self.source, loc, offset)):
            return found
        return self.position(loc)

    def position(self, loc: Loc) -> Position | None:
        if self.source is not None:
            return json_position(self.source, loc)
        # The longest prefix of `loc` we know: a missing key points at its parent.
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.positions:
                return self.positions[loc[:end]]
        return None


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SKIPPER = json.JSONDecoder()  # plain: positions are only sought in JSON that parsed already


def json_position(text: str, loc: Loc) -> Position:
    """Where `loc`, or its longest prefix present, starts in the JSON `text`: for an object
    member, its key (as YAML positions are given). Sibling values on the way are skipped by
    the C parser, so this is linear in the text, however large."""
    return _line_and_column(text, _json_place(text, loc)[0])


def _line_and_column(text: str, index: int) -> Position:
    return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)


def json_character_position(text: str, loc: Loc, offset: int) -> Position | None:
    """Where character `offset` (0-based) of the string at `loc` is written in the JSON `text`, its escapes
    (\\n, \\u00e9, a surrogate pair) read as the one character each stands for; None when `loc` is not there,
    is no string, or is shorter. A JSON string is on one line, so the line is the string's."""
    found, value, whole = _json_place(text, loc)
    if not whole or not text.startswith('"', value):
        return None
    index = value + 1
    for _ in range(offset):
        if text.startswith('"', index):
            return None  # the string ended first
        index += _escape_length(text, index) if text.startswith("\\", index) else 1
    return _line_and_column(text, index)


def _escape_length(text: str, index: int) -> int:
    """The length of the escape at `index` of a JSON string, as one decoded character: a \\u escape of a high
    surrogate followed by one of a low surrogate is one character, as Python's json reads it."""
    if not text.startswith("\\u", index):
        return 2
    if (0xD800 <= int(text[index + 2:index + 6], 16) < 0xDC00 and text.startswith("\\u", index + 6)
            and 0xDC00 <= int(text[index + 8:index + 12], 16) < 0xE000):
        return 12
    return 6


def _json_place(text: str, loc: Loc) -> tuple[int, int, bool]:
    """Where `loc`, or its longest prefix present, starts in `text` (an object member's key), where its value
    starts, and whether the whole of `loc` was found."""
    def blank(index: int) -> int:
        return _WHITESPACE.match(text, index).end()

    def after_value(index: int) -> int:
        index = blank(_SKIPPER.raw_decode(text, index)[1])
        return blank(index + 1) if text.startswith(",", index) else index

    found = index = blank(0)
    for part in loc:
        member = None
        cursor = blank(index + 1)
        if text.startswith("{", index) and isinstance(part, str):
            while text.startswith('"', cursor):
                key, end = json.decoder.scanstring(text, cursor + 1)
                value = blank(blank(end) + 1)  # past the colon
                if key == part:
                    member = (cursor, value)
                    break
                cursor = after_value(value)
        elif text.startswith("[", index) and isinstance(part, int):
            for _ in range(part):
                if text.startswith("]", cursor):
                    break
                cursor = after_value(cursor)
            else:
                member = (cursor, cursor) if not text.startswith("]", cursor) else None
        if member is None:
            return found, index, False
        found, index = member
    return found, index, True


def _walk(root: yaml.Node, rel: str, place: _Placer,
          libyaml: bool = False) -> tuple[dict[Loc, Position], list[Problem]] | None:
    """The position of every key and value under `root`, and a problem for each key given twice in a mapping;
    None for a tree no review file can be: a node met twice (libyaml's composer gives an alias the anchored
    node itself, so this finds aliases without expanding them) or a key that is not text (no constructor
    accepts a list or mapping as a key: constructing the document says so, with its position). In a tree
    `libyaml` composed, also None where libyaml reads otherwise than PyYAML: an empty item, key or document
    ("- ", "[? ]", "---"), which it places elsewhere (an empty mapping value is placed at its key), and plain
    text holding a '?' inside brackets ("[a?b]"), which PyYAML ends at the '?'."""
    positions: dict[Loc, Position] = {}
    problems: list[Problem] = []
    seen: set[int] = set()
    pending: list[tuple[Loc, yaml.Node]] = [((), root)]
    while pending:  # iteratively: nesting as deep as the composer allows must not exhaust the stack here
        loc, node = pending.pop()
        if id(node) in seen or libyaml and loc not in positions and _empty(node):
            return None
        seen.add(id(node))
        positions.setdefault(loc, place(node.start_mark))
        if libyaml and getattr(node, "flow_style", False) and _question_in_plain_text(node):
            return None
        if isinstance(node, yaml.MappingNode):
            keys: dict[str, yaml.Mark] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or id(key_node) in seen or libyaml and _empty(key_node):
                    return None
                seen.add(id(key_node))
                key, mark = key_node.value, key_node.start_mark
                if key_node.tag == _MERGE:  # `<<: {...}` gives a mapping's keys unseen, past the rule above
                    problems.append(Problem(rel, *place(mark), "merge-key", "the merge key '<<' is not allowed: "
                                            "write each key out"))
                elif key in keys:
                    (line, column), (first_line, first_column) = place(mark), place(keys[key])
                    first = f"first at column {first_column}" if first_line == line else f"first on line {first_line}"
                    problems.append(Problem(rel, line, column, "duplicate-key",
                                            f"key '{key}' appears twice in the same mapping ({first}): keep one"))
                keys.setdefault(key, mark)
                positions[(*loc, key)] = place(mark)
                pending.append(((*loc, key), value_node))
        elif isinstance(node, yaml.SequenceNode):
            pending += (((*loc, index), item) for index, item in enumerate(node.value))
    problems.sort(key=lambda problem: (problem.line, problem.column))  # in the order of the file
    return positions, problems


def _empty(node: yaml.Node) -> bool:
    return node.value == "" and not node.style  # plain: PyYAML's style None, libyaml's ""


def _question_in_plain_text(collection: yaml.CollectionNode) -> bool:
    children = (child for pair in collection.value for child in pair) \
        if isinstance(collection, yaml.MappingNode) else collection.value
    return any(isinstance(child, yaml.ScalarNode) and not child.style and "?" in child.value for child in children)


def _code_point(character: str | int) -> int:
    return character if isinstance(character, int) else ord(character)


# What a tab PyYAML refuses is told: YAML reads a tab after a value, at the end of its line, and inside quotes or a
# '|' block, but not in indentation, before a value or inside unquoted text.
TAB_REFUSED = ("a tab here, where YAML reads only spaces (in indentation, after a key's ':', a '-' or a '|', inside "
               "text not in quotes): replace it with spaces, or put the text in quotes")


def parse_yaml(text: str, rel: str, line_offset: int = 0) -> tuple[Parsed | None, list[Problem]]:
    place = _Placer.of(text, line_offset)
    if (fast := _fast_parse(text, place)) is not None:
        return fast, []
    loader = None
    try:
        loader = _StrictYamlLoader(text)
        node = _only_document(loader)
        if node is None:
            return Parsed(None), []
        # None only for a key that is not text, which construct_document refuses with its position.
        positions, problems = _walk(node, rel, place) or ({}, [])
        data = loader.construct_document(node)
    except yaml.reader.ReaderError as exc:  # a control character; PyYAML reports it without a mark
        line = text[: exc.position].count("\n") + 1 + line_offset
        return None, [Problem(rel, line, None, "yaml-syntax",
                              f"YAML syntax error: character U+{_code_point(exc.character):04X} is not allowed in YAML")]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = place(mark) if mark else (None, None)
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        if mark and text[mark.index:mark.index + 1] == "\t":  # PyYAML's words name the character, not the rule
            what = TAB_REFUSED
        return None, [Problem(rel, line, column, "yaml-syntax", f"YAML syntax error: {what}")]
    except _ValueRefused as exc:
        return None, [Problem(rel, *place(exc.mark), exc.code, exc.message)]
    except yaml.YAMLError as exc:
        return None, [Problem(rel, None, None, "yaml-syntax", f"YAML syntax error: {exc}")]
    except RecursionError:  # the reader stopped where the nesting got too deep: name that line
        line, column = place(loader.get_mark()) if loader is not None else (None, None)
        return None, [Problem(rel, line, column, "too-deep", "data is nested too deeply to read")]
    finally:
        if loader is not None:
            loader.dispose()
    return Parsed(data, positions), problems


# --------------------------------------------------------------------------- JSON


def parse_json(text: str, rel: str) -> tuple[Parsed | None, list[Problem]]:
    data, problems = _json(text, rel, 0)
    if problems:
        return None, problems
    return Parsed(data, source=text), []


def parse_json_line(line: str, rel: str, lineno: int) -> tuple[Any, list[Problem]]:
    value, problems = _json(line, rel, lineno - 1)
    if problems and _after_a_carriage_return(line, problems[0]):
        return None, [lone_carriage_return(rel, lineno)]
    return value, problems


def _after_a_carriage_return(line: str, problem: Problem) -> bool:
    """Whether `problem` of a JSON line is a second value after a carriage return: lines that end with a lone one
    (a file saved as classic Mac OS saved text) are one line to Git, editors and sitegen. A lone one elsewhere is
    JSON's whitespace, and read."""
    if problem.message != "JSON syntax error: Extra data" or problem.column is None:
        return False
    before = line[:problem.column - 1]
    return "\r" in before[len(before.rstrip()):]


class _JsonRefused(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):  # a key given twice: the dict kept one of them
        keys = [key for key, _ in pairs]
        raise _JsonRefused(f"key {next(k for k in keys if keys.count(k) > 1)!r} appears twice in the same object")
    return value


def _no_constant(name: str) -> Any:
    raise _JsonRefused(f"{name} is not a JSON number")


def _json_number(literal: str) -> int | float:
    if any(mark in literal for mark in ".eE"):  # how json itself tells a float from an integer
        return _json_float(literal)
    return _json_integer(literal)


def _json_integer(literal: str) -> int:
    return _integer(literal, int)


def _json_float(literal: str) -> float:
    return _finite(float(literal), literal)


def load_json(text: str | bytes, *, provider: bool = False) -> Any:
    """JSON as sitegen reads it from any file or provider: no key twice in an object, no NaN or
    Infinity, and no number beyond the limits above. A lone UTF-16 surrogate (an escape such as
    \\udfff, which no UTF-8 file can hold) is refused in a review file; in `provider` data, where one
    bad name must not block a run, it becomes U+FFFD and a control character a space (the record
    format refuses both). ValueError (or RecursionError) says why not."""
    if isinstance(text, str) and text.startswith("\ufeff"):  # a file's own is read away: this is one more
        raise json.JSONDecodeError("a byte-order mark (U+FEFF) starts it, as an editor adding a second one, or a file "
                                   "joined to another that had one, leaves it: remove it", text, 0)
    if isinstance(text, str):
        value = _DECODER.decode(text)
    else:  # json.loads's own reading of bytes (a byte-order mark tells their encoding)
        value = json.loads(text, **_HOOKS)
    return _clean_strings(value, provider) if _suspect(text) else value


_HOOKS: dict[str, Any] = {"object_pairs_hook": _unique_keys, "parse_constant": _no_constant,
                          "parse_int": _json_integer, "parse_float": _json_float}
# What json.loads makes of str afresh on every call it is given hooks: one made once (it holds no state
# between calls) saves a fifth of reading a record.
_DECODER = json.JSONDecoder(**_HOOKS)


def _suspect(text: str | bytes) -> bool:
    """Whether _SUSPECT finds anything in `text`, searching no more than it must: its escapes start
    with a backslash and a 'u', and ASCII text holds no character it names but DEL."""
    if isinstance(text, bytes):
        return _SUSPECT_BYTES.search(text) is not None
    if "\\u" in text:
        return _SUSPECT.search(text) is not None
    return "\x7f" in text if text.isascii() else _RAW_SUSPECT.search(text) is not None


# What can put a surrogate, a control character or a noncharacter into parsed JSON: a \\u escape for one
# (a supplementary plane's noncharacter is escaped as a surrogate pair), or a raw DEL, C1 character or
# noncharacter (json refuses raw C0 ones); a valid surrogate pair becomes one character.
_SUSPECT = re.compile(f"\\\\u(?:[dD][89a-fA-F]|00[01]|007[fF]|00[89]|[fF][dD][dDeE]|[fF]{{3}}[eEfF])|[\x7f-\x9f\ufffe\uffff{NONCHARACTER}]")
_RAW_SUSPECT = re.compile(f"[\x7f-\x9f\ufffe\uffff{NONCHARACTER}]")  # _SUSPECT's characters, for text without a \\u escape
_SUSPECT_BYTES = re.compile(rb"\\u(?:[dD][89a-fA-F]|00[01]|007[fF]|00[89]|[fF][dD][dDeE]|[fF]{3}[eEfF])|\x7f"
                            rb"|\xc2[\x80-\x9f]|\xef\xb7[\x90-\xaf]|\xef\xbf[\xbe\xbf]|[\xf0-\xf4][\x8f\x9f\xaf\xbf]\xbf[\xbe\xbf]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean_strings(value: Any, provider: bool) -> Any:
    def clean(text: str) -> str:
        if _SURROGATE.search(text):
            if not provider:
                raise _JsonRefused("text holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is no character")
            text = _SURROGATE.sub("\ufffd", text)
        return CONTROL_CHARACTER.sub(" ", text) if provider else text

    if isinstance(value, str):
        return clean(value)
    pending = [value]  # iteratively: data nested as deep as json allows must not exhaust the stack here
    while pending:
        container = pending.pop()
        if isinstance(container, dict):
            items = list(container.items())
            container.clear()
            for key, item in items:
                container[clean(key)] = clean(item) if isinstance(item, str) else item
                if isinstance(item, dict | list):
                    pending.append(item)
        elif isinstance(container, list):
            for index, item in enumerate(container):
                if isinstance(item, str):
                    container[index] = clean(item)
                elif isinstance(item, dict | list):
                    pending.append(item)
    return value


def _json(text: str, rel: str, line_offset: int) -> tuple[Any, list[Problem]]:
    try:
        return load_json(text), []
    except json.JSONDecodeError as exc:
        # One line of a JSON-lines file (lines counted as JSON counts them) is one line of a whole conflict.
        if _CONFLICT_LINE.fullmatch(text.split("\n")[exc.lineno - 1]):
            return None, [Problem(rel, exc.lineno + line_offset, 1, "merge-conflict", CONFLICT_MESSAGE)]
        if conflict := merge_conflict(text, rel, line_offset + 1):
            return None, [conflict]
        if habit := _written_otherwise(text, exc.pos):
            (line, column), message = habit
            return None, [Problem(rel, line + line_offset, column, "json-syntax", f"JSON syntax error: {message}")]
        return None, [Problem(rel, exc.lineno + line_offset, exc.colno, "json-syntax", f"JSON syntax error: {exc.msg}")]
    except _NumberRefused as exc:
        line, column = _refused_position(text, numbers=True) or (1, None)
        return None, [Problem(rel, line + line_offset, column, exc.code, str(exc))]
    except _JsonRefused as exc:
        found = _refused(text)
        line, column = _line_and_column(text, found[0]) if found else (1, None)
        said = "" if found is None or found[1] is None else f" ({_first_at(text, found[1], line, line_offset)}): keep one"
        return None, [Problem(rel, line + line_offset, column, "json-syntax", f"JSON error: {exc}{said}")]
    except RecursionError:
        line, column = _refused_position(text) or (1, None)
        return None, [Problem(rel, line + line_offset, column, "too-deep", "data is nested too deeply to read")]


def _first_at(text: str, index: int, line: int, line_offset: int) -> str:
    """Where the first of a key given twice on `line` is: its line, or on that line (a line of a JSON-lines file
    holds a whole object), its column."""
    first_line, first_column = _line_and_column(text, index)
    return f"first at column {first_column}" if first_line == line else f"first on line {first_line + line_offset}"


def _written_otherwise(text: str, index: int) -> tuple[Position, str] | None:
    """Where and what JSON read by hand would hold, where json stopped at `index`, as JavaScript or a YAML habit
    writes it: a comma after the last item (json stops at the bracket, a line after the comma a person left), a
    comment, a string in single quotes. None for any other error."""
    ahead = text[index:index + 2]
    if ahead[:1] in ("}", "]"):
        comma = len(text[:index].rstrip(" \t\r\n")) - 1
        if comma >= 0 and text[comma] == ",":
            return _line_and_column(text, comma), "a comma after the last item, which JSON does not allow: remove it"
    if ahead in ("//", "/*") or ahead[:1] == "#":
        return _line_and_column(text, index), "JSON has no comments: remove this one"
    if ahead[:1] == "'":
        return _line_and_column(text, index), "JSON writes text in double quotes (\"), not single ones (')"
    return None


# What `_refused_position` walks JSON that parsed up to a refusal by: strings whole, brackets, colons, words.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]|[^\s{}\[\]:,"]+')
_JSON_NUMBER = re.compile(r"-?[0-9][0-9.eE+-]*")
# How deep `_refused_position` takes data to be too deep: json's reader stops near Python's recursion limit.
_TOO_DEEP = 900


def _refused_number(literal: str) -> bool:
    try:
        _json_number(literal)
    except _NumberRefused:
        return True
    return False


def _string_token(token: str) -> str | None:
    """A JSON string's text; None for one that is not valid (the walk may go past where json stopped)."""
    try:
        return json.loads(token, strict=False)
    except ValueError:
        return None


def _refused_position(text: str, numbers: bool = False) -> Position | None:
    """Where the first thing `load_json` refuses is (json.loads says only what was wrong): with `numbers`,
    a number beyond its limits; else NaN or Infinity, a key given twice in one object, a lone surrogate
    escape, or nesting past _TOO_DEEP. None when none is found."""
    found = _refused(text, numbers)
    return None if found is None else _line_and_column(text, found[0])


def _refused(text: str, numbers: bool = False) -> tuple[int, int | None] | None:
    """Where the first thing `load_json` refuses starts (see `_refused_position`), and for a key given twice, where
    the first of it starts."""
    keys: list[dict[str, int] | None] = []  # for each open bracket: its object's keys so far and where, None for a list
    previous = None
    for token in _JSON_TOKEN.finditer(text):
        value = token.group()
        refused = None
        if numbers:
            refused = token if _JSON_NUMBER.fullmatch(value) and _refused_number(value) else None
        elif value in ("{", "["):
            keys.append({} if value == "{" else None)
            refused = token if len(keys) > _TOO_DEEP else None
        elif value in ("}", "]"):
            if keys:
                keys.pop()
        elif value == ":" and previous is not None and previous.group().startswith('"') and keys and keys[-1] is not None:
            key = _string_token(previous.group())
            if key in keys[-1]:
                return previous.start(), keys[-1][key]
            keys[-1][key] = previous.start()
        elif value in ("NaN", "Infinity", "-Infinity") or (value.startswith('"') and _SURROGATE.search(
                _string_token(value) or "")):
            refused = token
        if refused is not None:
            return refused.start(), None
        previous = token
    return None


# --------------------------------------------------------------------------- CSV


def _field_columns(raw: str) -> list[int]:
    """1-based character column where each CSV field of one physical line starts."""
    if '"' not in raw:  # no quoted field: every comma separates fields
        columns = [1]
        for field_text in raw.split(",")[:-1]:
            columns.append(columns[-1] + len(field_text) + 1)
        return columns
    columns, quoted = [1], False
    for index, char in enumerate(raw):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            columns.append(index + 2)
    return columns


@dataclass(slots=True)  # a file's rows are many (100,000): each without a dictionary of its own
class CsvRow:
    line: int
    values: dict[str, str]  # each cell without the blanks around it
    columns: Mapping[str, int]


# Where a cell could start or end with a blank (str.strip's, as \s): one beside a comma, a quote or the end of a
# line or of the text, a line break inside quotes at either end of a cell, or a carriage return (a line break
# to csv). A row's own line break is no blank of a cell.
_PADDED = re.compile(r'\r|"\n|\n"|(?:^|[,"])[^\S\n]|[^\S\n](?:[,"]|$)', re.MULTILINE)
_BLANK = re.compile(r"[^\S\n]")  # found far faster: where there is none, only a line break can pad a cell


def _padded(text: str) -> bool:
    return _PADDED.search(text) is not None if _BLANK.search(text) else '"\n' in text or '\n"' in text


class FieldColumns(Mapping[str, int]):
    """Field name -> the 1-based column where that field of a CSV row starts (1 where the row's line
    does not say), worked out from the line when first asked: only a problem needs one."""

    __slots__ = ("_names", "_lines", "_line", "_columns")

    def __init__(self, names: list[str], lines: _Lines, line: int):
        self._names, self._lines, self._line = names, lines, line
        self._columns: dict[str, int] | None = None

    def _found(self) -> dict[str, int]:
        if self._columns is None:
            raw = self._lines.line(self._line)
            columns = _field_columns(raw) if raw is not None else []
            self._columns = {n: (columns[i] if i < len(columns) else 1) for i, n in enumerate(self._names)}
        return self._columns

    def __getitem__(self, name: str) -> int:
        return self._found()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._found())

    def __len__(self) -> int:
        return len(self._found())

    def __repr__(self) -> str:
        return repr(self._found())


def columns_kept(columns: Sequence[FieldColumns]) -> tuple[list[str], str, list[int]]:
    """The columns of rows of one `parse_csv` as plain values, to be kept (`kept.kept_parse`): the header's
    names and the text the rows share, and each row's line. `columns_of_kept` makes them again."""
    if not columns:
        return [], "", []
    names, lines = columns[0]._names, columns[0]._lines
    if any(each._names is not names or each._lines is not lines for each in columns):
        raise ValueError("the columns of rows of more than one CSV text")  # never kept, rather than kept wrong
    return names, lines._text, [each._line for each in columns]


def columns_of_kept(kept: tuple[list[str], str, list[int]]) -> list[FieldColumns]:
    """The columns `columns_kept` gave as plain values, each worked out from its line when first asked, as read."""
    names, text, line_numbers = kept
    lines = _Lines(text)
    return [FieldColumns(names, lines, line) for line in line_numbers]


# Excel's first line naming the separator of a CSV ("sep=;"), which it reads as such and does not show as a row. A
# program that shows it as a row (LibreOffice, Google Sheets) saves it again as one: its cell quoted ("sep=,"), and
# padded with the row's empty cells (sep=,,,).
_SEPARATOR_LINE = re.compile(r'("?)sep=(.)\1[ \t]*(?:,[ \t]*)*\r?')


def declared_separator(first_line: str) -> str | None:
    """The separator a CSV's first line declares as Excel's "sep=," does, or None when it is no such line."""
    found = _SEPARATOR_LINE.fullmatch(first_line)
    return found.group(2) if found else None


def parse_csv(text: str, rel: str, header: list[str], required: set[str],
              model: type | None = None) -> tuple[list[CsvRow], list[Problem]]:
    """Rows of a CSV whose first line must be exactly `header` (in any order of optional columns). A first line
    "sep=," before it (Excel's declaration that commas separate the columns, which they do) is skipped. `model`, the
    rows' own, tells a line of a quoted cell from a row of its own (see `_row_within`)."""
    problems: list[Problem] = []
    reads_as_row = _row_of(model, required) if model is not None else _holds_a_record_id
    lines = _Lines(text)
    separator = declared_separator(text[:text.find("\n")] if "\n" in text else text)
    if separator is not None and separator != ",":
        shown = _SEPARATOR_NAMES.get(separator, repr(separator))
        return [], [Problem(rel, 1, 1, "csv-header",  # a header sitegen cannot read, as a bad header is
                            f"this line ('sep={separator}') is Excel's note that {shown} separate the columns, where "
                            "sitegen reads commas: save the file as \"CSV UTF-8 (comma delimited)\" (which drops "
                            "this line), or delete this line and put commas between the columns")]
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[CsvRow] = []
    header_line = 1 if separator is None else 2
    try:
        if separator is not None:
            next(reader)  # the declaration: the header is on the line after it
        first = next(reader, None)
    except csv.Error as exc:  # a header quoted and separated otherwise ("record_id";"decision") is not CSV with commas
        return [], [Problem(rel, header_line, None, "csv-syntax", f"CSV syntax error: {exc}"
                            + _separated_otherwise(lines.line(header_line), header))]
    if first is None:
        return [], [Problem(rel, header_line, 1, "csv-header",
                            f"file is empty; the first line must be the header: {','.join(header)}")]
    written = [name.strip() for name in first]
    # Columns with no name at the end of the header (",,") are a spreadsheet's padding: read as absent, so long
    # as no row puts a value in them.
    # Cut after the last named column (all of them kept when none is named): found once, as asking again of every
    # column whether any is named made a header of 20,000 commas each side of one name take 13 s, 400 KB minutes.
    named = next((end for end in range(len(written), 0, -1) if written[end - 1]), len(written))
    names = written[:named]
    unknown = [n for n in names if n not in header]
    missing = [n for n in required if n not in names]
    if unknown or missing or len(set(names)) != len(names):
        parts = []
        if missing:
            parts.append("missing column(s) " + ", ".join(sorted(missing)))
        if unknown:
            parts.append("unknown column(s) " + ", ".join(map(_shown_column, dict.fromkeys(unknown))))  # each once
        if len(set(names)) != len(names):
            parts.append("a column is named twice")
        return [], [Problem(rel, header_line, 1, "csv-header", f"bad header ({'; '.join(parts)}); expected: "
                            f"{','.join(header)}" + _separated_otherwise(lines.line(header_line), header)
                            + _named_otherwise(unknown, header))]
    width = len(names)
    padded = _padded(text)  # else stripping cells would change none: most files skip it
    start = reader.line_num + 1  # the line the next row starts on
    try:
        for values in reader:
            if len(problems) >= MAX_PROBLEMS_PER_FILE:
                problems.append(stopped(rel, start))
                break
            count = len(values)
            # A blank line, or a row of empty cells (",,,": a spreadsheet saves its empty rows so). The first cell is
            # looked at alone first: a row of 200,000 holds a record id there.
            if not (values and values[0].strip()) and not any(value.strip() for value in values):
                pass
            elif count > width and any(value.strip() for value in values[width:]):
                problems.append(Problem(rel, start, width + 1, "csv-columns",
                                        f"a value in a column the header does not name (after {names[-1]})"))
            else:
                # Excel leaves out the separators of empty cells at the end of a row, in some rows and not others
                # (as it buffers them), and pads others (',,'): a cell missing at the end of a row is empty, and an
                # empty one past the header's columns absent.
                if count != width:
                    values = values[:width] if count > width else [*values, *[""] * (width - count)]
                cells = dict(zip(names, map(str.strip, values) if padded else values, strict=True))
                if _repeats_header(values, names):
                    problems.append(Problem(rel, start, 1, "repeated-header",
                                            f"this line repeats the header (line {header_line}), as where two files "
                                            "were put together: remove it"))
                elif reader.line_num > start and (inner := _row_within(lines, start, reader.line_num, names, reads_as_row)):
                    problems.append(_quote_left_open(rel, start, reader.line_num, inner))
                else:
                    rows.append(CsvRow(start, cells, FieldColumns(names, lines, start)))
            start = reader.line_num + 1
    except csv.Error as exc:
        if reader.line_num > start and "unexpected end of data" in str(exc):  # a quote never closed: where it opened
            problems.append(Problem(rel, start, None, "csv-syntax", "CSV syntax error: a quoted field of this row is "
                                    "never closed (a '\"' missing), so the rest of the file was read into it"))
        elif reader.line_num > start and (inner := _row_within(lines, start, reader.line_num, names, reads_as_row)):
            problems.append(_quote_left_open(rel, start, reader.line_num, inner))  # closed by a later row's '"'
        elif "expected after '\"'" in str(exc):  # csv's words for `"include" ,`: a blank after a closing quote
            problems.append(Problem(rel, reader.line_num, None, "csv-syntax", "CSV syntax error: a quoted cell's "
                                    "closing '\"' is followed by something other than a comma or the line's end (a "
                                    "blank?): remove what follows it, or quote the whole cell, writing a '\"' inside "
                                    "it as '\"\"'"))
        else:
            problems.append(Problem(rel, reader.line_num, None, "csv-syntax", f"CSV syntax error: {exc}"))
    return rows, problems


def _repeats_header(values: list[str], names: list[str]) -> bool:
    """Whether a row's cells are the header's names (a second file's header, its byte-order mark too, after the
    first file's rows), in a file of records, where no row can be (no record id reads 'record_id'). Its first cell
    is looked at alone first: a row holds a record id there (and first whether it holds the name at all, in C: a
    decision file's every row is asked, 200,000 at review scale)."""
    if names[0] not in values[0]:
        return False
    def name(value: str) -> str:
        return value.strip().lstrip("\ufeff").strip()
    return name(values[0]) == names[0] and "record_id" in names \
        and [name(value) for value in values[:len(names)]] == names \
        and not any(value.strip() for value in values[len(names):])


def _row_within(lines: _Lines, start: int, end: int, names: list[str],
                reads_as_row: Callable[[dict[str, str]], bool]) -> int | None:
    """The first of lines `start`+1 to `end` (the lines of one row, a quoted cell running over them) that reads as a
    row of its own (`reads_as_row`, of its cells), or None. A quote left open on line `start` and closed by a '"' in
    a later row takes the rows between into one cell: their decisions would silently count for nothing. A line of a
    note that only starts with a record id and a comma ("10.1000/xyz, the preprint") is no row."""
    if "record_id" not in names:
        return None
    for number in range(start + 1, end + 1):
        cells = [cell.strip().strip('"').strip() for cell in (lines.line(number) or "").rstrip("\r\n").split(",")]
        if len(cells) > 1 and reads_as_row(dict(zip(names, cells + [""] * (len(names) - len(cells)), strict=False))):
            return number
    return None


def _holds_a_record_id(cells: dict[str, str]) -> bool:
    return record_id_problem(cells["record_id"]) is None


def _row_of(model: type, required: set[str]) -> Callable[[dict[str, str]], bool]:
    """Whether cells read as a row of `model`: its required cells valid as `model` reads them, or written as a
    reviewer may mistype them (a decision in another case, "Include"), which a row of its own still is."""
    def reads(cells: dict[str, str]) -> bool:
        try:
            _validator(model)({name: cells[name] for name in required})
        except ValidationError as exc:
            return all(_literal_meant(error) for error in exc.errors(include_url=False))
        return True
    return reads


def _quote_left_open(rel: str, start: int, end: int, inner: int) -> Problem:
    return Problem(rel, start, None, "csv-syntax",
                   f"CSV syntax error: a quoted field opens on this row and is not closed on it (a '\"' missing), so "
                   f"it runs on to line {end}, taking in line {inner}, which reads as a row of its own: close the quote "
                   "on this line (a '\"' inside a quoted field is written '\"\"')")


def _shown_column(name: str) -> str:
    """A column name as a problem shows it: one empty (a trailing comma) or holding a character nobody sees (a second
    byte-order mark, a zero-width space) would look like nothing, or like the name expected."""
    if not name:
        return "'' (a column with no name)"
    return name if name.isprintable() else f"{name!r} (with a character that does not show)"


# The separators other than commas a spreadsheet saves a "CSV" with, as a message names them.
_SEPARATOR_NAMES = {";": "semicolons", "\t": "tabs", "|": "'|'"}


def _named_otherwise(unknown: list[str], header: list[str]) -> str:
    """What to say of columns named as a person would write the expected names ("Record_ID", "Record ID",
    "record-id"): which name to write for each."""
    meant = {name: _column_name(name, header) for name in unknown}
    renames = [f"{name!r} as {meant[name]!r}" for name in unknown if meant[name] not in (None, name)]
    return f"; column names are written in lower case, with '_' between words: write {', '.join(renames)}" \
        if renames else ""


def _column_name(name: str, header: list[str]) -> str | None:
    """The expected column `name` is written as, its letters and digits alike ("RecordID", "Duplicate of",
    "record.id"), or None."""
    def letters(text: str) -> str:
        return "".join(character for character in text.casefold() if character.isalnum())
    return next((expected for expected in header if letters(expected) == letters(name)), None)


def _separated_otherwise(line: str | None, header: list[str]) -> str:
    """What to say of a header `line` that is the expected one with another separator (a spreadsheet saves its
    "CSV" with ';' where the decimal mark is a comma, as in German or French settings), its names quoted or not,
    with its padding (";;") or not. A line whose columns commas separate reads as one name with another separator."""
    for separator, name in _SEPARATOR_NAMES.items():
        if line is None or separator not in line:
            continue
        try:
            names = [cell.strip() for cell in next(csv.reader([line.rstrip("\r\n")], delimiter=separator, strict=True))]
        except csv.Error:
            continue
        while names and not names[-1]:  # the padding of empty columns
            names.pop()
        if len(names) > 1 and set(names) <= set(header):
            return (f"; its columns are separated by {name}, not commas: save it as \"CSV UTF-8 (comma "
                    "delimited)\", or replace the separators")
    return ""


class _Lines:
    """The lines of a CSV file as csv counts them (with their ends: "\n", "\r\n", or the lone "\r" of a CSV saved
    on a Mac), split when first asked for one: only a problem needs a row's line, to place it."""

    __slots__ = ("_text", "_lines")

    def __init__(self, text: str):
        self._text, self._lines = text, None

    def line(self, number: int) -> str | None:
        if self._lines is None:
            self._lines = io.StringIO(self._text, newline="").readlines()  # as parse_csv's reader reads them
        return self._lines[number - 1] if number - 1 < len(self._lines) else None


# --------------------------------------------------------------------------- pydantic


# What each pattern a field must match asks for, in words: pydantic's message shows the regular expression.
PATTERN_WORDS: dict[str, str] = {}


def worded_pattern(regex: str, words: str) -> StringConstraints:
    """A constraint that text match `regex`, which a problem names as `words` ("a lower-case name...")."""
    PATTERN_WORDS[regex] = words
    return StringConstraints(pattern=regex)


def _describe(error: dict[str, Any]) -> str:
    loc = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] in ("extra_forbidden", "unexpected_keyword_argument"):  # a model's, a dataclass's
        message = "unknown field (check its spelling)"
    elif error["type"] in ("missing", "missing_argument"):
        message = "required field is missing"
    elif error["type"] == "string_type" and isinstance(error.get("input"), bool | int | float):
        # YAML reads `location: 12`, `population: 12:30` (750) and `yes` as numbers or booleans: text is quoted.
        message += f" (it was read as {error['input']!r}: put the text in quotes)"
    elif error["type"] == "bool_type" and isinstance(error.get("input"), str):
        # The other side of the same rule: YAML 1.1's yes, no, on and off stay text, so a switch is true or false.
        message += f" (it was read as the text {error['input']!r}: write true or false)"
    elif error["type"] == "string_too_long":  # pydantic says "items" of a string too
        message = message.replace(" items", " characters")
    elif error["type"] == "string_pattern_mismatch" and (words := PATTERN_WORDS.get(error["ctx"]["pattern"])):
        message = f"must be {words}, not {error['input']!r}"
    elif meant := _literal_meant(error):
        message += f", not {error['input']!r}: write {meant!r}"
    if error["type"] != "value_error" and isinstance(error.get("input"), str):  # (sitegen's own say what to write)
        message += forced_text_hint(error["input"])
    return f"{loc}: {message}" if loc else message


def _literal_meant(error: dict[str, Any]) -> str | None:
    """For a pydantic error refusing text as none of its expected words (include, exclude, same): the one it is
    written otherwise as, in another case or as a spreadsheet's list of choices says it (Include, EXCLUDED, Same).
    Only said, never read as it: a decision is written as it is meant. None for anything else (yes, 1, x: which
    decision is not said), and for any other error."""
    if error["type"] != "literal_error" or not isinstance(error.get("input"), str):
        return None
    written = error["input"].strip().casefold()
    expected = re.findall(r"'([^']*)'", error["ctx"]["expected"])
    return next((word for word in expected if written in (word, word + "d", word + "ed")), None)


def forced_text_hint(value: str) -> str:
    """What to say of a value refused that is written as a spreadsheet's formula for text (="exclude"): the text
    to write; "" for any other value."""
    text = forced_text(value)
    return "" if text is None else f" (it is written as a spreadsheet's formula for text, {value}: write it as {text!r})"


def quoted_after_blank_hint(value: str) -> str:
    """What to say of a CSV cell refused that starts with a '"' (`10.1/x, "exclude"`): CSV reads a quote as one only
    at the very start of a cell, so a blank before it made the quotes part of the text. "" for any other value."""
    if not value.startswith('"'):
        return ""
    meant = value.strip('"').strip()
    return (f" (a blank before its opening '\"' makes the quotes part of the text: CSV reads a quote as one only at "
            f"the very start of a cell; write it with no blank before the quote, as {meant!r} or '\"{meant}\"')")


def validate(model: type, parsed: Parsed, rel: str, *, base_loc: Loc = (),
             line: int | None = None, context: dict[str, Any] | None = None) -> tuple[Any, list[Problem]]:
    """Validate parsed data against a pydantic model (or dataclass), with pydantic's validation `context`; each error
    gets its own position."""
    data = parsed.data
    try:
        return _validator(model)(data, context=context), []
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            position = parsed.position((*base_loc, *error["loc"]))
            if position is None and line is not None:
                position = (line, None)
            problems.append(Problem(rel, position[0] if position else None, position[1] if position else None,
                                    "schema", _describe(error) + _first_said(error, parsed, base_loc, position)
                                    + _quoted_in_csv(error, rel)))
        return None, problems


def _quoted_in_csv(error: dict[str, Any], rel: str) -> str:
    return quoted_after_blank_hint(error["input"]) \
        if rel.lower().endswith(".csv") and isinstance(error.get("input"), str) else ""


def _first_said(error: dict[str, Any], parsed: Parsed, base_loc: Loc, position: Position | None) -> str:
    """Where the first of an item given twice is, for an error placed at the repeat that names the first (its
    "first" in `ctx`: the index or key of the first, beside the repeat); "" for any other error."""
    if "first" not in error.get("ctx", {}) or not error["loc"]:
        return ""
    first = parsed.position((*base_loc, *error["loc"][:-1], error["ctx"]["first"]))
    return f" (first on line {first[0]})" if first is not None and first != position else ""


@cache
def _validator(model: type) -> Callable[[Any], Any]:
    """What validates data as `model`: a model's own method, or an adapter for a dataclass of pydantic's."""
    return model.model_validate if issubclass(model, BaseModel) else TypeAdapter(model).validate_python
