"""Read reviewer-editable files and report every problem with a line and column.

Each reader returns the parsed data plus the problems it found; none raises on
bad input. Positions are 1-based, as editors and GitHub annotations count them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

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


def read_text(path: Path, rel: str, limit: int) -> tuple[str | None, list[Problem]]:
    """Read a UTF-8 text file no larger than `limit` bytes; refuse links and binary."""
    if path.is_symlink():
        return None, [Problem(rel, None, None, "symlink", "is a symbolic link; sitegen reads only regular files")]
    if not path.is_file():
        return None, [Problem(rel, None, None, "missing", "file is missing")]
    size = path.stat().st_size
    if size > limit:
        return None, [
            Problem(rel, None, None, "too-large",
                    f"file is {size / 1e6:.1f} MB, larger than the {limit / 1e6:g} MB limit for this kind of file")
        ]
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")  # tolerate the byte-order mark spreadsheets add
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, [Problem(rel, line, None, "encoding", "file is not valid UTF-8 text")]
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        return None, [Problem(rel, line, None, "encoding", "file contains a NUL byte (binary data?)")]
    return text, []


# --------------------------------------------------------------------------- YAML


class _StrictYamlLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (no billion-laughs) and duplicate keys."""

    def compose_node(self, parent, index):  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.MarkedYAMLError(None, None, "aliases (*name) are not allowed", event.start_mark)
        return super().compose_node(parent, index)


_BOOL = "tag:yaml.org,2002:bool"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def _reviewer_friendly_resolvers() -> dict:
    # YAML 1.1 reads yes/no/on/off as booleans and 2024-01-01 as a date, but
    # reviewers mean text. Only true/false stay booleans; dates stay strings.
    table = {
        first: [(tag, rx) for tag, rx in entries if tag not in (_BOOL, _TIMESTAMP)]
        for first, entries in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    for first in "tTfF":
        table.setdefault(first, []).insert(0, (_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")))
    return table


_StrictYamlLoader.yaml_implicit_resolvers = _reviewer_friendly_resolvers()


@dataclass
class Parsed:
    """Parsed data with the position of every mapping key and value found in it.

    For JSON the positions are worked out only when a problem needs one: finding
    them is far slower than parsing, and a valid file never needs them.
    """

    data: Any
    positions: dict[Loc, Position] = field(default_factory=dict)
    source: str | None = None  # JSON text whose positions are not computed yet

    def position(self, loc: Loc) -> Position | None:
        if self.source is not None:
            located, _ = parse_yaml(self.source, "")  # JSON is (nearly) YAML: borrow its composer
            self.positions = located.positions if located else {}
            self.source = None
        # The longest prefix of `loc` we know: a missing key points at its parent.
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.positions:
                return self.positions[loc[:end]]
        return None


def _walk(node: yaml.Node, loc: Loc, positions: dict[Loc, Position], rel: str, problems: list[Problem],
          line_offset: int) -> None:
    positions.setdefault(loc, (node.start_mark.line + 1 + line_offset, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            if key in seen:
                problems.append(Problem(rel, key_node.start_mark.line + 1 + line_offset, key_node.start_mark.column + 1,
                                        "duplicate-key", f"key '{key}' appears twice in the same mapping"))
            seen.add(key)
            positions[(*loc, key)] = (key_node.start_mark.line + 1 + line_offset, key_node.start_mark.column + 1)
            _walk(value_node, (*loc, key), positions, rel, problems, line_offset)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*loc, index), positions, rel, problems, line_offset)


def _code_point(character: str | int) -> int:
    return character if isinstance(character, int) else ord(character)


def parse_yaml(text: str, rel: str, line_offset: int = 0) -> tuple[Parsed | None, list[Problem]]:
    loader = None
    try:
        loader = _StrictYamlLoader(text)
        node = loader.get_single_node()
        if node is None:
            return Parsed(None), []
        problems: list[Problem] = []
        positions: dict[Loc, Position] = {}
        _walk(node, (), positions, rel, problems, line_offset)
        data = loader.construct_document(node)
    except yaml.reader.ReaderError as exc:  # a control character; PyYAML reports it without a mark
        line = text[: exc.position].count("\n") + 1 + line_offset
        return None, [Problem(rel, line, None, "yaml-syntax",
                              f"YAML syntax error: character U+{_code_point(exc.character):04X} is not allowed in YAML")]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark else None
        column = mark.column + 1 if mark else None
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        return None, [Problem(rel, line, column, "yaml-syntax", f"YAML syntax error: {what}")]
    except yaml.YAMLError as exc:
        return None, [Problem(rel, None, None, "yaml-syntax", f"YAML syntax error: {exc}")]
    except RecursionError:
        return None, [Problem(rel, None, None, "too-deep", "data is nested too deeply to read")]
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
    return _json(line, rel, lineno - 1)


class _JsonRefused(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _JsonRefused(f"key {next(k for k in keys if keys.count(k) > 1)!r} appears twice in the same object")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise _JsonRefused(f"{name} is not a JSON number")


def _json(text: str, rel: str, line_offset: int) -> tuple[Any, list[Problem]]:
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant), []
    except json.JSONDecodeError as exc:
        return None, [Problem(rel, exc.lineno + line_offset, exc.colno, "json-syntax", f"JSON syntax error: {exc.msg}")]
    except _JsonRefused as exc:
        return None, [Problem(rel, line_offset + 1, None, "json-syntax", f"JSON error: {exc}")]
    except RecursionError:
        return None, [Problem(rel, line_offset + 1, None, "too-deep", "data is nested too deeply to read")]


# --------------------------------------------------------------------------- CSV


def _field_columns(raw: str) -> list[int]:
    """1-based character column where each CSV field of one physical line starts."""
    columns, quoted = [1], False
    for index, char in enumerate(raw):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            columns.append(index + 2)
    return columns


@dataclass
class CsvRow:
    line: int
    values: dict[str, str]
    columns: dict[str, int]


def parse_csv(text: str, rel: str, header: list[str], required: set[str]) -> tuple[list[CsvRow], list[Problem]]:
    """Rows of a CSV whose first line must be exactly `header` (in any order of optional columns)."""
    problems: list[Problem] = []
    lines = split_lines(text, keepends=True)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[CsvRow] = []
    try:
        first = next(reader, None)
    except csv.Error as exc:
        return [], [Problem(rel, 1, None, "csv-syntax", f"CSV syntax error: {exc}")]
    if first is None:
        return [], [Problem(rel, 1, 1, "csv-header", f"file is empty; the first line must be the header: {','.join(header)}")]
    names = [name.strip() for name in first]
    unknown = [n for n in names if n not in header]
    missing = [n for n in required if n not in names]
    if unknown or missing or len(set(names)) != len(names):
        parts = []
        if missing:
            parts.append("missing column(s) " + ", ".join(sorted(missing)))
        if unknown:
            parts.append("unknown column(s) " + ", ".join(unknown))
        if len(set(names)) != len(names):
            parts.append("a column is named twice")
        return [], [Problem(rel, 1, 1, "csv-header", f"bad header ({'; '.join(parts)}); expected: {','.join(header)}")]
    while True:
        start = reader.line_num + 1
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(Problem(rel, reader.line_num, None, "csv-syntax", f"CSV syntax error: {exc}"))
            break
        if not values or all(not v.strip() for v in values) and len(values) <= 1:
            continue  # blank line
        columns = _field_columns(lines[start - 1]) if start - 1 < len(lines) else []
        if len(values) != len(names):
            problems.append(Problem(rel, start, None, "csv-columns",
                                    f"row has {len(values)} field(s) but the header has {len(names)} "
                                    f"({','.join(names)})"))
            continue
        rows.append(CsvRow(start, dict(zip(names, values, strict=True)),
                           {n: (columns[i] if i < len(columns) else 1) for i, n in enumerate(names)}))
    return rows, problems


# --------------------------------------------------------------------------- pydantic


def _describe(error: dict[str, Any]) -> str:
    loc = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown field (check its spelling)"
    elif error["type"] == "missing":
        message = "required field is missing"
    return f"{loc}: {message}" if loc else message


def validate(model: type[BaseModel], parsed: Parsed, rel: str, *, base_loc: Loc = (),
             line: int | None = None) -> tuple[Any, list[Problem]]:
    """Validate parsed data against a pydantic model; each error gets its own position."""
    data = parsed.data
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            position = parsed.position((*base_loc, *error["loc"]))
            if position is None and line is not None:
                position = (line, None)
            problems.append(Problem(rel, position[0] if position else None, position[1] if position else None,
                                    "schema", _describe(error)))
        return None, problems
