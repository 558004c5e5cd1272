"""Locking and amending the protocol: its hash, version and text go on the ledger.

Once locked, protocol.md may change only through an amendment (PRISMA 2020
item 24b): `amend_protocol` records the reason and the diff, and raises the
version, so later screening batches are screened under the new version and
the site can show the whole trail.
"""

from __future__ import annotations

import difflib
import re
from typing import NamedTuple

from sitegen.errors import ReviewInvalid, SitegenError, shown_argument
from sitegen.living.facts import ReviewFacts
from sitegen.living.ledger import append, given_text
from sitegen.review.folder import Review, locked_protocol, parse_protocol, protocol_hash
from sitegen.review.models import AmendmentPayload, LedgerEvent, ProtocolLockPayload
from sitegen.review.problems import Problem
from sitegen.review.transaction import Transaction
from sitegen.review.write import kept_form

# The problem an amendment exists to resolve: the workspace lets `amend_protocol` open a review that has it.
EDITED_AFTER_LOCK = "protocol-locked"
_VERSION_LINE = re.compile(r"^version:[ \t]*[\"']?\d+[\"']?([ \t]*(?:#.*)?)$", re.MULTILINE)


def lock_protocol(review: Review, facts: ReviewFacts, at: str, reason: str | None = None) -> LedgerEvent:
    """Record protocol.md's SHA-256, version and text; later edits then need an amendment."""
    reason = given_text(reason, "--reason", MAX_REASON) if reason is not None else None
    if facts.protocol_trail:
        raise SitegenError("the protocol is already locked; edit protocol.md, then record the change with "
                           f"`sitegen protocol amend {shown_argument(review.root)} --at TIME --reason TEXT`")
    payload = ProtocolLockPayload(version=review.protocol.meta.version, sha256=review.protocol.sha256,
                                  reason=reason, text=review.protocol.text)
    return _record(review, at, payload, {})


class Amendment(NamedTuple):
    event: LedgerEvent
    notes: list[str]  # what the reviewer should know of the amendment, which is not wrong: see retired_in_use


def amend_protocol(review: Review, facts: ReviewFacts, at: str, reason: str) -> Amendment:
    """Record the edits made to a locked protocol.md as an amendment, raising its version if needed."""
    reason = given_text(reason, "--reason", MAX_REASON)
    if not facts.protocol_trail:
        raise SitegenError("the protocol is not locked yet; lock it with "
                           f"`sitegen protocol lock {shown_argument(review.root)} --at TIME` first")
    previous = facts.protocol_trail[-1][1]
    text = review.protocol.text
    if protocol_hash(text) == previous.sha256:
        raise SitegenError(f"protocol.md has not changed since version {previous.version}; edit it, then amend")
    if only_version_changed(previous, text):
        raise _at_version(review, f"protocol.md has not changed since version {previous.version} but for its "
                          f"`version` line: set it back to `version: {previous.version}` (then `check` passes), or "
                          "edit the protocol, then amend")
    version = review.protocol.meta.version
    if version == previous.version:
        version += 1
        # The line's comment, if any, is the reviewer's: it stays.
        text = _VERSION_LINE.sub(lambda line: f"version: {version}{line[1]}", text, count=1)
        if _front_matter_version(text) != version:
            raise _at_version(review, f"could not raise the version line; set `version: {version}` yourself, "
                              "then amend")
    elif version != previous.version + 1:
        raise _at_version(review, f"version {version}: the amendment of version {previous.version} must be version "
                          f"{previous.version + 1}")
    diff = amendment_diff(previous, text, version)
    payload = AmendmentPayload(version=version, sha256=protocol_hash(text), reason=reason, text=text,
                               diff=diff)
    # protocol.md is written again only when its version line was raised, in the form it was written in (its line
    # ends, byte-order mark and final newline): Git then shows the version line alone as changed
    raised = text != review.protocol.text
    event = _record(review, at, payload, {"protocol.md": kept_form(review.root / "protocol.md", text)} if raised else {})
    return Amendment(event, retired_in_use(review, previous, version))


def only_version_changed(previous: ProtocolLockPayload, text: str) -> bool:
    """Whether `text` is the protocol `previous` locked but for its version line: a new version number over the same
    protocol would be an amendment that amends nothing (`amend_protocol` refuses it, `check` an event recording it)."""
    return previous.text is not None and _but_version(text) == _but_version(previous.text) is not None


def amendment_diff(previous: ProtocolLockPayload, text: str, version: int) -> str:
    """The unified diff an amendment to `version` records, from the text `previous` locked to `text`: what the site
    shows of the change, so `check` compares an amendment event's with it."""
    return "".join(difflib.unified_diff(
        (previous.text or "").splitlines(keepends=True), text.splitlines(keepends=True),
        f"protocol.md (version {previous.version})", f"protocol.md (version {version})"))


SHOWN_PLACES = 3  # decision rows named in a note; the rest are counted


def retired_in_use(review: Review, previous: ProtocolLockPayload, version: int) -> list[str]:
    """A note for each exclusion reason code that version `previous` defined, the amended protocol no longer does,
    and decisions still give, naming where. The decisions stay as they are (they were made under an earlier
    version, and `check` accepts them), but a reviewer retiring a code may have meant to recode them."""
    before = locked_protocol(previous.text or "")
    if before is None:
        return []
    kept = {reason.code for reason in review.protocol.meta.exclusion_reasons}
    retired = [reason.code for reason in before.meta.exclusion_reasons if reason.code not in kept]
    notes = []
    for code in retired:
        rows = sorted((row.path, row.line) for row in review.decisions if row.decision.reason == code)
        if not rows:
            continue
        places = ", ".join(f"{path}:{line}" for path, line in rows[:SHOWN_PLACES])
        more = f" and {len(rows) - SHOWN_PLACES} more" if len(rows) > SHOWN_PLACES else ""
        when = f"version {previous.version}" + (" or earlier" if previous.version > 1 else "")
        notes.append(f"{len(rows)} decision{'s' if len(rows) != 1 else ''} still give{'s' if len(rows) == 1 else ''} "
                     f"the reason code '{code}', which version {version} no longer defines (kept: "
                     f"{'they were' if len(rows) != 1 else 'it was'} made under {when}): {places}{more}")
    return notes


def _at_version(review: Review, message: str) -> ReviewInvalid:
    """A refusal caused by protocol.md's version, at its line as `check` reports a file's problems."""
    line, column = review.protocol.version_at or (None, None)
    return ReviewInvalid([Problem("protocol.md", line, column, "protocol-version", message)])


def _but_version(text: str) -> tuple[object, str] | None:
    """A protocol's front matter and text with its version left out (None when it cannot be read): two
    protocols the same but for their version are the same here. (The front matter is compared too, for one
    written on a single line, where leaving out the version's line leaves out everything.)"""
    protocol = locked_protocol(text)  # the locked version's text too: read under the rules it was locked under
    if protocol is None or protocol.version_at is None:
        return None
    lines = protocol.text.split("\n")
    del lines[protocol.version_at[0] - 1]
    return protocol.meta.model_copy(update={"version": 0}), "\n".join(lines)


def _front_matter_version(text: str) -> int | None:
    protocol, _ = parse_protocol(text)
    return protocol.meta.version if protocol else None


MAX_REASON = 2000  # characters: as much as any free text a review's files hold (a question, a description)



def _record(review: Review, at: str, payload: ProtocolLockPayload, files: dict[str, str]) -> LedgerEvent:
    transaction = Transaction(review.root)
    for rel, text in files.items():
        transaction.write(rel, text)
    [event] = append(transaction, review, at, [payload])
    transaction.commit()
    return event
