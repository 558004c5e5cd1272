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
# "[ABSTRACT FROM AUTHOR]" (see _SOURCE_MARK).
_STATEMENT = re.compile(
    r"(?<![^\s.;:!?)\]])(?:crown\s+)?(?:©|copyright\s*(?:©|\(c\)))"
    r"|(?<![^\s.;:!?])\((?:apa\s+)?psycinfo\s+database\s+record\b"
    r"|(?:^|(?<=[.!?]))\s*(?:crown\s+)?(?:\(c\)|copyright)\s*(?:19|20)[0-9]{2}"
    r"|(?:^|(?<=[.!?]))\s*\((?=[^()]{0,100}(?:\(c\)|©)\s*(?:19|20)[0-9]{2})"
    r"|(?:^|(?<=[.!?\]]))\s*copyright\s+of\s+.{1,200}?\s+is\s+the\s+property\s+of\b",
    re.IGNORECASE)
# The longest statement taken for one. Statements run from "© 2009 Wiley-Liss, Inc." to a licence after the
# copyright ("© The Author(s) 2018. Published by Oxford University Press on behalf of Nucleic Acids Research. This
# is an Open Access article distributed under the terms of the Creative Commons Attribution Non-Commercial
# License (http://creativecommons.org/licenses/by-nc/4.0/), which permits …", some 480 characters); a mark
# further from the end is in the abstract's own text, which is never cut.
MAX_STATEMENT = 600
_WORD = re.compile(r"\w")
# EBSCOhost's mark of where it took an abstract from, closing it ("… animals. [ABSTRACT FROM AUTHOR]", "[ABSTRACT
# FROM PUBLISHER]", "[ABSTRACT FROM ARTICLE]") before its copyright statement: its words, not the authors', and not
# in the same work's abstract from any other source. It goes where it closes the abstract, once the statement after
# it has gone (so the statement's length alone bounds what is cut); one within the text, or glued to a word, stays.
_SOURCE_MARK = re.compile(r"(?<![^\s.;:!?)])\[abstract\s+from\s+[^\[\]]{1,40}\]\s*$", re.IGNORECASE)


def without_copyright_statement(abstract: str | None) -> str | None:
    """`abstract` without the copyright statement that closes it: everything from the statement's mark
    (`_STATEMENT`) to the end, when that is at most MAX_STATEMENT characters; whatever follows the mark in it
    goes too ("© 2019 The Authors. Published by Elsevier B.V."), and so does EBSCOhost's mark of the abstract's
    source before it (`_SOURCE_MARK`). Text without such a mark stays whole, even a publisher's line ("Published by
    Elsevier Ltd." alone names no copyright, and is words an abstract can end in), and so does an abstract that is
    nothing but a statement: a record keeps what it was given rather than nothing."""
    if not abstract:
        return abstract
    mark = _STATEMENT.search(abstract, max(0, len(abstract) - MAX_STATEMENT))
    kept = abstract[:mark.start()].rstrip() if mark else abstract
    kept = _SOURCE_MARK.sub("", kept).rstrip()
    return kept if _WORD.search(kept) else abstract


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
