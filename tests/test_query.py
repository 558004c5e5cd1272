"""The search-query grammar, its canonical text and the provider compilers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.sources.query import _TYPOGRAPHIC as _TYPOGRAPHIC_FORMS
from sitegen.sources.query import (
    And,
    Node,
    Not,
    Or,
    QuerySyntaxError,
    Term,
    UnsupportedQuery,
    compile_arxiv,
    compile_crossref,
    compile_europepmc,
    compile_openalex,
    compile_pubmed,
    parse_query,
    to_text,
)

COMPILERS = (compile_openalex, compile_europepmc, compile_pubmed, compile_arxiv, compile_crossref)

a, b, c, d = (Term(letter) for letter in "abcd")


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("a b OR c", Or((And((a, b)), c))),
        ("a OR b c", Or((a, And((b, c))))),
        ("a AND b OR c AND d", Or((And((a, b)), And((c, d))))),
        ("NOT a AND b", And((Not(a), b))),
        ("a NOT b", And((a, Not(b)))),
        ("a AND NOT b OR c", Or((And((a, Not(b))), c))),
        ("NOT NOT a", Not(Not(a))),
        ("a (b OR c)", And((a, Or((b, c))))),
        ("a AND (b AND c)", And((a, b, c))),
        ("(a OR b) OR (c OR d)", Or((a, b, c, d))),
        ("((a))", a),
        ("a\tAND\nb", And((a, b))),
        ('cancer "and" "or" "not"', And((Term("cancer"), Term("and", phrase=True), Term("or", phrase=True),
                                         Term("not", phrase=True)))),
        ("Nature Cancer", And((Term("Nature"), Term("Cancer")))),
    ],
)
def test_precedence_adjacency_and_flattening(query, expected):
    assert parse_query(query) == expected


def test_phrases_and_escapes():
    assert parse_query('"heart failure"') == Term("heart failure", None, True)
    assert parse_query(r'"say \"hi\" \\ now"') == Term('say "hi" \\ now', None, True)
    assert parse_query('"AND"') == Term("AND", None, True)
    assert parse_query('x"y z"') == And((Term("x"), Term("y z", None, True)))
    assert parse_query(r"back\slash") == Term("back\\slash")  # escapes exist only inside quotes


def test_field_prefixes():
    assert parse_query('title:"object in context"') == Term("object in context", "title", True)
    assert parse_query("author:smith") == Term("smith", "author")
    assert parse_query("ABSTRACT:Memory") == Term("Memory", "abstract")
    assert parse_query("title:AND") == Term("AND", "title")
    assert parse_query("title:author:x") == Term("author:x", "title")
    assert parse_query("NOT title:x y") == And((Not(Term("x", "title")), Term("y")))


def test_colons_that_are_not_field_prefixes():
    assert parse_query("10.1000/abc:def") == Term("10.1000/abc:def")
    assert parse_query("12:30") == Term("12:30")
    assert parse_query("x2:y") == Term("x2:y")
    assert parse_query("Background: memory") == And((Term("Background:"), Term("memory")))
    assert parse_query('"journal:Nature"') == Term("journal:Nature", None, True)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("query", "code", "position", "end"),
    [
        ('heart failure "left ventricular', "quote", 15, 16),
        ('"a" "', "quote", 5, 6),
        ('""', "quote", 1, 3),
        ('"a \\q b"', "escape", 4, 6),
        ("a OR b)", "group", 7, 8),
        (") a", "group", 1, 2),
        ("( a", "group", 1, 2),
        ("(", "group", 1, 2),
        ("()", "group", 1, 3),
        ("a ( ) b", "group", 3, 6),
        ("a AND", "operator", 3, 6),
        ("AND a", "operator", 1, 4),
        ("OR", "operator", 1, 3),
        ("NOT", "operator", 1, 4),
        ("a NOT", "operator", 3, 6),
        ("a AND OR b", "operator", 7, 9),
        ("(OR a)", "operator", 2, 4),
        ("(a AND)", "operator", 4, 7),
        ("NOT cancer", "operator", 1, 4),
        ("NOT a AND NOT b", "operator", 1, 4),
        ("a OR NOT b", "operator", 6, 9),
        ("journal:Nature", "field", 1, 9),
        ('journal:"Nature"', "field", 1, 9),
        ("title:(a OR b)", "field", 1, 8),
        ("x title: y", "field", 3, 9),
        ("cancer[tiab]", "field", 7, 13),
        ('"heart failure"[mh] x', "field", 16, 20),
        ('"x"[MeSH Terms]', "field", 4, 9),
        ("a ANDNOT b", "operator", 3, 9),
        ("abc\x07def", "control", 4, 5),
        ("a\x00", "control", 2, 3),
        ("", "empty", 1, 1),
        (" \t\n ", "empty", 1, 5),
    ],
)
def test_error_positions(query, code, position, end):
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query(query)
    assert (caught.value.code, caught.value.position, caught.value.end) == (code, position, end)
    assert str(caught.value).startswith(f"position {position}: ")


def test_other_providers_syntax_is_an_error_not_text_to_search_for():
    # Sent as text, cancer[tiab] "heart failure"[mh] searched every provider for the letters of the tags, and
    # a ANDNOT b for documents holding the word ANDNOT.
    with pytest.raises(QuerySyntaxError, match=r"\[mh\] looks like a PubMed field tag.*--native"):
        parse_query('"heart failure"[mh]')
    with pytest.raises(QuerySyntaxError, match="ANDNOT is arXiv's operator; sitegen's is NOT"):
        parse_query("a ANDNOT b")
    # Quoted, or a bracket that is no tag, they are text.
    assert parse_query('"cancer[tiab]" "ANDNOT"') == And((Term("cancer[tiab]", phrase=True), Term("ANDNOT", phrase=True)))
    assert parse_query("[18F]FDG") == Term("[18F]FDG")


@pytest.mark.parametrize(
    ("query", "position", "end", "message"),
    [
        # The Cochrane Handbook's highly sensitive filter as written for Ovid MEDLINE: "a or b" was a AND "or" AND b.
        ("((randomized controlled or controlled clinical or randomized.ab. or placebo.ab.) not (exp animals/ not "
         "humans.sh.))", 25, 27, "or is a lowercase operator (Ovid's, Embase's); sitegen's are upper case"),
        ("sleep and (children OR adolescents)", 7, 10, "and is a lowercase operator"),
        ("cancer not review", 8, 11, "not is a lowercase operator"),
        # Cochrane Library and Ovid proximity, and Cochrane's numbered lines: each was a word to search for.
        ("(heart NEAR/3 attack) OR infarction", 8, 14, "NEAR/3 is a proximity operator"),
        ("heart NEXT attack", 7, 11, "NEXT is a proximity operator"),
        ("smoking adj3 cessation", 9, 13, "adj3 is a proximity operator"),
        ('"heart attack" W/3 aspirin', 16, 19, "W/3 is a proximity operator"),
        ("#1 OR #2 OR #3", 1, 3, "#1 is a reference to a numbered search line"),
    ],
)
def test_other_databases_operators_are_an_error_not_words_to_search_for(query, position, end, message):
    refused = _refused_where_it_stands(query, "operator", position, end, message)
    assert "double quotes to search for the word" in str(refused)
    # Quoted, the same words are text; a word that merely holds the letters is a word.
    assert parse_query('"or" "NEAR/3" "#1" orange notch') == And(
        (Term("or", phrase=True), Term("NEAR/3", phrase=True), Term("#1", phrase=True), Term("orange"), Term("notch")))


@pytest.mark.parametrize(
    ("query", "code", "position", "end", "message"),
    [
        # Ovid MEDLINE: each suffix, heading and truncation was a word to search for ("attack.tw.", "Infarction/").
        ("heart attack.tw. OR cardiac", "field", 13, 17, ".tw. in attack.tw. is an Ovid field suffix"),
        ("(heart attack).ti,ab.", "field", 15, 22, ".ti,ab. is an Ovid field suffix"),
        ("exp Myocardial Infarction/ OR aspirin", "field", 26, 27, "/ in Infarction/ is the mark of a subject heading"),
        ("child$ OR infant", "wildcard", 6, 7, "$ in child$ is a wildcard or truncation"),
        # Cochrane Library (CENTRAL) and Embase.com.
        ('("heart attack" OR "myocardial infarction"):ti,ab,kw', "field", 44, 53,
         ":ti,ab,kw is a Cochrane Library or Embase field suffix"),
        ("aspirin OR 'heart attack'/exp", "quote", 12, 13, "' in 'heart is Embase's quote for a phrase"),
        ("aspirin OR attack'/exp", "field", 19, 23, "/exp in attack'/exp is the mark of a subject heading"),
        ("aspirin OR infarction':ti,ab", "field", 23, 29, ":ti,ab in infarction':ti,ab is a Cochrane Library or Embase"),
        # Scopus and Web of Science: the field's name was a word to search for ("TITLE-ABS-KEY" AND "heart attack").
        ('TITLE-ABS-KEY("heart attack") AND aspirin', "field", 1, 15, "TITLE-ABS-KEY( is a Scopus field"),
        ("aspirin OR TS=(heart AND attack)", "field", 12, 15, "TS= is a Web of Science field tag"),
        ("AU=Smith", "field", 1, 4, "AU= is a Web of Science field tag"),
        # Europe PMC's own fields hold '_': PUB_YEAR:[2010 was a word
        ('TITLE:"heart attack" AND PUB_YEAR:[2010 TO 2020]', "field", 26, 35, "unknown field PUB_YEAR:"),
    ],
)
def test_other_databases_term_syntax_is_an_error_not_text_to_search_for(query, code, position, end, message):
    refused = _refused_where_it_stands(query, code, position, end, message)
    assert "double quotes to search for" in str(refused)


def _refused_where_it_stands(query: str, code: str, position: int, end: int, message: str) -> QuerySyntaxError:
    """The error `query` is refused with, checked to say `message` of the span [position, end) as `code`."""
    with pytest.raises(QuerySyntaxError, match=re.escape(message)) as caught:
        parse_query(query)
    assert (caught.value.code, caught.value.position, caught.value.end) == (code, position, end)
    return caught.value


def test_words_like_other_databases_syntax_stay_words():
    assert parse_query("HIV/AIDS U.S. e.g. patients' 10.1000/abc:def") == And(
        (Term("HIV/AIDS"), Term("U.S."), Term("e.g."), Term("patients'"), Term("10.1000/abc:def")))
    # a word before a group, and a ratio, are words: only a Scopus field's name touching its '(' is the field
    assert parse_query("key (words) OR=1.5 HR=0.8") == And(
        (Term("key"), Term("words"), Term("OR=1.5"), Term("HR=0.8")))
    assert parse_query('"attack.tw." "Infarction/" "child$" ":ti,ab"') == And(
        tuple(Term(text, phrase=True) for text in ("attack.tw.", "Infarction/", "child$", ":ti,ab")))


@pytest.mark.parametrize(("query", "position", "word"), [
    ("randomi?ed AND trial", 8, "randomi?ed"),
    # Providers drop a '?' from a phrase too: "canc? therapy" searched for "canc therapy".
    ('"canc? therapy"', 6, "canc?"),
    ('sleep AND title:"behavio?r change"', 25, "behavio?r"),
    ('"wom?n"', 5, "wom?n"),
    ('"canc?"', 6, "canc?"),  # a phrase of one word is no question
    ('"is it safe?" AND "tumo?r"', 24, "tumo?r"),
    ('"Is exercise safe?A review"', 18, "safe?A"),  # a letter follows: inside a word
    ('title:"behaviour canc?r therapy"', 22, "canc?r"),
])
def test_a_question_mark_wildcard_is_an_error_in_quotes_or_not(query, position, word):
    with pytest.raises(QuerySyntaxError, match=re.escape(f"? in {word} is a wildcard (Cochrane's ?")) as caught:
        parse_query(query)
    assert (caught.value.code, caught.value.position, caught.value.end) == ("wildcard", position, position + 1)
    assert "write out each form of the word" in str(caught.value)


def test_a_question_mark_that_is_punctuation_in_a_phrase_is_text():
    assert parse_query('"is it safe?"') == Term("is it safe?", phrase=True)
    assert parse_query('title:"est-ce sûr ?" OR "sûr ? une revue"') == Or(
        (Term("est-ce sûr ?", "title", True), Term("sûr ? une revue", phrase=True)))
    # A question of several words ending before more words, as in a title pasted whole, was refused as a wildcard.
    assert parse_query('"Is exercise safe? A review" OR title:"does it work? results of a trial"') == Or(
        (Term("Is exercise safe? A review", phrase=True), Term("does it work? results of a trial", "title", True)))


def test_a_dollar_sign_is_truncation_outside_quotes_and_text_inside_them():
    # Ovid's truncation pasted unquoted (child$) is refused where it stands; in quotes a $ is a currency's sign or
    # a lone symbol, which no provider reads as syntax, whether it ends a word, starts one or stands apart.
    _refused_where_it_stands("cost in US$ OR price", "wildcard", 11, 12, "$ in US$ is a wildcard or truncation")
    assert parse_query('"cost $ per patient" OR "US$" OR title:"US$100 a year"') == Or(
        (Term("cost $ per patient", phrase=True), Term("US$", phrase=True), Term("US$100 a year", "title", True)))


def test_error_messages_say_what_to_do():
    with pytest.raises(QuerySyntaxError, match=r'^position 15: unclosed quote \("\) starting here$'):
        parse_query('heart failure "left ventricular')
    with pytest.raises(QuerySyntaxError, match="title:, abstract: and author:"):
        parse_query("journal:Nature")
    with pytest.raises(QuerySyntaxError, match="repeat it on each term"):
        parse_query("title:(a OR b)")
    with pytest.raises(QuerySyntaxError, match="NOT needs something to exclude from"):
        parse_query("NOT cancer")


def test_limits():
    assert parse_query("x" * 4096) == Term("x" * 4096)
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query("x" * 4097)
    assert (caught.value.code, caught.value.position) == ("length", 4097)

    assert isinstance(parse_query(" ".join(["a"] * 200)), And)
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query(" ".join(["a"] * 201))
    assert (caught.value.code, caught.value.position, caught.value.end) == ("complexity", 401, 402)

    assert parse_query("(" * 16 + "a" + ")" * 16) == a
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query("(" * 17 + "a" + ")" * 17)
    assert (caught.value.code, caught.value.position) == ("complexity", 17)


def test_canonical_text_must_fit_the_length_limit():
    # Two adjacent phrases filling 4096 characters need one more, a space, when written canonically.
    packed = '"' + "a" * 2046 + '""' + "b" * 2046 + '"'
    assert len(packed) == 4096
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query(packed)
    assert caught.value.code == "length"


# --------------------------------------------------------------------------- canonical text


ROUND_TRIP_QUERIES = [
    "a b OR c",
    "(a OR b) (c OR d) NOT (e f)",
    'title:"object in context" OR abstract:"novel object" author:smith',
    r'"quote \" and backslash \\" x',
    "NOT NOT a",
    "a AND NOT (b OR NOT c)",
    "((((a OR b))))",
    "10.1000/abc:def Background: \"and\" \"or\" \"not\"",
    "title:AND ABSTRACT:x:y",
    '(a OR b)c "p""q" NOT(x)',
    "a OR (b (c OR (d (e OR f))))",
]


@pytest.mark.parametrize("query", ROUND_TRIP_QUERIES)
def test_round_trip(query):
    node = parse_query(query)
    assert parse_query(to_text(node)) == node


def test_canonical_form():
    assert to_text(parse_query("a AND b OR (c AND NOT d)")) == "a b OR c NOT d"
    assert to_text(parse_query("(a OR b) AND NOT (c OR d)")) == "(a OR b) NOT (c OR d)"
    assert to_text(parse_query('TITLE:"x \\" y" Author:z')) == 'title:"x \\" y" author:z'


# The parser reads a typographic form of its own characters (a curly quote, a non-breaking hyphen) as that character
# and refuses other invisible ones, so no tree it gives holds one.
_TYPOGRAPHIC = "".join(_TYPOGRAPHIC_FORMS)
_WORD_CHARS = st.characters(exclude_categories=("Cc", "Cs", "Cf"), exclude_characters='()"' + _TYPOGRAPHIC).filter(
    lambda c: not c.isspace())
_PHRASE_CHARS = (st.characters(exclude_categories=("Cc", "Cs", "Cf"), exclude_characters=_TYPOGRAPHIC)
                 | st.sampled_from("\t\n\r"))
_FIELDS = st.sampled_from([None, "title", "abstract", "author"])


@st.composite
def terms(draw) -> Term:
    field = draw(_FIELDS)
    if draw(st.booleans()):
        # A phrase holds any character but '*' and '?', wildcards the grammar refuses even in quotes (PubMed
        # truncates at '*' there; a '?' is refused unless it is plainly a question mark).
        # Its words are one space apart, as the parser reads them, and one of them has a letter or a digit.
        phrases = st.text(_PHRASE_CHARS, min_size=1, max_size=10).map(lambda p: " ".join(p.split())).filter(
            lambda p: "*" not in p and "?" not in p and any(char.isalnum() for char in p))
        return Term(draw(phrases), field, True)
    words = st.text(_WORD_CHARS, min_size=1, max_size=8)
    if field is None:  # a bare all-fields word must not read as an operator or a field prefix
        words = words.filter(lambda w: w not in ("AND", "OR", "NOT") and not re.match("[A-Za-z]+:", w))
    # Nor as another provider's syntax the grammar refuses ("[A" is a PubMed field tag's start, ANDNOT arXiv's
    # operator): the parser never gives such a term, so no tree holds one.
    return Term(draw(words.filter(lambda w: not _refused(w))), field, False)


def _refused(word: str) -> bool:
    try:
        parse_query(word)
    except QuerySyntaxError:
        return True
    return False


trees = st.recursive(
    terms(),
    lambda children: st.one_of(
        children.map(Not),
        st.lists(children, min_size=2, max_size=4).map(lambda nodes: And(tuple(nodes))),
        st.lists(children, min_size=2, max_size=4).map(lambda nodes: Or(tuple(nodes))),
    ),
    max_leaves=12,
)


def _flattened(node: Node) -> Node:
    if isinstance(node, Term):
        return node
    if isinstance(node, Not):
        return Not(_flattened(node.child))
    children: list[Node] = []
    for child in map(_flattened, node.children):
        children.extend(child.children if type(child) is type(node) else (child,))
    return type(node)(tuple(children))


def _matches_something(node: Node) -> bool:
    if isinstance(node, Term):
        return True
    if isinstance(node, Not):
        return not _matches_something(node.child)
    if isinstance(node, And):
        return any(map(_matches_something, node.children))
    return all(map(_matches_something, node.children))


@settings(max_examples=200, deadline=None)
@given(trees)
def test_round_trip_of_any_tree(tree):
    if not _matches_something(tree):  # parse_query refuses a query that only excludes
        tree = And((Term("anchor"), tree))
    assert parse_query(to_text(tree)) == _flattened(tree)


def _compile_all(node: Node) -> None:
    for compiler in COMPILERS:
        try:
            compiler(node)
        except UnsupportedQuery:
            pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_parses_or_raises_syntax_error(text):
    try:
        node = parse_query(text)
    except QuerySyntaxError as error:
        assert 1 <= error.position <= error.end <= len(text) + 1
        return
    assert parse_query(to_text(node)) == node
    _compile_all(node)


_QUERY_PIECES = st.sampled_from(
    ["a", "b", "AND", "OR", "NOT", "(", ")", '"x y"', "title:c", 'author:"d e"', "abstract:f", "g,h", "10.1/x:y"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_QUERY_PIECES, st.sampled_from(["", " "])), max_size=25))
def test_query_like_text_round_trips_and_compiles(pieces):
    text = "".join(piece + gap for piece, gap in pieces)
    try:
        node = parse_query(text)
    except QuerySyntaxError:
        return
    assert parse_query(to_text(node)) == node
    _compile_all(node)


# --------------------------------------------------------------------------- compilers


def test_openalex():
    assert compile_openalex(parse_query('(elmo "sesame street") NOT (cookie OR monster)')) == {
        "search": 'elmo AND "sesame street" AND NOT (cookie OR monster)'
    }
    assert compile_openalex(parse_query("covid-19 children's U.S. e_mail")) == {
        "search": """"covid-19" AND children's AND U.S. AND "e_mail\""""
    }
    assert compile_openalex(parse_query('title:"object recognition" OR title:memory')) == {
        "filter": 'title.search:"object recognition" OR memory'
    }
    assert compile_openalex(parse_query("abstract:rat NOT abstract:mouse")) == {
        "filter": "abstract.search:rat AND NOT mouse"
    }
    assert compile_openalex(parse_query("author:Bussey")) == {"filter": "raw_author_name.search:Bussey"}


def test_openalex_quotes_what_would_otherwise_be_syntax():
    assert compile_openalex(parse_query("-y +z 10.1/x:y")) == {"search": '"-y" AND "+z" AND "10.1/x:y"'}
    assert compile_openalex(parse_query("title:OR title:and")) == {"filter": 'title.search:"OR" AND and'}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("title:memory rat", "cannot combine different fields"),
        ("title:memory author:smith", "cannot combine different fields"),
        ("title:a,b", "','"),
        ('title:"a | b"', "'|'"),
        ('"say \\"hi\\""', "'\"'"),
        ("a (b OR NOT c)", "NOT c"),
    ],
)
def test_openalex_refusals(query, message):
    with pytest.raises(UnsupportedQuery, match=re.escape(message)) as caught:
        compile_openalex(parse_query(query))
    assert caught.value.provider == "openalex"


def test_openalex_search_allows_commas():
    assert compile_openalex(parse_query("a,b")) == {"search": '"a,b"'}


def test_europepmc():
    query = 'title:"object in context" (abstract:rat OR author:"Bussey TJ") NOT (mouse OR monkey)'
    assert compile_europepmc(parse_query(query)) == (
        'TITLE:"object in context" AND (ABSTRACT:"rat" OR AUTH:"Bussey TJ") AND NOT ("mouse" OR "monkey")'
    )
    assert compile_europepmc(parse_query("a NOT b")) == '"a" AND NOT "b"'
    assert compile_europepmc(parse_query("a b OR c")) == '("a" AND "b") OR "c"'


@pytest.mark.parametrize(("query", "message"), [('"a \\" b"', "'\"'"), ("a\\b", "'\\'"), ("x (a OR NOT b)", "NOT b")])
def test_europepmc_refusals(query, message):
    with pytest.raises(UnsupportedQuery, match=re.escape(message)) as caught:
        compile_europepmc(parse_query(query))
    assert caught.value.provider == "europepmc"


def test_pubmed():
    assert compile_pubmed(parse_query('title:"object recognition" author:Bussey memory')) == (
        '"object recognition"[ti] AND Bussey[au] AND "memory"[All Fields]'
    )
    assert compile_pubmed(parse_query("a NOT b c")) == '("a"[All Fields] AND "c"[All Fields]) NOT "b"[All Fields]'
    assert compile_pubmed(parse_query("(a OR b) NOT c NOT d")) == (
        '("a"[All Fields] OR "b"[All Fields]) NOT ("c"[All Fields] OR "d"[All Fields])'
    )
    assert compile_pubmed(parse_query("a NOT b OR c")) == '("a"[All Fields] NOT "b"[All Fields]) OR "c"[All Fields]'


def test_pubmed_author_names_keep_their_further_initials():
    # In quotes, "Bussey"[au] is an author named Bussey with no initials at all, so author:Bussey found almost
    # nothing in PubMed while Europe PMC, OpenAlex and arXiv found Bussey TJ's papers. Unquoted, PubMed matches a
    # name's further initials, as its help describes.
    assert compile_pubmed(parse_query("author:Bussey")) == "Bussey[au]"
    assert compile_pubmed(parse_query('author:"Bussey TJ" OR author:"O\'Brien J" OR author:"van der  Berg A"')) == (
        "Bussey TJ[au] OR O'Brien J[au] OR van der Berg A[au]"
    )
    assert compile_pubmed(parse_query('author:"Sjögren-Larsson K" memory')) == (
        'Sjögren-Larsson K[au] AND "memory"[All Fields]'
    )


@pytest.mark.parametrize("name", ['author:"Jones OR"', 'author:"Smith (J)"', 'author:"Smith J, 2nd"', "author:x[1]"])
def test_pubmed_refuses_an_author_name_it_would_read_as_syntax(name):
    with pytest.raises(UnsupportedQuery, match="as an author") as caught:
        compile_pubmed(parse_query(name))
    assert caught.value.provider == "pubmed"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("abstract:rat", "no abstract-only field"),
        ("x (a OR NOT b)", "PubMed's NOT is binary"),
        ("x NOT NOT b", "PubMed's NOT is binary"),
        ("x (a OR NOT b NOT c)", "PubMed's NOT is binary"),
        ('"a \\" b"', "'\"'"),
    ],
)
def test_pubmed_refusals(query, message):
    with pytest.raises(UnsupportedQuery, match=re.escape(message)) as caught:
        compile_pubmed(parse_query(query))
    assert caught.value.provider == "pubmed"


def test_arxiv():
    assert compile_arxiv(parse_query('title:"quantum criticality" abstract:spin author:Smith electron')) == (
        'ti:"quantum criticality" AND abs:spin AND au:Smith AND all:electron'
    )
    assert compile_arxiv(parse_query("a NOT b")) == "all:a ANDNOT all:b"
    assert compile_arxiv(parse_query("(a OR b) c NOT d")) == "((all:a OR all:b) AND all:c) ANDNOT all:d"
    assert compile_arxiv(parse_query("10.1/x:y title:ANDNOT")) == 'all:"10.1/x:y" AND ti:"ANDNOT"'


@pytest.mark.parametrize(("query", "message"), [("x (a OR NOT b)", "ANDNOT"), ("a\\b", "'\\'")])
def test_arxiv_refusals(query, message):
    with pytest.raises(UnsupportedQuery, match=re.escape(message)) as caught:
        compile_arxiv(parse_query(query))
    assert caught.value.provider == "arxiv"


def test_crossref():
    assert compile_crossref(parse_query("memory")) == {"query.bibliographic": "memory"}
    assert compile_crossref(parse_query('"ecology"')) == {"query.bibliographic": "ecology"}
    assert compile_crossref(parse_query("author:Bussey")) == {"query.author": "Bussey"}
    assert compile_crossref(parse_query("Sjögren")) == {"query.bibliographic": "Sjögren"}


def test_a_term_ending_with_a_full_stop_is_its_word_to_every_provider():
    # A word copied from a sentence (mice.) went to four providers, whose analysers drop the full stop, and was
    # refused by Crossref as "a word joined by punctuation", which it is not: Crossref strips punctuation too.
    for query in ("mice.", '"mice."'):
        assert compile_crossref(parse_query(query)) == {"query.bibliographic": "mice"}
    assert compile_crossref(parse_query("author:Bussey.")) == {"query.author": "Bussey"}
    assert compile_crossref(parse_query("Background:")) == {"query.bibliographic": "Background"}
    node = parse_query('mice. "et al."')
    assert compile_pubmed(node) == '"mice."[All Fields] AND "et al."[All Fields]'
    assert compile_europepmc(node) == '"mice." AND "et al."'
    assert compile_openalex(node) == {"search": 'mice. AND "et al."'}
    assert compile_arxiv(node) == 'all:mice. AND all:"et al."'
    # A full stop within the word splits it there, into words Crossref would search as any of them.
    for query in ("U.S.", '"et al."', "e.g."):
        with pytest.raises(UnsupportedQuery, match="matching any of them"):
            compile_crossref(parse_query(query))


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("a OR b", "cannot express OR"),
        ("a NOT b", "cannot express NOT"),
        ("title:memory", "no title or abstract query"),
        ("abstract:memory", "no title or abstract query"),
    ],
)
def test_crossref_refusals(query, message):
    with pytest.raises(UnsupportedQuery, match=message) as caught:
        compile_crossref(parse_query(query))
    assert caught.value.provider == "crossref"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        # Crossref returns works matching any of a query's words, and of its field queries (its staff: "our REST
        # API does not support boolean operators, so you are performing more of an OR search"): each of these was
        # sent and searched as a OR b, a broader search than written, without a word said.
        ('"object-in-context" AND rat', "cannot express AND"),
        ("memory author:Bussey", "cannot express AND"),
        ('"heart attack"', "matching any of them"),
        ('author:"Bussey TJ"', "matching any of them"),
        ("COVID-19", "matching any of them"),
    ],
)
def test_crossref_refuses_what_it_would_search_as_any_of_the_words(query, message):
    with pytest.raises(UnsupportedQuery, match=message) as caught:
        compile_crossref(parse_query(query))
    assert caught.value.provider == "crossref"


@pytest.mark.parametrize(("query", "position"), [("child* AND sleep", 6), ('sleep "e-cigarette*"', 19),
                                              ('title:"smok*"', 12), ("a OR author:Sm*th", 15),
                                              ('"heart attack*"', 14)])
def test_truncation_is_an_error_naming_where_it_stands(query, position):
    # Each provider refused the query, five messages with no position; PubMed truncates even inside quotes.
    with pytest.raises(QuerySyntaxError, match=r"\* is a truncation wildcard in some providers") as caught:
        parse_query(query)
    assert (caught.value.code, caught.value.position, caught.value.end) == ("wildcard", position, position + 1)


# --------------------------------------------------------------------------- text pasted from a document


@pytest.mark.parametrize(
    ("pasted", "meant"),
    [
        # Curly quotes from a word processor are a phrase's quotes, not letters of two words ANDed.
        ("\u201cheart attack\u201d AND rat", '"heart attack" rat'),
        ("\u201eHerzinfarkt Risiko\u201c OR x", '"Herzinfarkt Risiko" OR x'),
        ("\u00ab infarctus du myocarde \u00bb", '"infarctus du myocarde"'),
        ('title:\u201cheart attack\u201d', 'title:"heart attack"'),
        # Full-width parentheses (and colon) from an East Asian keyboard group, as ( and ) do.
        ("\uff08a OR b\uff09 AND c", "(a OR b) c"),
        ("title\uff1acancer", "title:cancer"),
        # A non-breaking hyphen, an en dash or a minus sign in a hyphenated term is its hyphen.
        ("COVID\u201119", "COVID-19"),
        ("Epstein\u2013Barr OR COVID\u201019", "Epstein-Barr OR COVID-19"),
        # A soft hyphen (where a PDF broke the word), a zero-width space or a direction mark is no letter.
        ("immuno\u00adtherapy", "immunotherapy"),
        ("COVID\u200b19 \u200fسرطان\u200f", "COVID19 سرطان"),
        # A curly apostrophe is the apostrophe.
        ("Alzheimer\u2019s", "Alzheimer's"),
        # Line breaks and non-breaking or thin spaces between words and within a phrase are spaces.
        ("cancer AND\r\nrat", "cancer rat"),
        ('"heart\u00a0attack" OR "heart\n  failure" OR "a\u2009b"', '"heart attack" OR "heart failure" OR "a b"'),
        ('\u201c Alzheimer\u2019s disease \u201d', '"Alzheimer\'s disease"'),
    ],
)
def test_text_pasted_from_a_document_means_what_it_shows(pasted, meant):
    assert parse_query(pasted) == parse_query(meant)


def test_a_pasted_phrase_compiles_as_a_phrase_for_every_provider():
    node = parse_query("\u201cheart attack\u201d AND COVID\u201119")
    assert compile_openalex(node) == {"search": '"heart attack" AND "COVID-19"'}
    assert compile_europepmc(node) == '"heart attack" AND "COVID-19"'
    assert compile_pubmed(node) == '"heart attack"[All Fields] AND "COVID-19"[All Fields]'
    assert compile_arxiv(node) == 'all:"heart attack" AND all:"COVID-19"'


@pytest.mark.parametrize(
    ("query", "code", "position", "end", "message"),
    [
        # Positions are in the text as written, after characters that were dropped or read as others.
        ("a\u00ad\u00ad OR b)", "group", 9, 10, "no opening one"),
        ("\u201cheart attack", "quote", 1, 2, "unclosed quote"),
        ("heart attack\u201d", "quote", 13, 14, "unclosed quote"),
        ("\uff08a OR b", "group", 1, 2, "never closed"),
        ("aspirin OR \u2018heart attack\u2019", "quote", 12, 13, "curly \u2018"),
        # An invisible character that stands for nothing the grammar knows is refused, not searched for.
        ("heart\u2063attack", "invisible", 6, 7, "U+2063 (invisible separator)"),
        ("\u00ad\u200b", "empty", 1, 3, "nothing but invisible characters"),
        # A term without a letter or digit is dropped by providers (a stray dash, a closing full stop).
        ("heart \u2013 attack", "term", 7, 8, "- has no letter or digit"),
        ("(a OR b) .", "term", 10, 11, ". has no letter or digit"),
        ('a OR "&"', "term", 6, 9, '"&" has no letter or digit'),
        ("a OR b)", "group", 7, 8, "no opening one"),
        ('"a', "quote", 1, 2, "unclosed quote"),
        ('a ""', "quote", 3, 5, "empty quotes"),
    ],
)
def test_pasted_text_that_cannot_be_read_is_refused_where_it_stands(query, code, position, end, message):
    _refused_where_it_stands(query, code, position, end, message)


def test_persian_and_indic_joiners_stay_in_the_word():
    assert parse_query("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645") == Term("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645")


@pytest.mark.parametrize(
    ("query", "openalex", "arxiv"),
    [
        # A hyphen splits a word for OpenAlex's and arXiv's analysers; unquoted, its parts were ANDed anywhere,
        # where Europe PMC and PubMed search the quoted term as a phrase.
        ("TNF-\u03b1 OR covid-19", '"TNF-\u03b1" OR "covid-19"', 'all:"TNF-\u03b1" OR all:"covid-19"'),
        # Chinese and Japanese are split into characters: a word is quoted to stay one.
        ("\u764c\u75c7 AND \u6cbb\u7597", '"\u764c\u75c7" AND "\u6cbb\u7597"', 'all:"\u764c\u75c7" AND all:"\u6cbb\u7597"'),
        # Scripts with spaces between words are words as they stand.
        ("\u0440\u0430\u043a OR \u0633\u0631\u0637\u0627\u0646", "\u0440\u0430\u043a OR \u0633\u0631\u0637\u0627\u0646",
         "all:\u0440\u0430\u043a OR all:\u0633\u0631\u0637\u0627\u0646"),
        # Characters special to Lucene-style parsers are inside quotes, so none is read as an operator or field.
        ('"hla:dr" OR C++ OR R&D OR C# OR a/b OR [18F]FDG OR what\\?', None, None),
    ],
)
def test_openalex_and_arxiv_quote_what_their_analysers_would_split(query, openalex, arxiv):
    if openalex is None:  # '?' outside quotes is a wildcard the grammar refuses: this case checks the others
        node = parse_query(query.replace(" OR what\\?", ""))
        for compiled in (compile_openalex(node)["search"], compile_arxiv(node)):
            assert all(f'"{term}"' in compiled for term in ("hla:dr", "C++", "R&D", "C#", "a/b", "[18F]FDG"))
        return
    assert compile_openalex(parse_query(query)) == {"search": openalex}
    assert compile_arxiv(parse_query(query)) == arxiv


def test_crossref_refuses_a_word_it_would_split_into_characters():
    with pytest.raises(UnsupportedQuery, match="written without spaces"):
        compile_crossref(parse_query("\u764c\u75c7"))
    assert compile_crossref(parse_query("\u764c")) == {"query.bibliographic": "\u764c"}
    assert compile_crossref(parse_query("\u0440\u0430\u043a")) == {"query.bibliographic": "\u0440\u0430\u043a"}


def test_operator_words_and_nesting_inside_phrases_and_groups():
    node = parse_query('((a OR b) AND (c OR (d NOT e))) "not otherwise specified"')
    assert compile_pubmed(node) == (
        '("a"[All Fields] OR "b"[All Fields]) AND ("c"[All Fields] OR ("d"[All Fields] NOT "e"[All Fields])) '
        'AND "not otherwise specified"[All Fields]')
    assert compile_openalex(parse_query("a OR b NOT c")) == {"search": "a OR (b AND NOT c)"}
    assert compile_arxiv(parse_query('"AND" OR "not"')) == 'all:"AND" OR all:"not"'


def test_a_grammar_error_says_how_each_caller_sends_a_query_verbatim(sitegen, example_copy):
    # Every error said "write the provider's own syntax with --native", the flag of `sitegen search` alone: `monitor
    # add` has `--syntax native`, a saved search's file `"syntax": "native"`, and the flag given there is refused.
    code, _, err = sitegen("search", "rat and mouse", "--sources", "pubmed")
    assert code == 2 and "own syntax with --native)" in err
    code, _, err = sitegen("monitor", "add", example_copy, "--id", "second", "--strategy", "pubmed", "rat and mouse",
                           "--syntax", "sitegen", "--at", "2024-01-01T00:00:00Z", "--snapshots", "replay")
    assert code == 2 and "own syntax with --syntax native)" in err and "--native)" not in err
    saved = example_copy / "searches" / "object-in-context.json"
    text = saved.read_text()
    saved.write_text(text.replace('"label": "openalex-main"', '"label": "openalex-main",\n      "syntax": "sitegen"', 1)
                     .replace('"\\"object-in-context\\" OR', '"\\"object-in-context\\" or', 1))
    code, out, _ = sitegen("check", example_copy)
    assert code == 1 and "[query-syntax]" in out
    assert 'own syntax with "syntax": "native")' in out and "--native" not in out
