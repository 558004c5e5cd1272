"""Reading a reference file as it comes: a megabyte at a time, decoded piece by piece, a line-based format's
records built as each ends (bench/import_scale.py measures it at scale). What is read is what reading the whole
text read: the same lines, the same entries, a bad byte named on its line wherever the pieces are cut."""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import tracemalloc

import bibtexparser
import pytest
from conftest import FIXTURES, tree_bytes
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitegen import files, references
from sitegen.references import ReferenceProblem, csl, decode, decoded, read_reference_file, read_references, table
from sitegen.references.bibtex import LATEX, STAND_IN_CHARACTERS, _decoded
from sitegen.references.problems import lines_of

RIS_RECORD = (FIXTURES / "ris" / "psycinfo_ris.ris").read_text(encoding="utf-8")
RIS_RECORD = RIS_RECORD[RIS_RECORD.index("TY  - "):RIS_RECORD.index("ER  -") + 5] + "\n\n"
MEDLINE_RECORD = (FIXTURES / "medline" / "pubmed_result1.txt").read_text(encoding="utf-8").strip() + "\n\n"
RECORDS_CSV = [line + "\r\n" for line in (FIXTURES / "exports" / "records.csv").read_text(encoding="utf-8").splitlines()]


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


def traced(call, *args):
    """`call(*args)`, and the memory it still held on returning and at its peak (tracemalloc's, in bytes)."""
    tracemalloc.start()
    try:
        result = call(*args)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, held, peak


@pytest.mark.parametrize(("record", "suffix"), [(RIS_RECORD, ".ris"), (MEDLINE_RECORD, ".nbib")])
def test_reading_a_file_holds_its_entries_not_copies_of_its_text(tmp_path, monkeypatch, record, suffix):
    # Reading held the bytes, the text, every line, the text again for rispy and its lines: 15 times the file's
    # size for a RIS export. Now the entries (2-3 times) and the piece being read.
    monkeypatch.setattr(files, "CHUNK", 1 << 16)
    path = tmp_path / f"export{suffix}"
    with open(path, "w", encoding="utf-8") as out:
        for n in range(2000):
            out.write(record.replace("2020-55555-005", f"id-{n}").replace("12230038", str(12230038 + n)))
    entries, _, peak = traced(read_references, path)
    assert len(entries) == 2000
    assert peak < 6 * path.stat().st_size


# Web of Science: no real plain-text export may be copied (see test_references_more.py); this follows one's layout.
WOS_RECORD = """PT J
AU Chung, CYS
   Yam, VWW
TI Selective label-free detection of G-quadruplex structure of human
   telomere
SO CHEMICAL SCIENCE
PY 2013
DI 10.1039/c2sc20897k
UT WOS:000311971500044
ER

"""
CSV_FIXTURES = sorted(FIXTURES.rglob("*.csv"))
CSL_FIXTURES = sorted(FIXTURES.rglob("*.json"))


def read_in_pieces(text: str, format: str | None, at: list[int]):
    """What reading `text` cut at `at` gives: its entries, warnings and skipped records, or its problem."""
    warnings: list[str] = []
    skipped: list[tuple[int, str]] = []
    try:
        entries, _ = references._read_pieces(iter(cut(text, at)), format, warnings, None, skipped)
    except ReferenceProblem as problem:
        return problem.line, problem.message
    return entries, warnings, skipped


@given(st.text(alphabet='a,"\r\n', max_size=40), st.lists(st.integers(0, 40), max_size=6))
@settings(max_examples=500, deadline=None)
def test_a_csv_in_pieces_is_given_to_the_csv_module_as_the_lines_of_its_whole_text(text, at):
    # csv.reader read io.StringIO(text, newline="") of the whole text: a CR last in a piece may be half a CRLF
    assert list(table._lines(cut(text, at))) == io.StringIO(text, newline="").readlines()


@pytest.mark.parametrize("path", CSV_FIXTURES + CSL_FIXTURES, ids=lambda path: path.name)
@given(at=st.lists(st.integers(0, 20_000), max_size=8), broken=st.integers(0, 20_000))
@settings(max_examples=15, deadline=None)
def test_a_real_csv_or_csl_json_file_reads_in_pieces_as_whole(path, at, broken):
    # Each real file and one with a quote put anywhere (rows that do not parse, a field that never closes, a line
    # named in a problem): the same entries, warnings, skipped rows and problems however it is cut.
    text = path.read_text(encoding="utf-8-sig")
    for written in (text, text[:broken] + '"' + text[broken:]):
        assert read_in_pieces(written, None, at) == read_in_pieces(written, None, [])


@given(at=st.lists(st.integers(0, 2_000), max_size=8), late=st.booleans(), cut_short=st.integers(0, 2_000))
@settings(max_examples=100, deadline=None)
def test_a_web_of_science_export_reads_in_pieces_as_whole(at, late, cut_short):
    header = "FN Clarivate Analytics Web of Science\nVR 1.0\n"
    records = [WOS_RECORD.replace("000311971500044", f"{n:015d}") for n in range(5)]
    # a header written after the first record (exports joined, the first without its header) names its database too
    text = "".join(records[:1]) + header + "".join(records[1:]) + "EF\n" if late else header + "".join(records)
    for written in (text, text[:cut_short]):
        assert read_in_pieces(written, "wos", at) == read_in_pieces(written, "wos", [])
    entries, _, _ = read_in_pieces(text, "wos", at)
    assert {entry.get("database") for entry in entries} == {"Web of Science"}


def test_numbering_the_items_of_a_csl_json_file_counts_each_line_once():
    # Each item's line was counted from the start of the text: minutes for a file of 15,000 items.
    items = [{"id": f"a{n}", "title": f"Title {n}"} for n in range(300)]
    text = "[\n" + ",\n".join(json.dumps(item, indent=1) for item in items) + "\n]\n"
    counted = CountedText(text)
    entries = csl.read_csl_json(counted)
    assert [entry.line for entry in entries] == [2 + 4 * n for n in range(300)]
    assert counted.counted <= 2 * len(text)


class CountedText(str):
    """A text that counts the characters its `count` calls scan."""

    counted = 0

    def count(self, sub, start=0, end=None):
        self.counted += (len(self) if end is None else end) - start
        return str.count(self, sub, start, end)


@pytest.mark.parametrize(("header", "record", "suffix", "per_byte"), [
    ("FN Clarivate Analytics Web of Science\nVR 1.0\n", WOS_RECORD, ".ciw", 20),
    (RECORDS_CSV[0], RECORDS_CSV[1], ".csv", 4)])
def test_reading_a_web_of_science_or_csv_file_holds_its_entries_not_its_text(tmp_path, monkeypatch, header, record,
                                                                              suffix, per_byte):
    # Web of Science's reader held every record's lines and fields until the end of the file (31 times the file's
    # size at the peak, where its entries, each every field's name, are 13); the CSV reader held the text, the csv
    # module's copy of it and every row (6.7 times the file's size, where its entries are 1.8).
    monkeypatch.setattr(files, "CHUNK", 1 << 16)
    path = tmp_path / f"export{suffix}"
    with open(path, "w", encoding="utf-8", newline="") as out:
        out.write(header)
        for n in range(2000):
            out.write(record.replace("000311971500044", f"{n:015d}").replace("10.1001/jama.300.3.287", f"id-{n}", 1))
    entries, _, peak = traced(read_references, path)
    assert len(entries) == 2000
    assert peak < per_byte * path.stat().st_size


@pytest.mark.parametrize(("name", "text", "line", "said"), [
    # a cell larger than any field, quoted over many lines: named on the row's line, the file scanned for quotes once
    ("cell.csv", 'ID,title,year\na,One,2020\nb,"' + "x\n" * 9_000_000 + '",2020\n', 3, "field larger than field limit"),
    ("cell.csv", "ID,title,year\na,One,2020\nb," + "x" * 17_000_000 + ",2020\n", 3, "field larger than field limit"),
    ("deep.json", '[{"id": "a", "title": "T"},\n{"id": "b", "title": ' + "[" * 100_000 + "]" * 100_000 + "}]\n", 2,
     "nested too deeply"),
    ("open.bib", "@article{a,\n  title = {One},\n  year = {2020}\n}\n\n@article{b,\n  title = {Two {x},\n  year = 2020\n",
     6, "not valid BibTeX"),
    ("last.ciw", "FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nTI One\nPY 2020\nER\n\nPT J\nTI Two\nPY 2021\n", 8,
     "no ER line before the end of the file"),
    ("next.ciw", "FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nTI One\n\nPT J\nTI Two\nER\nEF\n", 3,
     "no ER line before the next PT"),
])
def test_a_hostile_file_is_refused_on_its_line_and_nothing_is_written(sitegen, tmp_path, name, text, line, said):
    review = tmp_path / "review"
    sitegen("init", review)
    sitegen("protocol", "lock", review, "--at", "2023-01-01T00:00:00Z")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    before = tree_bytes(review)
    code, _, err = sitegen("import", review, path, "--at", "2023-02-01T00:00:00Z", "--source", "Embase")
    assert code == 1 and err.startswith(f"error: {path}:{line}: ") and said in err and "nothing was imported" in err
    assert tree_bytes(review) == before


def test_an_import_lets_each_entry_go_as_its_record_is_made(tmp_path):
    # Every entry was held beside every record made of them: the peak of reading a file was its records and entries.
    from sitegen.living import imports

    path = tmp_path / "export.ciw"
    path.write_text("FN Clarivate Analytics Web of Science\nVR 1.0\n" + "".join(
        WOS_RECORD.replace("000311971500044", f"{n:015d}").replace("c2sc20897k", f"c2sc{n}") for n in range(1000)),
        encoding="utf-8")
    read, held, peak = traced(imports._read, path, None, None, "Web of Science", False)
    assert len(read.records) == 1000
    assert peak < 1.15 * held


def decoded_whole(value: str) -> str:
    """A BibTeX value decoded with all its text read by pylatexenc, as before plain text was set aside."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sitegen.references.bibtex._runs_set_aside", lambda value, runs: value)
        return _decoded(value)


def test_every_bibtex_fixture_value_decodes_as_it_did_whole():
    values = [str(field.value) for path in sorted(FIXTURES.rglob("*.bib"))
              for entry in bibtexparser.parse_string(path.read_text(encoding="utf-8"), parse_stack=[]).entries
              for field in entry.fields]
    assert len(values) > 300
    for value in values:
        inner = value.strip('{}"')
        # as written, as `_value` hands it on, and wrapped whole in braces (a title's capitals protected)
        for text in (value, inner, f"{{{inner}}}"):
            assert _decoded(text) == decoded_whole(text), text


# What writers put in a value's LaTeX, and what pylatexenc reads specially, with runs of plain text between.
LATEX_PIECES = ['\\"', "\\frac", "\\v", "\\texorpdfstring", "\\setlength", '\\"{an accent on each letter}', "\\%",
                "\\&", '{\\"o}', '\\"o', '\\"{ab}', "$x^2$", "$\\beta$", "CO$_2$", "\\$", "{nested {deep}}", "{",
                "}", "\\{", "\\url{http://a.b/c_d}", "\\textit{italic words}", "\\textit word", "\\ss ",
                "\\frac 1 2", "\\frac{1}2 3", "\\cite[p. 5]{key}", "\\section*{T}", "\\c c", "\\v{s}", "\\'e",
                "\\\\", "\\ ", "\\L", "\\textbackslash", "\\verb|a b c d e f g h|",
                "\\begin{itemize}\\item one two three four\\end{itemize}", "\\(a + b c d e f g h\\)", "--", "---",
                "``", "''", "`", "'", "!`", "?`", "~", "-", "[1]", "*", "#", "^", "_", " ", "\n", "\n\n", " \n \n ",
                "\t", "é", "²", "\ue003", "\ue0030\ue004", "(54", "plain words of an abstract, long enough ",
                "Results: 95 CI, 0.2 to 0.5. ", "x y z w v u t s r q "]


@given(st.lists(st.sampled_from(LATEX_PIECES), max_size=20).map("".join))
@example("\\setlength (54\\% and more text")  # a command's arguments taken from the run of text after it
@example('A \\"{an accent on each letter} and \\verb|a b c d e f g h| and more text')
@settings(max_examples=1000, deadline=None)
def test_a_bibtex_value_decodes_as_it_did_whole(value):
    text = _decoded(value)
    assert text == decoded_whole(value)
    assert not STAND_IN_CHARACTERS.search(text) or text == value  # only a value holding them already keeps them


@given(st.lists(st.sampled_from(LATEX_PIECES), max_size=20).map("".join), st.integers(1, 3),
       st.sampled_from(["", " ", "{}", "\\'", "x"]))
@example("plain words \\'{e} and a long run of words", 2, "")  # braces wrapping braces
# A "$" left after the math is set aside: pylatexenc reads math on past the braces' end, the rest an accent's argument.
@example('\\textsuperscript\\~{\\c c\\,\\,\\ \\ 1\\\\\\url\\ssword.\n---$[\\"$\\alpha${}ß:}#xxxxxxxxxxxx', 1, "")
@example("\\-\\emph''-\\~\n\n\\@(\\alpha.* \t\t\\~\\-.xxxxxxxxxxxx\\textbf\\'\\em ~\\textsuperscript_1\\\"{--$\\relax}1Title "
         "With*", 1, "")
@settings(max_examples=1000, deadline=None)
def test_a_bibtex_value_wrapped_whole_in_braces_decodes_as_it_did_whole(value, wraps, after):
    wrapped = "{" * wraps + value + "}" * wraps + after
    assert _decoded(wrapped) == decoded_whole(wrapped)


# Math, a "$" left over and accents whose argument never closes, with runs of plain text between: pylatexenc reads on
# past where braces seemed to close, and an accent marks each character it reads, the decoder's stand-ins too.
STRAY_MATH_PIECES = ["$", '$[\\"$\\alpha${}', "$\\beta$", "CO$_2$", "\\~{", '\\"{', "\\c{", "\\~", "{", "}", "[1]", "\\%",
                     " ", "xxxxxxxxxxxx", "plain words of an abstract, long enough "]


@given(st.lists(st.sampled_from(STRAY_MATH_PIECES), max_size=12).map("".join), st.integers(0, 2))
@example('\\~{$[\\"$\\alpha${}}xxxxxxxxxxxx', 0)  # a run set aside past the "}" that the math read on over
@example("\\~{[1]$}\\%xxxxxxxxxxxxResults", 0)  # as above, the whole text read with no stand-in taken apart
@example("A \\~{$\\beta$ and more words", 1)  # the accent marks each character of the math's stand-in
@settings(max_examples=1000, deadline=None)
def test_a_bibtex_value_decodes_to_no_stand_in_character_and_as_it_did_whole(value, wraps):
    wrapped = "{" * wraps + value + "}" * wraps
    text = _decoded(wrapped)
    assert not STAND_IN_CHARACTERS.search(text)
    assert text == decoded_whole(wrapped)


def test_decoding_a_bibtex_value_reads_its_latex_not_each_character_of_its_text(monkeypatch):
    # pylatexenc reads a value a character at a time: an abstract with a "54\%" in it took 0.1 s, a file of them
    # minutes. What it is given now grows with the LaTeX in a value, not with the plain text around it.
    read: list[int] = []

    class Counted:
        def latex_to_text(self, latex: str) -> str:
            read.append(len(latex))
            return LATEX.latex_to_text(latex)
    monkeypatch.setattr("sitegen.references.bibtex.LATEX", Counted())
    for words in (100, 10_000):
        text = " ".join(["plain words of an abstract"] * words)
        assert _decoded(f'{text} (54\\%) {text} M{{\\"u}}ller \\& Sons {text}') == \
            f"{text} (54%) {text} Müller & Sons {text}"
        # wrapped whole in braces, as a title protected from a style's lower-casing is: no command's argument
        assert _decoded(f'{{{{{text} (54\\%) {text} M{{\\"u}}ller}}}}') == f"{text} (54%) {text} Müller"
    assert len(read) == 4 and read[0] == read[2] < 100 and read[1] == read[3] < 100


def read_bytes_in_pieces(data: bytes, size: int | None):
    """What reading a CSL-JSON file's bytes gives, cut every `size` bytes (decoded as a file is) or whole: its
    entries, warnings and skipped items, or its problem."""
    warnings: list[str] = []
    skipped: list[tuple[int, str]] = []
    pieces = iter([decode(data)]) if size is None else decoded(data[at:at + size] for at in range(0, len(data), size))
    try:
        entries, _ = references._read_pieces(pieces, "csl-json", warnings, None, skipped)
    except ReferenceProblem as problem:
        return problem.line, problem.message
    return entries, warnings, skipped


@pytest.mark.parametrize("path", CSL_FIXTURES, ids=lambda path: path.name)
def test_every_json_fixture_reads_in_pieces_of_any_size_as_whole(path):
    # CSL-JSON was read whole (six times the file's size held): each item is read now as it ends, read again with
    # more text when a piece ends inside it. Every real file (CSL-JSON, and services' answers it refuses), as
    # written and with a byte-order mark and CRLF line ends: a character cut between pieces is read whole.
    data = path.read_bytes()
    for written in (data, codecs.BOM_UTF8 + data.replace(b"\n", b"\r\n")):
        whole = read_bytes_in_pieces(written, None)
        for size in (1, 7, 4096):
            assert read_bytes_in_pieces(written, size) == whole, size
    assert isinstance(read_bytes_in_pieces(data, None), tuple if path.parent.name == "csl" else object)


ITEM = '{"id": "a", "title": "One"}'
HOSTILE_CSL = [
    ("[\n" + ITEM + ",\n" + ITEM.replace('"a"', '"b"') + "\n", 4, "expected ',' or ']' after an item"),  # unclosed
    ("[\n" + ITEM[:-1], 2, "not valid JSON: Expecting ',' delimiter"),
    ("[\n" + ITEM + ', {"id": "b", "title": "Tw', 2, "not valid JSON: Unterminated string"),
    ("[" + ITEM + "]\n" + " \n" * 5000 + "x", 1, "text after the closing ']'"),  # trailing garbage
    ("[" + ITEM + "]" + " " * 9000, None, ""),
    ("[" + ITEM + ",\n 12345,\n" + ITEM.replace('"a"', '"b"') + "]", 2, "not a CSL-JSON item: a int"),
    ("[" + ITEM + ",\n 12345", 2, "expected ',' or ']' after an item"),  # a number the file ends in, not a part
    ("[" + ITEM + ",\n tru", 2, "not valid JSON: Expecting value"),
    (ITEM + "\n\n" + ITEM.replace('"a"', '"b"') + "\n\n", None, ""),  # items one after another
    (ITEM + "\n" + ITEM.replace('"a"', '"b"') + "\n]", 3, "text after an item where another item"),
    ('{"items": [' + ITEM + "]}", 1, "a list of items under 'items'"),
    ("[" + ITEM + ",\n" + '{"id": "b", "id": "c"}]', 2, "the key 'id' is given twice"),
    ("[" + ITEM + ",\n" + "[" * 5000 + "]" * 5000 + "]", 2, "nested too deeply"),  # deep nesting
    ('{"id": "a", "title": ' + "[" * 5000 + "]" * 5000 + "}", 1, "nested too deeply"),
    ('[{"id": "é☃😀", "title": "\\ud83d\\ude00 \\"[{\\\\\\" }] 😀"}]', None, ""),  # split characters, escapes
    ("\n\n  \t", 3, "expected an array of items"), ("[ \n ]", 1, "no CSL-JSON item"), ("[]]", 1, "text after"),
]


@pytest.mark.parametrize(("text", "line", "said"), HOSTILE_CSL)
def test_a_hostile_csl_json_file_reads_in_pieces_as_whole(text, line, said):
    data = text.encode()
    whole = read_bytes_in_pieces(data, None)
    for size in (1, 7, 4096):
        assert read_bytes_in_pieces(data, size) == whole, size
    problems = [whole] if isinstance(whole[0], int) else whole[2]  # the file's, or each bad item's (skipped)
    if line is None:
        assert whole[0] and not problems
    else:
        assert [(at, said in why) for at, why in problems] == [(line, True)]


def test_a_huge_string_is_read_a_few_times_not_once_a_piece(monkeypatch):
    # An item that goes on over many pieces (an abstract of megabytes) is read again as more text comes: with twice
    # as much each time, the characters read add up to a few times the item's, not its size times its pieces.
    scanned: list[int] = []

    class Counted(json.JSONDecoder):
        def raw_decode(self, text, position=0):
            scanned.append(len(text) - position)
            return super().raw_decode(text, position)
    monkeypatch.setattr(csl, "DECODER", Counted(object_pairs_hook=csl._object))
    abstract = '[{\\"]} ' * 300_000
    data = ('[{"id": "a", "title": "T", "abstract": "' + abstract + '"}]').encode()
    [entry] = read_bytes_in_pieces(data, 4096)[0]
    assert entry.get("abstract") == abstract.replace('\\"', '"').strip()
    assert sum(scanned) < 4 * len(data)


def test_reading_a_csl_json_file_holds_its_entries_not_its_text(tmp_path, monkeypatch):
    # The whole text and every item's objects were held (six times the file's size): now the entries.
    monkeypatch.setattr(files, "CHUNK", 1 << 16)
    item = json.loads((FIXTURES / "exports" / "records.json").read_text(encoding="utf-8"))[0]
    path = tmp_path / "export.json"
    path.write_text("[\n" + ",\n".join(json.dumps({**item, "id": f"id-{n}", "DOI": f"10.5555/{n}"}, indent=2)
                                       for n in range(2000)) + "\n]\n", encoding="utf-8")
    entries, _, peak = traced(read_references, path)
    assert len(entries) == 2000
    assert peak < 2 * path.stat().st_size
