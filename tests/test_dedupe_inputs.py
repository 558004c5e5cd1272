"""`sitegen dedupe`'s inputs and outputs: outputs that would overwrite the source or each other, the
reader's messages for malformed or unrecognised files, warnings, and arXiv ids written as DOIs."""

from __future__ import annotations

import pytest
from conftest import tree_bytes

from sitegen import commands
from sitegen.errors import SitegenError
from sitegen.records.dedupe import dedupe_rows, identity_sets, to_work
from sitegen.records.entry import Entry
from sitegen.references import ReferenceProblem, read_references
from sitegen.references.bibtex import read_bibtex
from sitegen.references.table import read_csv

HEADER = "ID,ENTRYTYPE,author,title,year,journal,volume,number,pages,doi,abstract\n"
SOURCE = HEADER + "a,article,\"Smith, J\",Aspirin after stroke,2010,Stroke,41,,1-5,,\n"
RIS = "TY  - JOUR\nID  - {id}\nTI  - {title}\nAU  - Smith, Jo\nPY  - 2001\nER  - \n"
UNRECOGNISED = ("unrecognised format (expected a records CSV with an ID column, RIS, EndNote XML, BibTeX, MEDLINE, "
                "Web of Science plain text or CSL-JSON)")

# --------------------------------------------------------------------------- outputs


def _refused(tmp_path, sitegen, *args: str | object) -> str:
    """The command's message for a refused run, having checked that it changed no file."""
    before = tree_bytes(tmp_path)
    code, _, err = sitegen("dedupe", *args)
    assert code != 0
    assert tree_bytes(tmp_path) == before
    return err


@pytest.mark.parametrize(("options", "message"), [
    (["--out", "{src}"], "--out {src}: is the same file as SOURCE"),
    (["--out", "{dir}/./sub/../records.csv"], "is the same file as SOURCE"),
    (["--out", "{dir}/link.csv"], "--out {dir}/link.csv: is the same file as SOURCE"),  # a symbolic link to it
    (["--out", "{dir}/o.csv", "--probable", "{src}"], "--probable {src}: is the same file as SOURCE"),
    (["--out", "{dir}/o.csv", "--versions", "{dir}/o.csv"], "--versions {dir}/o.csv: is the same file as --out"),
    (["--out", "{dir}/o.csv", "--probable", "{dir}/p.csv", "--versions", "{dir}/./p.csv"],
     "is the same file as --probable {dir}/p.csv"),
    (["--out", "{dir}/missing/o.csv"], "--out {dir}/missing/o.csv: its folder {dir}/missing does not exist"),
    (["--out", "{dir}/o.csv", "--probable", "{dir}/missing/p.csv"], "--probable {dir}/missing/p.csv: its folder"),
])
def test_outputs_that_clash_are_refused_before_anything_is_written(tmp_path, sitegen, options, message):
    source = tmp_path / "records.csv"
    source.write_text(SOURCE, encoding="utf-8")
    (tmp_path / "link.csv").symlink_to(source)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "keep.txt").write_text("x", encoding="utf-8")
    fill = {"src": source, "dir": tmp_path}
    err = _refused(tmp_path, sitegen, source, *[option.format(**fill) for option in options])
    assert message.format(**fill) in err


def test_an_output_that_is_a_folder_is_refused(tmp_path, sitegen):
    source = tmp_path / "records.csv"
    source.write_text(SOURCE, encoding="utf-8")
    (tmp_path / "folder").mkdir()
    err = _refused(tmp_path, sitegen, source, "--out", tmp_path / "o.csv", "--versions", tmp_path / "folder")
    assert f"'--versions': {tmp_path}/folder is a folder, not a file" in err  # checked as it is parsed, with usage
    with pytest.raises(SitegenError, match=f"--probable {tmp_path}/folder: is a folder"):
        commands.dedupe(source, tmp_path / "o.csv", tmp_path / "folder", tmp_path / "v.csv")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["folder", "records.csv"]


def test_default_output_names_next_to_a_distinct_out_are_accepted(tmp_path, sitegen):
    source = tmp_path / "records.csv"
    source.write_text(SOURCE, encoding="utf-8")
    code, _, err = sitegen("dedupe", source, "--out", tmp_path / "sets.csv")
    assert code == 0, err
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "records.csv", "sets-probable.csv", "sets-versions.csv", "sets.csv"]


@pytest.mark.parametrize("taken", ["sets.csv", "sets-probable.csv", "sets-versions.csv"])
def test_a_file_dedupe_did_not_write_is_never_replaced(tmp_path, sitegen, taken):
    # The probable pairs' and versions' names are made from --out's: a reviewer's own file of that name
    # would have been overwritten without a word.
    source = tmp_path / "records.csv"
    source.write_text(SOURCE, encoding="utf-8")
    (tmp_path / taken).write_text("first,second,decision\nW1,W2,same\n", encoding="utf-8")
    for force in ((), ("--force",)):  # never, --force or not
        err = _refused(tmp_path, sitegen, source, "--out", tmp_path / "sets.csv", *force)
        assert f"{tmp_path / taken}: exists and is not a file sitegen dedupe wrote" in err


def test_dedupe_run_again_replaces_its_own_outputs_with_force(tmp_path, sitegen):
    source = tmp_path / "records.csv"
    source.write_text(SOURCE, encoding="utf-8")
    assert sitegen("dedupe", source, "--out", tmp_path / "sets.csv")[0] == 0
    # As every command writing a file a user names: one already there is replaced only with --force.
    err = _refused(tmp_path, sitegen, source, "--out", tmp_path / "sets.csv")
    assert f"--out {tmp_path / 'sets.csv'}: already exists; give --force to replace it" in err
    (tmp_path / "sets-versions.csv").write_text("")  # made ready for it (mktemp)
    for _ in range(2):
        code, _, err = sitegen("dedupe", source, "--out", tmp_path / "sets.csv", "--force")
        assert code == 0, err
    assert (tmp_path / "sets-probable.csv").read_text().splitlines() == ["first,second,score"]
    (tmp_path / "sets.csv").write_text("merged_ids\n")  # saved again by an editor, with LF
    assert sitegen("dedupe", source, "--out", tmp_path / "sets.csv", "--force")[0] == 0


# --------------------------------------------------------------------------- reader messages


def test_bibtex_unclosed_brace_says_why_and_the_parser_prints_nothing(capfd):
    text = "@article{a,\n title={X},\n year={2010}\n}\n\n@article{b,\n title={Y\n year={2011}\n}\n"
    with pytest.raises(ReferenceProblem) as error:
        read_bibtex(text)
    assert error.value.line == 6
    assert error.value.message.startswith("not valid BibTeX: ") and len(error.value.message) > 30
    with pytest.raises(ReferenceProblem, match="not valid BibTeX: Unexpectedly reached end of file"):
        read_bibtex("@article{a,\n title={X},\n year={2010}\n")
    assert capfd.readouterr() == ("", "")


def test_bibtex_field_given_twice_names_the_second(tmp_path, sitegen):
    source = tmp_path / "refs.bib"
    source.write_text("@article{a,\n title={X},\n title={Y},\n year={2010}\n}\n", encoding="utf-8")
    err = _refused(tmp_path, sitegen, source, "--out", tmp_path / "out.csv")
    assert err == f"error: {source}:3: field 'title' is given twice in entry 'a' (first on line 2)\n"


@pytest.mark.parametrize(("text", "line", "message"), [
    # a row whose quoted title spans lines 2-4: its problems are on line 2
    ('ID,title,year\na,"multi\nline\ntitle",20x0\nb,ok,2011\n', 2, "year '20x0' holds no four-digit year"),
    ('ID,title,year\na,"multi\nline",2010,extra\n', 2, "4 fields where the header has 3"),
    ('ID,title,year\na,"multi\nline",2010\nb,ok,20x1\n', 4, "year '20x1'"),
    ('ID,title,year\na,"multi\nline",2010\na,"x\ny",2011\n', 4, "ID 'a' was already used on line 2"),
    # an unclosed quote: where it opens, not the end of the file
    ('ID,title,year\na,"unterminated,2010\nb,ok,2011\nc,ok,2012\n', 2, "a quoted field opens on this line"),
    ('ID,title,year\na,"two\nlines",2010\nb,ok,"2011\nc,ok,2012\n', 4, "is never closed"),
    ('ID,title,year\na,"x"y",2010\n', 2, "not valid CSV"),
])
def test_csv_problems_name_the_first_line_of_their_row(text, line, message):
    with pytest.raises(ReferenceProblem, match=message) as error:
        read_csv(text)
    assert error.value.line == line


def test_csv_entries_are_on_the_first_line_of_their_row():
    rows = read_csv('ID,title,year\na,"multi\nline",2010\n\nb,ok,2011\n')
    assert [(row.id, row.line) for row in rows] == [("a", 2), ("b", 5)]


@pytest.mark.parametrize(("written", "read"), [
    ('"Liu, Y; Li, C"', "Liu, Y and Li, C"),  # as Scopus and Web of Science write a list
    ('"He L, Chen X"', "He, L and Chen, X"),  # as PubMed and Covidence do
    ("Smith J", "Smith, J"),
    # BibTeX's own lists and one name stay as written
    ('"Yablon, S. and Sherer, M."', "Yablon, S. and Sherer, M."),
    ('"Yablon, S."', "Yablon, S."),
    ("World Health Organization", "World Health Organization"),
])
def test_an_author_list_in_the_benchmarks_columns_is_read_however_it_is_separated(written, read):
    # A CSV in the benchmark's columns with its authors as an export writes them was read as one author's name, and
    # the records of the same work by another database (BibTeX's " and ") were no longer the same people.
    (entry,) = read_csv(f"ID,ENTRYTYPE,author,title,year,journal\na,article,{written},A title,2020,A journal\n")
    assert entry.fields["author"] == read


SEPARATED = "a records CSV separated by {}, not commas: save it as CSV with commas (UTF-8), then import it"


@pytest.mark.parametrize(("name", "text", "message"), [
    ("records.txt", "title\tyear\nx\t2010\n", UNRECOGNISED),
    ("records.csv", "PMID- 12345678\nTI  - Aspirin after stroke.\n", UNRECOGNISED),  # a CSV by its suffix only
    # A records CSV a spreadsheet saved with another separator is named as such (it was "unrecognised").
    ("records.tsv", "ID\ttitle\tyear\na\tx\t2010\n", SEPARATED.format("tabs")),
    ("records.csv", "ID;title;year\na;x;2010\n",
     SEPARATED.format("';' (as spreadsheets in German or French settings save)")),
    ("records.csv", "ID;title;year\ra;x;2010\r",  # saved as "CSV (Macintosh)": lines end in a lone \r
     SEPARATED.format("';' (as spreadsheets in German or French settings save)")),
])
def test_an_unrecognised_file_says_so_on_line_1(tmp_path, sitegen, name, text, message):
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    err = _refused(tmp_path, sitegen, source, "--out", tmp_path / "out.csv")
    assert err == f"error: {source}:1: {message}\n"


def test_a_csv_named_as_such_without_an_id_column_lists_its_columns():
    with pytest.raises(ReferenceProblem, match=r"no ID column \(columns: title, year\)"):
        read_references("title,year\nA,2001\n", "csv")


def test_an_empty_file_of_no_known_format_is_empty():
    with pytest.raises(ReferenceProblem, match="the file is empty"):
        read_references("\n\n")


def test_concatenated_ris_exports_are_named_by_position_and_the_command_says_so(tmp_path, sitegen):
    source = tmp_path / "both.ris"
    first = RIS.format(id=1, title="Aspirin after stroke") + RIS.format(id=2, title="Statins after stroke")
    second = RIS.format(id=1, title="Heparin after stroke")
    source.write_text(first + "\n" + second, encoding="utf-8")
    code, stdout, err = sitegen("dedupe", source, "--out", tmp_path / "out.csv")
    assert code == 0 and stdout.startswith("3 records:")
    assert err == (f"warning: {source}: ID '1' on line 15 was already used on line 2; every record is named "
                   "by its position instead (ris-1 to ris-3)\n")
    warnings: list[str] = []
    assert [entry.id for entry in read_references(source, warnings=warnings)] == ["ris-1", "ris-2", "ris-3"]
    source.write_text(first, encoding="utf-8")  # unique ID tags are the IDs, without a word
    code, _, err = sitegen("dedupe", source, "--out", tmp_path / "out.csv", "--force")
    assert code == 0 and err == ""
    assert [entry.id for entry in read_references(source)] == ["1", "2"]


# --------------------------------------------------------------------------- arXiv ids in the DOI field


def _entry(key: str, **fields: str) -> Entry:
    names = HEADER.strip().split(",")
    return Entry(key, {**dict.fromkeys(names, ""), **fields, "ID": key}, 1)


@pytest.mark.parametrize("written", ["arXiv:2101.00001", "arxiv:2101.00001v3", "2101.00001v2",
                                     "https://arxiv.org/abs/2101.00001"])
def test_an_arxiv_id_in_the_doi_field_is_the_entrys_arxiv_id(written):
    title = "Graph neural networks for stroke lesion segmentation in diffusion weighted imaging"
    preprint = _entry("a", title=title, year="2021", doi="10.48550/arXiv.2101.00001")
    written_as_doi = _entry("b", title=title, year="2021", doi=written)
    assert dict(to_work(written_as_doi).identifiers) == {"arxiv": "2101.00001"}
    assert identity_sets([preprint, written_as_doi]) == [["a", "b"]]
    assert dedupe_rows([preprint, written_as_doi]).sets == [["a", "b"]]


def test_an_arxiv_id_is_no_doi_and_joins_nothing_else():
    other = _entry("c", title="Something else entirely", year="2021", doi="10.1000/2101.00001")
    written = _entry("b", title="Graph neural networks", year="2021", doi="2101.00001")
    assert dict(to_work(written).identifiers) == {"arxiv": "2101.00001"}
    assert identity_sets([other, written]) == []


def test_abstracts_numbered_within_one_supplement_article_are_two_works(sitegen, tmp_path):
    # Oxford numbers a supplement's abstracts ehz745.0123, ehz745.0124, ...: the number after the dot tells
    # them apart (a spreadsheet's 123.0 is page 123).
    source = tmp_path / "supplement.csv"
    row = ('{key},article,"Ahmed, K and Olsen, P",Sleep duration and atrial fibrillation in the UK Biobank,2019,'
           "European Heart Journal,40,Supplement_1,{pages},,\n")
    header = "ID,ENTRYTYPE,author,title,year,journal,volume,number,pages,doi,abstract\n"
    for pages, merged in ((("ehz745.0123", "ehz745.0999"), []), (("123.0", "123"), ["s1;s2"])):
        source.write_text(header + row.format(key="s1", pages=pages[0]) + row.format(key="s2", pages=pages[1]),
                          encoding="utf-8")
        code, _, err = sitegen("dedupe", source, "--out", tmp_path / "sets.csv", "--force")
        assert code == 0, err
        assert (tmp_path / "sets.csv").read_text().splitlines() == ["merged_ids", *merged]


def test_a_full_disk_leaves_every_output_of_the_earlier_run(tmp_path, sitegen, monkeypatch):
    # The three files are written together: a failure on the second left the first new beside two old ones.
    import errno

    import sitegen.review.write as write

    source = tmp_path / "records.csv"
    source.write_text(SOURCE, encoding="utf-8")
    assert sitegen("dedupe", source, "--out", tmp_path / "sets.csv")[0] == 0
    source.write_text(SOURCE + "b,article,\"Smith, J\",Aspirin after stroke,2010,Stroke,41,,1-5,,\n", encoding="utf-8")
    real, calls = write._staged, []

    def fills_up(path, data, mode_from):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data, mode_from)

    monkeypatch.setattr(write, "_staged", fills_up)
    err = _refused(tmp_path, sitegen, source, "--out", tmp_path / "sets.csv", "--force")
    assert "No space left on device" in err and "sets-probable.csv" in err
