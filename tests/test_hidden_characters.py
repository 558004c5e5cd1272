"""Text a reviewer writes by hand holds no invisible format character (direction overrides, isolates, marks,
zero-width spaces): each can make a note display otherwise than it is ("Trojan Source"). `check` refuses one in
every such field, naming the file, the line and, where the file has them, the column; nothing is written."""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import tree_bytes

from sitegen.records.model import hand_written, printable
from sitegen.review.models import Decision

RLO, PDF, LRI, PDI, ZWSP, RLM = "\u202e", "\u202c", "\u2066", "\u2069", "\u200b", "\u200f"
TA, FT = "screening/title-abstract", "screening/full-text"


def replaced(review: Path, rel: str, old: str, new: str) -> str:
    """Replace the first `old` of the file with `new` (written raw, as an editor would paste it); the file's path."""
    path = review / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return rel


def appended_row(review: Path, rel: str, header: str, row: str) -> str:
    path = review / rel
    text = path.read_text(encoding="utf-8") if path.exists() else header + "\n"
    path.write_text(text + row + "\n", encoding="utf-8")
    return rel


def status_note(review: Path, text: str) -> str:
    state = json.loads((review / "state.json").read_text(encoding="utf-8"))
    (review / "state.json").write_text(json.dumps({**state, "status_note": text}, indent=2, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
    return "state.json"


def adjudication_note(review: Path, text: str) -> str:
    return replaced(review, f"{TA}/adjudication.csv", "adjudicated for the demonstration", text)


def decision_note(review: Path, stage: str, text: str) -> str:
    rel = f"{stage}/reviewer-a.csv"
    lines = (review / rel).read_text(encoding="utf-8").splitlines()
    assert lines[1].endswith(",")  # its note is the last column, empty
    lines[1] += text
    (review / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rel


def duplicate_note(review: Path, text: str) -> str:
    first, second = [json.loads(line)["id"] for line in (review / "records.jsonl").read_text().splitlines()[:2]]
    return appended_row(review, "duplicates.csv", "record_id,duplicate_of,decision,reviewer,note",
                        f"{first},{second},different,reviewer-a,{text}")


def validation_note(review: Path, text: str) -> str:
    first = json.loads((review / "records.jsonl").read_text().splitlines()[0])["id"]
    return appended_row(review, "validation.csv", "record_id,note", f"{first},{text}")


EVIDENCE = "evidence/wilson-2013-lec.yaml"
# Field -> how a reviewer's text lands in it (the file's path is returned), and the character planted there.
FIELDS: dict[str, tuple[Callable[[Path, str], str], str]] = {
    "review.yaml title": (lambda r, t: replaced(r, "review.yaml", "The rodent object-in-context", t), RLO),
    "review.yaml question": (lambda r, t: replaced(r, "review.yaml", "Which procedural variables", t), LRI),
    "review.yaml author": (lambda r, t: replaced(r, "review.yaml", "sitegen maintainers", t), RLM),
    "protocol reason label": (lambda r, t: replaced(r, "protocol.md", "Non-rodent species\n  - code", t + "\n  - code"),
                              PDI),
    "protocol eligibility": (lambda r, t: replaced(r, "protocol.md", "Uses the object-in-context (OIC) task", t), ZWSP),
    "protocol watchlist term": (lambda r, t: replaced(r, "protocol.md", "  - term: object-in-context",
                                                      f"  - term: {t}"), RLO),
    "protocol text": (lambda r, t: (replaced(r, "protocol.md", "\n## ", f"\n{t}\n\n## ")), RLO),
    "state.json status_note": (status_note, RLO),
    "title-abstract note": (lambda r, t: decision_note(r, TA, t), LRI),
    "adjudication note": (adjudication_note, RLO),
    "full-text note": (lambda r, t: decision_note(r, FT, t), RLM),
    "duplicates.csv note": (duplicate_note, RLO),
    "validation.csv note": (validation_note, ZWSP),
    "evidence finding": (lambda r, t: replaced(r, EVIDENCE, "could not recognise", t), RLO),
    "evidence population": (lambda r, t: replaced(r, EVIDENCE, "population: Rats", f"population: {t}"), LRI),
    "evidence passage": (lambda r, t: replaced(r, EVIDENCE, "In a subsequent experiment", t), RLO),
}


@pytest.mark.parametrize("field", FIELDS)
def test_an_invisible_format_character_in_a_reviewers_text_is_refused(sitegen, example_copy, field):
    plant, char = FIELDS[field]
    text = f"agreed {char}edulcni{PDF if char == RLO else PDI if char == LRI else ''} after all"
    rel = plant(example_copy, text)
    lines = (example_copy / rel).read_text(encoding="utf-8").splitlines()
    line = next(n for n, written in enumerate(lines, start=1) if char in written)
    # A YAML value folded over several lines is placed where it starts, at its key, as every problem of the file is.
    while rel.endswith(".yaml") and ":" not in lines[line - 1].split(char)[0]:
        line -= 1
    before = tree_bytes(example_copy)
    code, out, err = sitegen("check", example_copy)
    assert code == 1 and "Traceback" not in out + err, out + err
    found = [row for row in out.splitlines() if row.startswith(f"{example_copy}/{rel}:{line}:")
             and f"U+{ord(char):04X} ({unicodedata.name(char)})" in row]
    assert found, f"{rel}:{line} not reported:\n{out}"
    assert tree_bytes(example_copy) == before


def test_balanced_or_not_every_direction_control_and_invisible_character_is_refused():
    # Balanced, a direction control still reorders the text it holds: a reviewer's text is refused, where a provider's
    # is only kept from reordering what follows it (`printable`).
    controls = [chr(code) for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]] + \
        ["\u200e", "\u200f", "\u061c", "\u200b", "\u2060", "\ufeff"]
    for char in controls:
        with pytest.raises(ValueError, match=f"U\\+{ord(char):04X}"):
            hand_written(f"a {char}b{PDF} c")
        with pytest.raises(ValueError, match="invisible character"):
            Decision(record_id="10.1002/hipo.22095", decision="include", note=f"a {char}b")
    assert printable(f"a {RLO}b{PDF} c") == f"a {RLO}b{PDF} c"  # a provider's balanced text is kept


@pytest.mark.parametrize("text", [
    "ﺎﻠﻓﺄﺭ – rat, per the Arabic abstract",  # right-to-left letters need no control
    "می\u200cخواهم",  # a zero-width non-joiner: how a Persian word is spelt
    "👩\u200d🔬 checked",  # a zero-width joiner: one emoji
    "object\u00adin\u00adcontext",  # soft hyphens, as a PDF leaves them in a copied word
])
def test_text_that_needs_no_control_and_the_characters_words_are_spelt_with_are_accepted(text):
    assert hand_written(text) == text


def test_a_tools_note_is_imported_without_the_invisible_characters_check_refuses(sitegen, example_copy, tmp_path):
    # ASReview's note column holds what its user typed there: written to a reviewer's file, it must pass `check`.
    records = [json.loads(line) for line in (example_copy / "records.jsonl").read_text().splitlines()[:2]]
    export = tmp_path / "asreview.csv"
    with export.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["doi", "title", "included", "asreview_note"])
        writer.writerows([record.get("DOI", ""), record["title"], "1", f"looks {RLO}fine{PDF} {ZWSP}to me"]
                         for record in records)
    code, out, err = sitegen("import-decisions", example_copy, export, "--tool", "asreview", "--reviewer", "reviewer-c")
    assert code == 0, out + err
    written = list(csv.DictReader((example_copy / TA / "reviewer-c.csv").open(encoding="utf-8")))
    assert written and {row["note"] for row in written} == {"looks fine to me"}
    assert sitegen("check", example_copy)[0] == 0


LATER = "2024-01-01T00:00:00Z"  # after the example's latest ledger event
RIS = str(Path(__file__).resolve().parent / "fixtures" / "ris" / "example_full.ris")
# Text typed on the command line that the ledger keeps (and the site shows): the option, and the command giving it.
TYPED = {
    "protocol lock --reason": ("--reason", ["protocol", "lock", "{new}", "--at", LATER, "--reason", "{text}"]),
    "protocol amend --reason": ("--reason", ["protocol", "amend", "{review}", "--at", LATER, "--reason", "{text}"]),
    "import --description": ("--description", ["import", "{review}", RIS, "--at", LATER, "--description", "{text}"]),
    "import --source": ("--source", ["import", "{review}", RIS, "--at", LATER, "--source", "{text}"]),
}


@pytest.mark.parametrize("given", TYPED)
@pytest.mark.parametrize("char", [RLO, LRI, ZWSP, RLM])
def test_an_invisible_format_character_typed_for_the_ledger_is_a_usage_error(sitegen, example_copy, tmp_path, given,
                                                                             char):
    # The rule of a reviewer's text in the files, where the text is typed: the ledger keeps it for good.
    sitegen("init", tmp_path / "new")
    option, arguments = TYPED[given]
    text = f"agreed {char}edulcni{PDF if char == RLO else PDI if char == LRI else ''} after all"
    before = tree_bytes(tmp_path)
    code, _, err = sitegen(*(a.format(review=example_copy, new=tmp_path / "new", text=text) for a in arguments))
    assert code == 2 and f"Invalid value for '{option}'" in err and f"U+{ord(char):04X} ({unicodedata.name(char)})" in err, err
    assert "nothing was written" in err and "Traceback" not in err
    assert tree_bytes(tmp_path) == before


@pytest.mark.parametrize("char", ["\n", "\r", "\t", "\u2028"])
def test_a_source_typed_with_a_line_break_or_tab_is_a_usage_error(sitegen, example_copy, char):
    """A source is a name, shown on one line by PRISMA and by import's report: "a\nb" was kept in the ledger for good
    and broke the report's line ("counted as other methods (a" / "b)"). A reason or a description may run over lines."""
    option, arguments = TYPED["import --source"]
    before = tree_bytes(example_copy)
    code, _, err = sitegen(*(a.format(review=example_copy, text=f"Embase{char}Ovid") for a in arguments))
    assert code == 2 and f"Invalid value for '{option}': holds U+{ord(char):04X}, a line break or tab" in err, err
    assert "nothing was written" in err and "Traceback" not in err
    assert tree_bytes(example_copy) == before


def test_a_ledger_event_written_before_the_rule_still_loads(sitegen, tmp_path, monkeypatch):
    # The ledger is append-only: a reason sitegen wrote before the rule (only `printable` then) is read as it is.
    from sitegen.living import protocol

    review = tmp_path / "review"
    sitegen("init", review)
    monkeypatch.setattr(protocol, "given_text", lambda value, option, limit: printable(value.strip()))
    reason = f"agreed {RLO}edulcni{PDF} after all"
    assert sitegen("protocol", "lock", review, "--at", "2023-01-01T00:00:00Z", "--reason", reason)[0] == 0
    monkeypatch.undo()
    assert reason in (review / "ledger.jsonl").read_text(encoding="utf-8")
    code, out, err = sitegen("check", review)
    assert code == 0, out + err


# Markdown a page renders (a review's title and question, the protocol's text): a character reference is shown as the
# character it names, so a reference to an invisible format character is that character, written unseen.
MARKDOWN_FIELDS = ("review.yaml title", "review.yaml question", "protocol text")


@pytest.mark.parametrize("reference", ["&#x202E;", "&#8238;", "&rlm;", "&ZeroWidthSpace;", "&#X2066;"])
@pytest.mark.parametrize("field", MARKDOWN_FIELDS)
def test_a_character_reference_to_an_invisible_character_in_markdown_is_refused(sitegen, example_copy, field,
                                                                                  reference):
    plant, _ = FIELDS[field]
    rel = plant(example_copy, f"agreed {reference}edulcni after all")
    lines = (example_copy / rel).read_text(encoding="utf-8").splitlines()
    line = next(n for n, written in enumerate(lines, start=1) if reference in written)
    while rel.endswith(".yaml") and ":" not in lines[line - 1].split(reference)[0]:  # placed at a folded value's key
        line -= 1
    before = tree_bytes(example_copy)
    code, out, err = sitegen("check", example_copy)
    assert code == 1 and "Traceback" not in out + err, out + err
    assert any(row.startswith(f"{example_copy}/{rel}:{line}:") and reference in row and "invisible character" in row
               for row in out.splitlines()), out
    assert tree_bytes(example_copy) == before


@pytest.mark.parametrize("field", MARKDOWN_FIELDS)
def test_character_references_to_visible_characters_and_joiners_are_accepted(sitegen, example_copy, field):
    plant, _ = FIELDS[field]
    plant(example_copy, "caf&eacute; &amp; &#x41;&#66; &lt;b&gt; &zwnj; `&#x202E;`&foo;")
    code, out, err = sitegen("check", example_copy)
    assert "invisible" not in out + err, out + err


def garbled(text: str) -> str:
    """`text` as Excel on Windows leaves it: its UTF-8 read as Windows-1252 (the five bytes it leaves undefined as
    Latin-1 reads them), then saved as "CSV UTF-8"."""
    return "".join(bytes([byte]).decode("cp1252", "ignore") or chr(byte) for byte in text.encode("utf-8"))


# An evidence passage is a source's words copied verbatim: a provider's abstract may itself be garbled so.
WRITTEN_FIELDS = [field for field in FIELDS if field != "evidence passage"]


@pytest.mark.parametrize("field", WRITTEN_FIELDS)
def test_text_encoded_twice_in_a_reviewers_text_is_refused_saying_what_was_meant(sitegen, example_copy, field):
    plant, _ = FIELDS[field]
    text = f"the authors{garbled('’')} cohort per Müller {garbled('–')} {garbled('café')}"
    rel = plant(example_copy, text)
    lines = (example_copy / rel).read_text(encoding="utf-8").splitlines()
    line = next(n for n, written in enumerate(lines, start=1) if "â€™" in written)
    while rel.endswith(".yaml") and ":" not in lines[line - 1].split("â€™")[0]:
        line -= 1
    before = tree_bytes(example_copy)
    code, out, err = sitegen("check", example_copy)
    assert code == 1 and "Traceback" not in out + err, out + err
    found = [row for row in out.splitlines() if row.startswith(f"{example_copy}/{rel}:{line}:")
             and "'authorsâ€™' at character" in row and "is 'authors’' garbled" in row and "Windows-1252" in row]
    assert found, f"{rel}:{line} not reported:\n{out}"
    assert tree_bytes(example_copy) == before


def test_a_passage_copying_a_source_garbled_so_is_accepted_as_its_words(sitegen, example_copy):
    # Crossref's abstracts are often garbled so ("authorsâ€™"): the passage quoting one must match it, not be mended
    plant, _ = FIELDS["evidence passage"]
    plant(example_copy, f"the authors{garbled('’')} cohort")
    code, out, err = sitegen("check", example_copy)
    assert "garbled" not in out + err, out + err


@pytest.mark.parametrize("meant", ["don’t", "café", "≥", "µg/kg", "α-synuclein", "€5", "日本語", "Привет", "Ελληνικά",
                                   "Łódź", "naïve", "São", "Müller", "Gdańsk", "“quoted”", "Á", "ÝÐÏÍ"])
def test_text_encoded_twice_once_or_twice_is_refused_naming_the_text_meant(meant):
    for written in (garbled(meant), garbled(garbled(meant))):
        with pytest.raises(ValueError, match=f"is {re.escape(repr(meant))} garbled"):
            hand_written(f"as {written} said")


@pytest.mark.parametrize("text", [
    "Müller, São Paulo, naïve, Straße, Łódź, Ærø, Øresund, Ångström, Ça va, Œuvre, İstanbul, Dvořák",
    "日本語のテキスト, 中文, 한국어", "Ελληνικά: α-synuclein, β-amyloid", "Привет, мир", "≥ 10 µg/kg – 5 € — “ok” …",
    # An accented capital before a closing quote, a no-break space or an ellipsis re-encodes into valid UTF-8 as
    # one character nobody writes in such text: read as written.
    "JOSÉ’S", "ESPAÑA”", "ÉTÉ\u00a0!", "« OUI\u00a0»", "café…”", "Gruß…",
])
def test_names_and_scripts_written_as_meant_are_not_taken_for_text_encoded_twice(text):
    assert hand_written(text) == text
