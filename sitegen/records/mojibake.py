"""Text encoded twice: UTF-8 read back as Windows-1252 and saved again as UTF-8.

Excel on Windows opens a CSV saved without a byte-order mark as Windows-1252: each character UTF-8 writes in two to
four bytes shows as as many characters ("’" as "â€™", "é" as "Ã©"), and saving it as "CSV UTF-8" keeps them so.
Such text re-encodes as Windows-1252 (or Latin-1, which reads the bytes Windows-1252 leaves undefined as C1
controls) into valid UTF-8, where text written as meant almost never does: a capital letter with an accent
followed by a closing quote ("JOSÉ’S") can, and decodes to a character nobody meant (U+0252). So a run is taken
for text encoded twice only when what it decodes to is what such text holds: a Latin-1 or Latin Extended-A letter
or sign, a Greek letter, punctuation, a currency or mathematical sign; or two or more letters in a row (a word of
Cyrillic or CJK encoded twice). "Müller", "São Paulo", "naïve" and Greek and CJK written as meant never re-encode.
"""

from __future__ import annotations

import re
import unicodedata


def _windows_1252(byte: int) -> str:
    """The character Windows-1252 reads `byte` as; its five undefined bytes as Latin-1 reads them (a C1 control)."""
    try:
        return bytes([byte]).decode("cp1252")
    except UnicodeDecodeError:
        return chr(byte)


# Each character a byte from 0x80 is read as -> that byte; a C1 control too (Latin-1's reading of 0x80-0x9F).
_BYTE_OF = {chr(byte): byte for byte in range(0x80, 0xA0)} | {_windows_1252(byte): byte for byte in range(0x80, 0x100)}


def _read_as(first: int, last: int) -> str:
    """A character class of the characters bytes `first` to `last` are read as."""
    return "[" + "".join(re.escape(char) for char, byte in _BYTE_OF.items() if first <= byte <= last) + "]"


_CONTINUATION = _read_as(0x80, 0xBF)
# One character UTF-8 writes in 2, 3 or 4 bytes, read a byte a character.
_ENCODED_TWICE = re.compile(f"{_read_as(0xC2, 0xDF)}{_CONTINUATION}|{_read_as(0xE0, 0xEF)}{_CONTINUATION}{{2}}"
                            f"|{_read_as(0xF0, 0xF4)}{_CONTINUATION}{{3}}")


def _decoded(run: str) -> str | None:
    """The character the characters of `run` are the UTF-8 bytes of, or None when they are not valid UTF-8."""
    try:
        return bytes(_BYTE_OF[char] for char in run).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _likely(char: str) -> bool:
    """Whether `char` is what text encoded twice most often held: Latin-1 and Latin Extended-A (é, ß, ł, œ, the
    no-break space), Greek (α, µ), general punctuation, super- and subscripts, currency, letterlike and
    mathematical signs, arrows (’, –, …, €, ™, ≥, →)."""
    code = ord(char)
    return 0xA0 <= code <= 0x17F or 0x370 <= code <= 0x3FF or 0x2000 <= code <= 0x22FF


def _a_letter(char: str) -> bool:
    return unicodedata.category(char)[0] in "LMPS"  # not a digit, a space or a control


def _runs(value: str) -> list[tuple[int, int, str]]:
    """(start, end, what it decodes to) of each run of `value` that is text encoded twice."""
    found: list[tuple[int, int, str]] = []
    group: list[tuple[int, int, str]] = []  # characters encoded twice, one after another

    def close() -> None:
        chars = [char for _, _, char in group]
        if any(map(_likely, chars)) or len(chars) > 1 and all(map(_a_letter, chars)):
            found.append((group[0][0], group[-1][1], "".join(chars)))
        group.clear()

    for match in _ENCODED_TWICE.finditer(value):
        char = _decoded(match.group())
        if char is None:
            continue
        if group and group[-1][1] != match.start():
            close()
        group.append((match.start(), match.end(), char))
    if group:
        close()
    return found


def _repaired(value: str) -> str:
    """`value` with each run encoded twice decoded, as often as it was (a file opened and saved so twice)."""
    for _ in range(3):
        runs = _runs(value)
        if not runs:
            break
        for start, end, meant in reversed(runs):
            value = value[:start] + meant + value[end:]
    return value


def encoded_twice(value: str) -> tuple[int, str, str] | None:
    """The first word of `value` holding text encoded twice (see the module), with its 1-based place and the word
    meant, or None. Text written as meant is told at once: ASCII, or holding no character such text is made of."""
    if value.isascii():
        return None
    runs = _runs(value)
    if not runs:
        return None
    start, end, _ = runs[0]
    while start > 0 and not value[start - 1].isspace():
        start -= 1
    while end < len(value) and not value[end].isspace():
        end += 1
    word = value[start:end]
    return start + 1, word, _repaired(word)


def encoded_twice_said(found: tuple[int, str, str]) -> str:
    place, word, meant = found
    return f"holds {word!r} at character {place}, which is {meant!r} garbled"


def encoded_twice_message(found: tuple[int, str, str]) -> str:
    return (f"{encoded_twice_said(found)}: its UTF-8 was read as Windows-1252 and saved again (as Excel on Windows "
            f"opens a CSV saved without a byte-order mark); write {found[2]!r} in a text editor and save the file as "
            "UTF-8, or open it in Excel through Data > From Text/CSV with the file origin \"65001: Unicode (UTF-8)\" "
            "before saving it as \"CSV UTF-8\"")
