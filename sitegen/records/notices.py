"""Notices about another work: errata, corrections, retraction notices, expressions of concern, replies
and comments. One rule, used by the identity graph (a notice exported with the DOI of the article it
corrects is not that article) and by the metadata matcher (a notice and its article are never the same).

A notice is told by its publication type or by how its title begins ("Erratum to: …", "Authors' reply",
"Comment on …", "Author Correction: …", "Response to: …", "Re: …") or ends ("… [Erratum]", "… - Erratum",
"… (vol 42, pg 100, 2019)", Web of Science's correction). Titles that only begin with such a word are studies:
"Correction of adolescent scoliosis", "Response to treatment with lithium", "RETRACTED: <title>" (the
retracted work itself, not its notice).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from sitegen.records.titles import case_blind_key

_OPENING = re.compile(
    r"^(?:(?P<erratum>errat(?:um|a)|corrigend(?:um|a)|addendum|published erratum"
    r"|(?:author|publisher)(?:['’]?s)?\s+(?:correction|note)\s*:|clarification\s*:"
    r"|corrections?\s*(?::|to\b|notice\b|$))"
    r"|(?P<retraction>(?:notice\s+of\s+|note\s+of\s+)?retraction\s*(?::|$|note\b|notice\b|statement\b|to\b|of\s*:)"
    r"|notice\s+of\s+retraction\b|withdrawal\s*(?::|notice\b|of\s*:)"
    r"|(?:editorial\s+)?expression\s+of\s+concern\b)"
    r"|(?P<reply>(?:in\s+)?reply\b|(?:the\s+)?authors?['’]?\s+(?:reply|response)\b"
    r"|response\s*(?::|to\s*:|to\s*[\"“‘']|to\s+(?:the\s+)?(?:letter|comment|commentary|correspondence|editorial"
    r"|critique|reply)\b)|in\s+response\s*:|correspondence\s*:|regarding\s*[\"“‘'])"
    r"|(?P<comment>comments?\s*(?::|on\b)|commentary\s*(?::|on\b)|editorial\s+comment\s*:|re\s*[:.]\s))",
    re.IGNORECASE,
)
# A colon or full stop after spaces is tried from the run's start only ((?<!\s)), as names.AUTHORS_AND: from
# every space of a long run it was quadratic (a title holding 100 KB of spaces took a minute and a half).
_CLOSING = re.compile(r"(?:[\[(]|(?<!\s)\s*[:.]\s*|\s[-–—]\s*)(?P<word>errat(?:um|a)|corrigendum|correction|retraction(?:\s+notice)?"
                      r"|reply|comment)[\])]?\W*$", re.IGNORECASE)
# Web of Science titles a correction with the corrected article's place: "<title> (vol 42, pg 100, 2019)".
_CORRECTED_PLACE = re.compile(r"\(\s*vol\.?\s*\d+[^()]*\bpg\.?\s*[a-z]?\d+[^()]*\)\W*$", re.IGNORECASE)
_BY_WORD = {"errat": "erratum", "corri": "erratum", "corre": "erratum", "retra": "retraction", "reply": "reply",
            "comme": "comment"}
# The publication types that name a notice's own kind (a `NoticeOf` kind): PubMed's, Crossref's and OpenAlex's, and
# those of a Crossref work whose `update-to` names another work (sitegen.sources.crossref.notice_types).
OWN_KINDS = {"erratum": "correction", "published erratum": "correction", "corrigendum": "correction",
             "correction": "correction", "correction-notice": "correction", "retraction": "retraction",
             "retraction notice": "retraction", "retraction-notice": "retraction",
             "retraction of publication": "retraction", "expression of concern": "expression-of-concern",
             "expression-of-concern-notice": "expression-of-concern", "reinstatement-notice": "reinstatement"}
# notice_kind's "retraction" is a withdrawal's, an expression of concern's or a reinstatement's notice too.
_KIND_OF_OWN = {"correction": "erratum", "retraction": "retraction", "expression-of-concern": "retraction",
                "reinstatement": "retraction"}
_TYPES = {**{name: _KIND_OF_OWN[own] for name, own in OWN_KINDS.items()}, "comment": "comment"}
# The publication types that make a record a notice whatever its title says: PubMed's, Crossref's and OpenAlex's
# ("erratum", "retraction") notice types. "Comment" is not one of them: indexes type one letter differently.
NOTICE_TYPES = frozenset(OWN_KINDS)


def notice_kind(title: str | None, publication_types: Iterable[str] = ()) -> str:
    """"erratum", "retraction" (also withdrawals and expressions of concern), "reply" or "comment" when the
    record is a notice about another work, else ""."""
    by_type = next((found for kind in publication_types if (found := _TYPES.get(kind.strip().lower()))), "")
    if by_type not in ("", "comment"):
        return by_type
    by_title = _title_kind(title)
    # PubMed types a reply "Comment" too (it comments on the comment): the title's "reply" is the finer kind, and
    # the one a source without publication types gives the same reply.
    return "reply" if (by_type, by_title) == ("comment", "reply") else by_type or by_title


def _title_kind(title: str | None) -> str:
    text = html.unescape(title or "").strip().lstrip("[(\"'“‘ ").strip()
    if opening := _OPENING.match(text):
        return next(name for name, value in opening.groupdict().items() if value)
    if closing := _CLOSING.search(text):
        return _BY_WORD[case_blind_key(closing.group("word"))[:5]]
    if _CORRECTED_PLACE.search(text):
        return "erratum"
    return ""
