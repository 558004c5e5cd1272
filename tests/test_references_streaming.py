"""Reading a reference file as it comes: a megabyte at a time, decoded piece by piece, a line-based format's
records built as each ends (bench/import_scale.py measures it at scale). What is read is what reading the whole
text read: the same lines, the same entries, a bad byte named on its line wherever the pieces are cut."""

from __future__ import annotations

import hashlib
import tracemalloc

import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen import files
from sitegen.references import ReferenceProblem, decode, decoded, read_reference_file, read_references
from sitegen.references.problems import lines_of

RIS_RECORD = (FIXTURES / "ris" / "psycinfo_ris.ris").read_text(encoding="utf-8")
RIS_RECORD = RIS_RECORD[RIS_RECORD.index("TY  - "):RIS_RECORD.index("ER  -") + 5] + "\n\n"
MEDLINE_RECORD = (FIXTURES / "medline" / "pubmed_result1.txt").read_text(encoding="utf-8").strip() + "\n\n"


def cut(text: str, at: list[int]) -> list[str]:
    points = sorted({min(point, len(text)) for point in at})
    return [text[start:end] for start, end in zip([0, *points], [*points, len(text)], strict=True)]


@given(st.text(alphabet="ab \r\n", max_size=30), st.lists(st.integers(0, 30), max_size=5))
@settings(max_examples=300, deadline=None)
def test_lines_of_pieces_are_the_lines_of_the_whole_text(text, at):
    # a CRLF cut between two pieces is one line end, as in the whole text
    assert list(lines_of(cut(text, at))) == text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@pytest.mark.parametrize(("data", "encoding"), [
    ("é\r\n€ ☃\n".encode() * 3, None), ("\ufeffa\nb".encode(), None), ("ab\ncd".encode("utf-16"), None),
    (b"caf\xe9 \x93q\x94\n", "latin-1"), (b"\xef\xbb\xbf\xef\xbb\xbfx", None)])
def test_text_decoded_in_pieces_is_the_text_decoded_whole(data, encoding):
    for size in range(1, len(data) + 1):
        pieces = [data[at:at + size] for at in range(0, len(data), size)]
        assert "".join(decoded(pieces, encoding)) == decode(data, encoding)


def test_a_bad_byte_in_a_later_piece_is_named_on_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "CHUNK", 64)
    path = tmp_path / "export.ris"
    path.write_bytes(RIS_RECORD.encode() * 20 + "TY  - JOUR\nTI  - caf\xe9\nER  - \n".encode("latin-1"))
    line = RIS_RECORD.count("\n") * 20 + 2
    with pytest.raises(ReferenceProblem, match=r"not UTF-8 text \(byte 0xE9\).*--encoding latin-1") as raised:
        read_reference_file(path)
    assert raised.value.line == line
    # A UTF-8 character cut between two reads is read whole
    path.write_bytes(("TY  - JOUR\nTI  - " + "é" * 100 + "\nER  - \n").encode())
    assert read_references(path)[0].get("title") == "é" * 100


@pytest.mark.parametrize(("record", "suffix"), [(RIS_RECORD, ".ris"), (MEDLINE_RECORD, ".txt")])
def test_a_file_read_in_pieces_reads_as_its_text(tmp_path, monkeypatch, record, suffix):
    text = "".join(record.replace("2020-55555-005", f"id-{n}").replace("12230038", str(12230038 + n))
                   for n in range(30)).replace("\n", "\r\n")
    path = tmp_path / f"export{suffix}"  # .txt: the format is sniffed from the first pieces
    path.write_text(text, encoding="utf-8", newline="")
    monkeypatch.setattr(files, "CHUNK", 100)
    warnings: list[str] = []
    entries, format, sha256 = read_reference_file(path, warnings=warnings)
    assert format == ("ris" if suffix == ".ris" else "medline")
    assert entries == read_references(text, format) and len(entries) == 30
    assert sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(("record", "suffix"), [(RIS_RECORD, ".ris"), (MEDLINE_RECORD, ".nbib")])
def test_reading_a_file_holds_its_entries_not_copies_of_its_text(tmp_path, monkeypatch, record, suffix):
    # Reading held the bytes, the text, every line, the text again for rispy and its lines: 15 times the file's
    # size for a RIS export. Now the entries (2-3 times) and the piece being read.
    monkeypatch.setattr(files, "CHUNK", 1 << 16)
    path = tmp_path / f"export{suffix}"
    with open(path, "w", encoding="utf-8") as out:
        for n in range(2000):
            out.write(record.replace("2020-55555-005", f"id-{n}").replace("12230038", str(12230038 + n)))
    tracemalloc.start()
    try:
        entries = read_references(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(entries) == 2000
    assert peak < 6 * path.stat().st_size
