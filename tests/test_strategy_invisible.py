"""An invisible format character in a saved strategy's query (a zero-width space, a direction override, a soft
hyphen) was accepted and sent to the provider, which then searched for something other than what the reviewer
sees. A native query, sent as written, refuses each with its position; sitegen's grammar reads the ones it knows
(soft hyphen, zero-width space, direction marks and controls) as nothing and refuses the others, naming the
position; the joiners, which spell Persian and Indic words, are kept either way."""

from __future__ import annotations

import json

import pytest
from conftest import tree_bytes
from pydantic import ValidationError
from test_check import check_reports

from sitegen.review.models import Strategy
from sitegen.sources.query import QuerySyntaxError, provider_query

INVISIBLE = {"zero-width space": "\u200b", "right-to-left override": "\u202e", "left-to-right isolate": "\u2066",
             "soft hyphen": "\u00ad", "word joiner": "\u2060", "byte-order mark": "\ufeff",
             "right-to-left mark": "\u200f", "invisible separator": "\u2063"}
SEARCH = "reviews/object-in-context/searches/object-in-context.json"
EXIT_USAGE = 2


@pytest.mark.parametrize("char", INVISIBLE.values(), ids=INVISIBLE.keys())
def test_a_native_strategy_holding_an_invisible_character_is_refused_naming_it_and_its_place(char):
    with pytest.raises(ValidationError) as caught:
        Strategy(source="pubmed", query=f"CRISPR{char} off-target")
    assert f"query, character 7: invisible character U+{ord(char):04X}" in str(caught.value)
    with pytest.raises(QuerySyntaxError) as refused:  # what `sitegen search --native` and `check` send it through
        provider_query("pubmed", f"CRISPR{char} off-target", native=True)
    assert (refused.value.position, refused.value.code) == (7, "invisible")


@pytest.mark.parametrize("char", ["\u200b", "\u202e", "\u00ad", "\u200f"])
def test_a_sitegen_strategy_reads_the_invisible_characters_the_grammar_knows_as_nothing(char):
    strategy = Strategy(source="pubmed", query=f"CRISPR{char} AND off-target", syntax="sitegen")
    assert provider_query("pubmed", strategy.query, native=False) == provider_query(
        "pubmed", "CRISPR AND off-target", native=False)


def test_a_sitegen_strategy_refuses_an_invisible_character_the_grammar_gives_no_meaning():
    strategy = Strategy(source="pubmed", query="heart\u2063attack", syntax="sitegen")
    with pytest.raises(QuerySyntaxError) as refused:
        provider_query("pubmed", strategy.query, native=False)
    assert (refused.value.position, refused.value.code) == (6, "invisible")


@pytest.mark.parametrize("syntax", ["native", "sitegen"])
def test_the_joiners_that_spell_a_word_are_kept_in_a_query(syntax):
    query = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # Persian, spelt with a zero-width non-joiner
    assert Strategy(source="europepmc", query=query, syntax=syntax).query == query
    assert provider_query("europepmc", query, native=syntax == "native")


def test_check_names_the_saved_search_file_and_line_of_a_native_query_holding_one(sitegen, example_copy):
    path = example_copy / "searches" / "object-in-context.json"
    search = json.loads(path.read_text(encoding="utf-8"))
    search["strategies"][0]["query"] = "\"object\u200bin context\""
    path.write_text(json.dumps(search, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    check_reports(sitegen, example_copy, "searches/object-in-context.json", 5,
                  "query, character 8: invisible character U+200B (ZERO WIDTH SPACE)")


@pytest.mark.parametrize(("args", "said"), [
    (["--strategy", "pubmed", "CRISPR\u200b off-target"], "query, character 7: invisible character U+200B"),
    (["--strategy", "pubmed", "CRISPR \u202eoff-target"], "query, character 8: invisible character U+202E"),
    (["--syntax", "sitegen", "--strategy", "pubmed", "heart\u2063attack"], "position 6: invisible formatting"),
])
def test_monitor_add_refuses_a_query_holding_one_before_anything_is_sent_or_written(sitegen, example_copy, args, said):
    before = tree_bytes(example_copy)
    code, printed, err = sitegen("monitor", "add", example_copy, "--id", "invisible", *args,
                                 "--at", "2026-06-01T00:00:00Z", "--snapshots", "replay")
    assert (code, printed) == (EXIT_USAGE, ""), err
    assert said in err, err
    assert tree_bytes(example_copy) == before


def test_search_native_refuses_a_query_holding_one_naming_its_position(sitegen, example_copy):
    code, _, err = sitegen("search", "CRISPR\u200b off-target", "--native", "--snapshots", "replay", "--review",
                           example_copy)
    assert code == EXIT_USAGE
    assert "query position 7: invisible character U+200B (ZERO WIDTH SPACE)" in err, err
