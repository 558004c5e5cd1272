"""Reference files read as entries: records CSV (the benchmark's columns, or any CSV with a column
mapping), RIS, EndNote XML, BibTeX, PubMed MEDLINE, Web of Science plain text and CSL-JSON.

Above `sitegen.records` (entries are `sitegen.records.entry.Entry`) and below everything that
reads a user's reference files (`sitegen dedupe`, `sitegen import`). Every reader raises the one
`ReferenceProblem`, with the line, or, given a `skipped` list, lists each bad record there and
returns the others; IDs are unique within a file.

Text is read as UTF-8, or UTF-16 when the file starts with its byte-order mark (EndNote on
Windows writes it); a UTF-8 byte-order mark is skipped, and CRLF and CR line ends are read as LF.
A file in another encoding is reported, with the line of the first byte that is not UTF-8, unless
the caller names the encoding: Latin-1 and Windows-1252 decode any bytes at all, so a guess would
put wrong letters into titles and authors without a word. A file named Latin-1 that holds bytes 0x80-0x9F (control
characters in Latin-1, Windows-1252's quotes and dashes) is read as Windows-1252, as browsers read one.
A binary file (a PDF or a picture renamed .ris) and EndNote's tagged format are refused by what they are.
"""

from __future__ import annotations

import codecs
import csv
import functools
import hashlib
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Literal

from sitegen.files import SPREADSHEETS, read_chunks, utf16_order
from sitegen.records.entry import Entry
from sitegen.references.bibtex import read_bibtex
from sitegen.references.csl import read_csl_json
from sitegen.references.endnote import is_endnote_xml, read_endnote_xml
from sitegen.references.medline import read_medline
from sitegen.references.problems import FORMATS_READ, ReferenceProblem, Skipped
from sitegen.references.ris import BETWEEN_RECORDS, read_ris
from sitegen.references.table import column_mapping, is_sitegens_header, not_a_records_csv, preset, read_csv
from sitegen.references.wos import read_wos
from sitegen.text import counted

Format = Literal["csv", "ris", "endnote-xml", "bibtex", "medline", "wos", "csl-json"]
Reader = Callable[[str | Iterable[str], list[str] | None, Skipped | None], list[Entry]]
READERS: dict[Format, Reader] = {"csv": read_csv, "ris": read_ris, "endnote-xml": read_endnote_xml,
                                 "bibtex": read_bibtex, "medline": read_medline, "wos": read_wos,
                                 "csl-json": read_csl_json}
# Formats read record by record: their readers are given a file's text in pieces as it is read, not whole.
STREAMED_FORMATS: frozenset[Format] = frozenset({"ris", "medline", "wos", "csv", "csl-json"})
# .xml is EndNote's: the reader refuses other XML by its root element, saying what it is not
SUFFIXES: dict[str, Format] = {".csv": "csv", ".ris": "ris", ".xml": "endnote-xml", ".bib": "bibtex",
                               ".bibtex": "bibtex", ".nbib": "medline", ".medline": "medline", ".ciw": "wos",
                               ".json": "csl-json"}
MEDLINE_START = re.compile(r"(?:PMID|OWN )- ")
WOS_START = re.compile(r"(?:FN|PT) ")
ENDNOTE_TAG = re.compile(r"%[0-9A-Z] ")  # "%0 Journal Article", "%A Smith, John": a BibTeX comment has a space after %
# Exports known by their first lines that sitegen does not read: Ovid's tagged format (what its "EndNote" and
# "Citavi" exports write: records numbered "<1. >", each opening "VN  - Ovid Technologies") and the Cochrane
# Library's plain text ("Record #1 of 20", then "ID: CN-01234567" and a tag and colon a line).
OVID_TAGGED = re.compile(r"(?:<\d+\.\s*>\s*\n\s*)?VN  - Ovid Technologies")
COCHRANE_TEXT = re.compile(r"Record #\d+ of \d+\s*\n\s*[A-Z]{2,3}: ")
# How XML begins: its declaration, a comment or an element (not Ovid's record number "<1. >")
XML_START = re.compile(r"<(?:\?xml|!--|!doctype|[a-z_][\w.:-]*[\s/>])", re.IGNORECASE)

__all__ = ["Entry", "Format", "ReferenceProblem", "Skipped", "column_mapping", "decode", "read_reference_file",
           "read_references", "sniff"]


def read_references(source: Path | str, format: Format | None = None, warnings: list[str] | None = None, *,
                    encoding: str | None = None, columns: dict[str, str] | None = None,
                    skipped: Skipped | None = None) -> list[Entry]:
    """The entries of a reference file (a Path, decoded with `decode`) or of its text (a str), in
    `format` or else the one its suffix names (see SUFFIXES) or else the one its content shows (see
    `sniff`). `columns` maps entry fields to the columns of a CSV (see `table.py`).

    ReferenceProblem names the line of the first problem or, given `skipped`, each bad record is
    appended there as (line, why) and the others are returned; OSError if the file cannot be read,
    LookupError for an unknown `encoding`. What the reader changed and the user should know (IDs
    replaced by positions, entries without a title) is appended to `warnings`, for the caller to show."""
    if isinstance(source, Path):
        return read_reference_file(source, format, warnings, encoding=encoding, columns=columns,
                                   skipped=skipped)[0]
    return _read_pieces(iter([source.removeprefix("\ufeff")]), format, warnings, columns, skipped)[0]


def read_reference_file(path: Path, format: Format | None = None, warnings: list[str] | None = None, *,
                        encoding: str | None = None, columns: dict[str, str] | None = None,
                        skipped: Skipped | None = None) -> tuple[list[Entry], Format, str]:
    """`read_references` of a file, with the format it was read as and the SHA-256 of its bytes. The file is read
    a megabyte at a time: the reader of a format read record by record (RIS, MEDLINE, Web of Science, CSV,
    CSL-JSON) is given its text as it is decoded, and holds what its records make, never the file."""
    digest = hashlib.sha256()

    def hashed(chunks: Iterable[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            digest.update(chunk)
            yield chunk

    suffixed = None if format or columns else SUFFIXES.get(path.suffix.lower())
    pieces = decoded(hashed(read_chunks(path)), encoding)
    entries, format = _read_pieces(pieces, format, warnings, columns, skipped, suffixed)
    for _ in pieces:  # what a reader left unread (none does): the hash is of every byte, each one decoded
        pass
    return entries, format, digest.hexdigest()


def _read_pieces(pieces: Iterator[str], format: Format | None, warnings: list[str] | None,
                 columns: dict[str, str] | None, skipped: Skipped | None,
                 suffixed: Format | None = None) -> tuple[list[Entry], Format]:
    """The entries of a text given in pieces, and the format they were read as (see `read_references`): the one
    its file's suffix names (`suffixed`), unless its content shows another tagged format the suffix is mistaken
    for (see MISNAMED)."""
    head: list[str] = []
    if format is None and not columns:
        head, shown = _sniffed(pieces)
        format = shown if (suffixed, shown) in MISNAMED else suffixed or shown
    format = format or ("csv" if columns else None)
    if format is None:
        raise ReferenceProblem(1, _unrecognised("".join(itertools.chain(head, pieces))))
    if columns and format != "csv":
        raise ReferenceProblem(1, f"a column mapping is for CSV files, and this one is read as {format}")
    reader = functools.partial(read_csv, columns=columns) if format == "csv" else READERS[format]
    text = itertools.chain(head, pieces)
    try:
        entries = reader(text if format in STREAMED_FORMATS else "".join(text), warnings, skipped)
    except RecursionError:  # a reader's or a library's own stack; the readers name the line where they can
        raise ReferenceProblem(1, "the file nests its data too deeply to read") from None
    untitled = [entry.line for entry in entries if not entry.get("title")]
    if untitled and warnings is not None:
        more = f" and {len(untitled) - 5} more" if len(untitled) > 5 else ""
        warnings.append(f"{len(untitled)} of {counted(len(entries), 'entry', 'entries')} {'has' if len(untitled) == 1 else 'have'} no title (line "
                        f"{', '.join(map(str, untitled[:5]))}{more})")
    return entries, format


# A file whose suffix names one format and whose content is another's, as users and tools name them: PubMed's MEDLINE
# file saved as .ris (both are tagged text, "TI  - " in each). Read as RIS, it was refused as "text outside a record".
MISNAMED = {("ris", "medline")}


def _sniffed(pieces: Iterator[str]) -> tuple[list[str], Format | None]:
    """The pieces of a text `sniff` reads to know its format (its first 4 KB and its first line that is neither
    blank nor an export header, each whole), and that format."""
    head: list[str] = []
    size, shown = 0, False  # whether a whole line that shows the format has been read
    for piece in pieces:
        # a piece's first and last lines may be parts of lines (its first is the whole line only in the first piece)
        shown = shown or any(_shows(line) for line in piece.splitlines()[0 if not head else 1:-1])
        head.append(piece)
        size += len(piece)
        if shown and size >= 4096:
            break
    return head, sniff("".join(head))


def _shows(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not BETWEEN_RECORDS.fullmatch(stripped)


# How an .xlsx workbook (a zip archive) and an .xls one (an OLE2 compound file) begin.
# Codecs Python lists as text encodings that no file's text is written in: a domain name's (idna, punycode), a Python
# string literal's escapes (unicode_escape: "\\u00e9" read as "é", a byte above 0x7F as Latin-1), the generic
# codec each single-byte table is made with (charmap, Latin-1 without one), and one that refuses everything.
NOT_FILE_ENCODINGS = frozenset({"idna", "punycode", "unicode-escape", "raw-unicode-escape", "charmap", "undefined"})
COMMON_ENCODINGS = "utf-8, utf-16, cp1252 (Windows), latin-1, mac-roman, cp437, shift_jis, gb18030, big5"


def text_codec(encoding: str) -> codecs.CodecInfo:
    """The codec of the text encoding named `encoding`; LookupError saying why for a name Python does not know,
    for a codec from bytes to bytes (base64, zlib) or text to text (rot13), which reads no text, or for one that no
    file's text is written in (`NOT_FILE_ENCODINGS`)."""
    try:
        codec = codecs.lookup(encoding)
    except LookupError:
        raise LookupError(f"{encoding!r} is not a text encoding Python knows (common ones: {COMMON_ENCODINGS})") \
            from None
    # bytes.decode refuses such a codec by this flag (though only once there are bytes: b"".decode("base64") is "")
    if not getattr(codec, "_is_text_encoding", True) or codec.name in NOT_FILE_ENCODINGS:
        raise LookupError(f"{encoding!r} is not an encoding of text files (it is one of Python's codecs for other "
                          f"data); common ones: {COMMON_ENCODINGS}")
    return codec


def decode(data: bytes, encoding: str | None = None) -> str:
    """The text of a file without its byte-order mark: UTF-16 when it starts with that mark, else
    `encoding` (LookupError if it is no text encoding Python knows, see `text_codec`) or UTF-8. ReferenceProblem
    names the line of the first byte that does not decode."""
    return "".join(decoded([data], encoding))


def decoded(chunks: Iterable[bytes], encoding: str | None = None) -> Iterator[str]:
    """The text of a file's bytes, given in `chunks`, piece by piece, as `decode` reads it: a file is decoded as it
    is read, never held whole as bytes beside its text."""
    chunks = iter(chunks)
    start = b""  # what the checks of the file's kind read: its first 4 KB
    while len(start) < 4096 and (chunk := next(chunks, None)) is not None:
        start += chunk
    if start.startswith(SPREADSHEETS):
        raise ReferenceProblem(1, "a spreadsheet workbook (.xlsx or .xls), not text: save it from the spreadsheet "
                                  "as \"CSV UTF-8 (comma delimited)\" and give that file")
    if start.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    elif encoding is None and (order := utf16_order(start)):
        raise ReferenceProblem(1, f"UTF-16 text without a byte-order mark (every other byte is 0); name its "
                                  f"encoding: --encoding utf-16-{order}")
    codec = text_codec(encoding or "utf-8")
    # Bytes 0x80-0x9F are control characters in Latin-1, which no text holds: a file said to be Latin-1 that has
    # them is Windows-1252 (its quotes and dashes), as browsers read every page labelled Latin-1 (the five bytes
    # Windows-1252 leaves out stay Latin-1's, as they do there). Without them, the two read every byte alike.
    latin1 = codec.name == codecs.lookup("latin-1").name
    decoder = (codecs.getincrementaldecoder("cp1252")("latin1_fallback") if latin1
               else codec.incrementaldecoder("strict"))
    lines, first, controls = 0, True, False  # line ends decoded so far; whether 0x80-0x9F bytes were read
    for chunk, final in _with_last(itertools.chain([start], chunks)):
        controls = controls or re.search(rb"[\x80-\x9f]", chunk) is not None
        try:
            text = decoder.decode(chunk, final)
        except UnicodeError as error:  # punycode and idna refuse bytes with a bare UnicodeError, which says no byte
            raise _undecodable(error, lines, start, controls or any(re.search(rb"[\x80-\x9f]", rest)
                                                                    for rest in chunks), codec, encoding) from None
        if first and text:
            text, first = text.removeprefix("\ufeff"), False
        lines += text.count("\n")
        if text:
            yield text


def _with_last(chunks: Iterator[bytes]) -> Iterator[tuple[bytes, bool]]:
    """Each chunk, and whether it is the last (an empty file is one empty chunk)."""
    held = next(chunks, b"")
    for chunk in chunks:
        yield held, False
        held = chunk
    yield held, True


def _undecodable(error: UnicodeError, lines: int, start: bytes, controls: bool, codec: codecs.CodecInfo,
                 encoding: str | None) -> ReferenceProblem:
    """The problem of bytes that do not decode: the line of the first (`lines` line ends were decoded before the
    bytes the decoder was given), or that the file is not text at all."""
    at = error.start if isinstance(error, UnicodeDecodeError) else None
    given = error.object if isinstance(error, UnicodeDecodeError) else b""
    line = lines + given[:at or 0].decode(codec.name, errors="replace").count("\n") + 1
    if _binary(start):
        return ReferenceProblem(1, "a binary file, not text: export the references as RIS, BibTeX, MEDLINE or "
                                   "CSV and give that file")
    # Bytes 0x80-0x9F are Windows-1252's typographic characters (dashes, quotes, the euro): as Latin-1
    # they are control characters. A Windows export holding one is cp1252; another is likely Latin-1.
    guess = "cp1252" if controls else "latin-1"
    convert = (f"save or convert the file as UTF-8 (for example iconv -f {guess} -t utf-8), or name "
               f"its encoding (--encoding {guess})")
    name = codec.name.upper() if codec.name.startswith("utf") else encoding
    byte = f" (byte 0x{given[at]:02X})" if at is not None and at < len(given) else ""
    return ReferenceProblem(line, f"not {name} text{byte}; "
                                  f"{convert if codec.name == 'utf-8' else 'is the encoding right?'}")


def _latin1_fallback(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    return error.object[error.start:error.end].decode("latin-1"), error.end


codecs.register_error("latin1_fallback", _latin1_fallback)


def _binary(data: bytes) -> bool:
    """Whether `data` is no text in any encoding: a tenth of its first 4 KB are control characters that no text
    writes (a picture, a PDF, an archive renamed .ris), where a file in another encoding has only letters."""
    sample = data[:4096]
    controls = sum(sample.count(byte) for byte in (*range(0, 9), 11, 12, *range(14, 32), 127))
    return controls * 10 >= len(sample)


def _unrecognised(text: str) -> str:
    """Why a file is read as no format: empty, a format sitegen knows of but does not read, or none."""
    if not text.strip():
        return "the file is empty"
    start = text.lstrip()[:2000].lower()
    if ENDNOTE_TAG.match(start.upper()):
        return _not_read("EndNote's tagged format (.enw)", "export the references as RIS (or BibTeX)")
    if XML_START.match(start):  # XML, and not EndNote's (`sniff` knows that by its start)
        return _not_read("XML other than EndNote's", "export the references as RIS (or BibTeX)")
    if OVID_TAGGED.match(text.lstrip()):
        return _not_read("Ovid's tagged format (its EndNote or Citavi export)",
                         "export the records from Ovid again choosing the RIS format")
    if COCHRANE_TEXT.match(text.lstrip()):
        return _not_read("the Cochrane Library's plain-text export",
                         "export the records from the Cochrane Library again choosing RIS")
    return not_a_records_csv(text)


def _not_read(named: str, way_out: str) -> str:
    return f"{named} is not read: {way_out} and import that (sitegen reads {FORMATS_READ})"


def sniff(text: str) -> Format | None:
    """The format the first line that is neither blank nor an export header shows: RIS when it
    starts a RIS record ("TY  - "), MEDLINE for "PMID- " or "OWN - ", Web of Science for "FN " or
    "PT ", BibTeX for "@" or a "%" comment, CSL-JSON for "[" or "{", CSV for a header row with an
    ID column, sitegen's records CSV header or a known export's (`table.PRESETS`: Web of Science's is
    tab-delimited), EndNote XML for a file that begins as one (<xml><records>, see `endnote.is_endnote_xml`);
    None (not a format sitegen reads) otherwise."""
    if is_endnote_xml(text):
        return "endnote-xml"
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or BETWEEN_RECORDS.fullmatch(stripped):
            continue
        if line.startswith("TY  -"):
            return "ris"
        if MEDLINE_START.match(line):
            return "medline"
        if WOS_START.match(line):
            return "wos"
        if ENDNOTE_TAG.match(stripped):
            return None
        if stripped.startswith(("@", "%")):
            return "bibtex"
        if stripped.startswith(("[", "{")):
            return "csl-json"
        header = [name.strip() for name in next(csv.reader([line]))]
        return "csv" if "ID" in header or is_sitegens_header(header) or preset(line) else None
    return None
