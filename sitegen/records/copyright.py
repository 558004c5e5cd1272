"""A publisher's copyright statement closing an abstract, told apart from the abstract.

OpenAlex, Europe PMC and Crossref give many abstracts as the publisher printed them, ending in its statement
("… memory is not. © 2009 Wiley-Liss, Inc.", "… Copyright © 2018 Elsevier B.V. All rights reserved."), and so do
database exports (Scopus, Embase, Web of Science); PubMed keeps the statement apart (MEDLINE's
<CopyrightInformation>, the nbib's CI tag) and gives the abstract without it. Kept, one work's abstract differed
by provider (for the duplicate matcher, the fusion of records, relevance ranking and the passages verification
looks for) and the site showed the publisher's words as the authors'. So every abstract becomes a record without
its closing statement (`without_copyright_statement`), as PubMed gives it. So too the heading a publisher set
above an abstract, which some give as its first word (`without_abstract_heading`). Pure: a string in, a string out.
"""

from __future__ import annotations

import re

# Where a statement starts: "©", or "Copyright" with "©" or "(c)" ("Copyright © 2020"), "Crown copyright" as one.
# A mark written onto a word ("Alexa Fluor©", "(MMSE©)") is a trade mark, no statement: the statement starts the
# text, or follows a space or the end of a sentence (exports often lost the space: "atherosclerosis.Copyright ©
# 2018"). "(c)" or "Copyright" with a year alone ("(c) 2019 Elsevier Ltd.", "Copyright 2001 Elsevier Science.")
# is a statement only where a sentence has ended: within one it is an abstract's own words ("in (a) 2017, (b)
# 2018 and (c) 2019", "under the copyright 2019 directive"). So is a parenthesis after a sentence's end that holds
# one, from its opening: the APA's on every abstract of its journals ("(PsycInfo Database Record (c) 2020 APA, all
# rights reserved)."), which it writes wherever the record is exported (Ovid, EBSCOhost, ProQuest, the Cochrane
# Library), so it is known by its name too. EBSCOhost closes each abstract with its own ("Copyright of PLoS ONE is
# the property of Public Library of Science and its content may not be copied ..."), after a sentence or after its
# "[ABSTRACT FROM AUTHOR]" (see _SOURCE_MARK); a sentence saying only what is whose ("Copyright of data is the
# property of no one.") is an abstract's own.
_STATEMENT = re.compile(
    r"(?<![^\s.;:!?)\]])(?:crown\s+)?(?:©|copyright\s*(?:©|\(c\)))"
    r"|(?<![^\s.;:!?])\((?:apa\s+)?psycinfo\s+database\s+record\b"
    r"|(?:^|(?<=[.!?]))\s*(?:crown\s+)?(?:\(c\)|copyright)\s*(?:19|20)[0-9]{2}"
    r"|(?:^|(?<=[.!?]))\s*\((?=[^()]{0,100}(?:\(c\)|©)\s*(?:19|20)[0-9]{2})"
    r"|(?:^|(?<=[.!?\]]))\s*copyright\s+of\s+.{1,200}?\s+is\s+the\s+property\s+of\s+.{1,200}?\s+and\s+its\s+content\b",
    re.IGNORECASE)
# The longest statement taken for one. Statements run from "© 2009 Wiley-Liss, Inc." to a licence after the
# copyright ("© The Author(s) 2018. Published by Oxford University Press on behalf of Nucleic Acids Research. This
# is an Open Access article distributed under the terms of the Creative Commons Attribution Non-Commercial
# License (http://creativecommons.org/licenses/by-nc/4.0/), which permits …", some 480 characters); a mark
# further from the end is in the abstract's own text, which is never cut (EBSCOhost's statement aside, known by its
# whole wording below).
MAX_STATEMENT = 600
_WORD = re.compile(r"\w")
# EBSCOhost's statement is told by its whole wording, which bounds it as MAX_STATEMENT bounds a mark's: the journal's
# and its owner's names (each at most MAX_NAME characters, as a journal's full name with its subtitle may run to 200
# and more) between its fixed words, then only sentences it is known to close with (some 400 characters in all,
# seen in EBSCOhost's exports and the full texts it serves), to the end. So however long the names, the statement
# goes, and an abstract's own words, which are no such sentences, are never taken for it.
MAX_NAME = 300
_EBSCOHOST_CLOSING = ("However, users may print, download, or email articles for individual use.",
                      "This abstract may be abridged.", "No warranty is given about the accuracy of the copy.",
                      "Users should refer to the original published version of the material for the full abstract.",
                      "(Copyright applies to all Abstracts.)", "Additionally, content may not be used with any "
                      "artificial intelligence tools or machine learning technologies.")
_EBSCOHOST_STATEMENT = re.compile(
    rf"copyright\s+of\s+(?=\S).{{1,{MAX_NAME}}}?\s+is\s+the\s+property\s+of\s+(?=\S).{{1,{MAX_NAME}}}?\s+and\s+its\s+content\s+"
    r"may\s+not\s+be\s+copied(?:\s+or\s+emailed\s+to\s+multiple\s+sites)?(?:\s+or\s+posted\s+to\s+a\s+listserv)?\s+"
    r"without\s+the\s+copyright\s+holder['’]s\s+express\s+written\s+permission\."
    r"(?:\s*(?:" + "|".join(re.escape(sentence).replace(r"\ ", r"\s+") for sentence in _EBSCOHOST_CLOSING) + r"))*\s*",
    re.IGNORECASE | re.DOTALL)
_EBSCOHOST_START = re.compile(r"(?:^|(?<=[.!?\]]))\s*(?=copyright\s+of\s)", re.IGNORECASE)
MAX_EBSCOHOST_STATEMENT = 2 * MAX_NAME + 1000  # where to look for its start: the names and all the fixed words
# EBSCOhost's mark of where it took an abstract from, closing it ("… animals. [ABSTRACT FROM AUTHOR]", "[ABSTRACT
# FROM PUBLISHER]", "[ABSTRACT FROM ARTICLE]") before its copyright statement: its words, not the authors', and not
# in the same work's abstract from any other source. It goes where it closes the abstract, once the statement after
# it has gone (so the statement's length alone bounds what is cut); one within the text, or glued to a word, stays.
_SOURCE_MARK = re.compile(r"(?<![^\s.;:!?)])\[abstract\s+from\s+[^\[\]]{1,40}\]\s*$", re.IGNORECASE)


def without_copyright_statement(abstract: str | None) -> str | None:
    """`abstract` without the copyright statement that closes it: everything from the statement's mark
    (`_STATEMENT`) to the end, when that is at most MAX_STATEMENT characters; whatever follows the mark in it
    goes too ("© 2019 The Authors. Published by Elsevier B.V."), and so does EBSCOhost's mark of the abstract's
    source before it (`_SOURCE_MARK`). EBSCOhost's statement in its whole known wording goes however long the names
    in it (`_EBSCOHOST_STATEMENT`), and then a publisher's statement closing what is left. Text without such a mark stays whole, even a publisher's line ("Published by
    Elsevier Ltd." alone names no copyright, and is words an abstract can end in), and so does an abstract that is
    nothing but a statement: a record keeps what it was given rather than nothing."""
    if not abstract:
        return abstract
    kept = _without_ebscohost_statement(abstract)
    mark = _STATEMENT.search(kept, max(0, len(kept) - MAX_STATEMENT))
    kept = kept[:mark.start()].rstrip() if mark else kept
    kept = _SOURCE_MARK.sub("", kept).rstrip()
    return kept if _WORD.search(kept) else abstract


def _without_ebscohost_statement(abstract: str) -> str:
    """`abstract` without EBSCOhost's statement closing it in its whole known wording (`_EBSCOHOST_STATEMENT`),
    whatever its length; what is left may end in the publisher's own statement, which EBSCOhost's follows. Its start
    is looked for from the end, so that an abstract's own sentence opening with "Copyright of" further up is never
    read as the start of a long journal name."""
    starts = [start.end() for start in
              _EBSCOHOST_START.finditer(abstract, max(0, len(abstract) - MAX_EBSCOHOST_STATEMENT))]
    for start in reversed(starts):
        if _EBSCOHOST_STATEMENT.fullmatch(abstract, start):
            return abstract[:start].rstrip()
    return abstract


_ABSTRACT_HEADING = re.compile(r"\s*abstract[:.]*\s+", re.IGNORECASE)


def without_abstract_heading(abstract: str) -> str:
    """`abstract` without the heading a publisher set above it, given as its first word ("Abstract Background The
    factors…", "Abstract Neuropeptide Y…": Wiley's and Springer's, in OpenAlex's inverted index and in Wiley's
    RIS export alike): no part of the text, as Crossref's and Europe PMC's abstracts are read without theirs. The
    heading is told by the capital after it; an abstract that begins with the word ("Abstract reasoning is…")
    keeps it."""
    heading = _ABSTRACT_HEADING.match(abstract)
    rest = abstract[heading.end():] if heading else ""
    return rest if rest[:1].isupper() else abstract
