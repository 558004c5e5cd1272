"""A count in what sitegen says (command output, warnings, problems, pages) has its noun in the number it needs,
said by `sitegen.text.counted` or the templates' `counted`: never "1 pair(s)" or "2 entr(y/ies)", which leave
the reader to pick. The site as built is read for them by test_site_reading; this reads the source, so that a
count said in a branch no test reaches cannot come back either."""

from __future__ import annotations

import ast
import re

from conftest import ROOT

# A placeholder ("{}" for a Python f-string's, "}}" ending a Jinja expression), then at most two words, then a word
# with a hedged plural: "{n} pair(s)", "{n} probable pair(s)", "{{ n }} preprint-journal version pair(s)". Words
# between ending in "s" make it prose about a placeholder that is no count ("batch {n} repeats record(s) of",
# "{stage} outcomes name record(s) that"): a count's noun phrase has no plural before its last word.
HEDGED_COUNT = re.compile(r"(?:\{\}|\}\})((?: [\w-]+){0,2}) ([\w-]+\((?:s|es|y/ies|ies)\))")


def _hedged_counts(text: str) -> list[str]:
    return [match.group(0) for match in HEDGED_COUNT.finditer(text)
            if not any(word.endswith("s") for word in match.group(1).split())]


def _f_strings(source: str) -> list[tuple[int, str]]:
    """Each f-string of a module (adjacent literals joined, as Python joins them), its placeholders as "{}"."""
    return [(node.lineno, "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values))
            for node in ast.walk(ast.parse(source)) if isinstance(node, ast.JoinedStr)]


def test_no_count_in_sitegens_code_is_said_with_a_hedged_plural():
    hedged = [f"{path.relative_to(ROOT)}:{line}: {found}" for path in sorted((ROOT / "sitegen").rglob("*.py"))
              for line, text in _f_strings(path.read_text(encoding="utf-8")) for found in _hedged_counts(text)]
    assert hedged == []


def test_no_count_in_a_template_is_said_with_a_hedged_plural():
    hedged = [f"{path.relative_to(ROOT)}:{line}: {found}" for path in sorted((ROOT / "templates").rglob("*.html"))
              for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
              for found in _hedged_counts(text)]
    assert hedged == []


def test_the_guard_finds_a_hedged_count_and_leaves_prose_alone():
    """What the two tests above look for, on the shapes it was written against."""
    found = [text for text in ('f"{len(pairs)} pair(s) await"', 'f"run {n} time(s), last"',
                               'f"{n} preprint-journal version pair(s) in"', 'f"{n} " f"run(s) did not"',
                               'f"{len(recheck)} entr(y/ies) could not"', 'f"{n} more {name} record(s) could not"')
             if any(_hedged_counts(t) for _, t in _f_strings(text))]
    assert len(found) == 6
    prose = ['f"batch {n} repeats record(s) of an earlier batch"', 'f"{stage} outcomes name record(s) that"',
             '"the file(s) you give"', 'f"unknown column(s) {names}"', 'f"an http(s) address {url}"']
    assert [text for text in prose if any(_hedged_counts(t) for _, t in _f_strings(text))] == []
    assert _hedged_counts("{{ report.rows }} row(s) read") and not _hedged_counts("Author(s) {{ name }}")


def test_a_sources_line_says_one_record_and_one_dropped_in_the_singular():
    """`sitegen search` said "1 records, but 1 more OpenAlex record(s) could not be read"."""
    from sitegen.records.model import Record
    from sitegen.sources.outcome import SourceOutcome
    from sitegen.sources.search import describe

    record = Record(id="10.1000/one", type="article", title="One", DOI="10.1000/one")
    said = describe(SourceOutcome(source="openalex", status="ok", records=[record], total=2, dropped=1))
    assert said.startswith("1 record of 2 reported, but 1 more OpenAlex record could not be read"), said
    assert describe(SourceOutcome(source="openalex", status="ok", records=[record, record], total=2)) == "2 records"


def test_a_batch_site_and_export_of_one_record_say_one_record(sitegen, tmp_path):
    """`sitegen screen status` said "imported outside a batch (...): 1 records", and `build` "(... 1 records, ...)"."""
    from conftest import review_of_ris

    review, (code, out, err) = review_of_ris(tmp_path / "review", "TY  - JOUR\nTI  - One paper\nPY  - 2020\nER  - \n")
    assert code == 0, out + err
    code, out, err = sitegen("screen", "status", review)
    assert code == 0 and "imported outside a batch (`screen rank --imported`): 1 record\n" in out, out + err
    code, out, err = sitegen("build", review, "--out", tmp_path / "site")
    assert code == 0 and ", 1 record, last updated" in out, out + err
    code, out, err = sitegen("export", review, "--format", "ris", "--records", "all", "--out", tmp_path / "all.ris")
    assert code == 0 and err.strip().endswith("(1 record)"), out + err
