"""Locking and amending the protocol: its hash, version and text go on the ledger.

Once locked, protocol.md may change only through an amendment (PRISMA 2020
item 24b): `amend_protocol` records the reason and the diff, and raises the
version, so later screening batches are screened under the new version and
the site can show the whole trail.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import yaml

from sitegen.errors import ReviewInvalid, SitegenError
from sitegen.living.ledger import check_event_time, ledger_text, next_event
from sitegen.records.model import model_data
from sitegen.review.check import inspect_review, writable_review
from sitegen.review.folder import Review, protocol_hash
from sitegen.review.models import LedgerEvent, ProtocolLockPayload
from sitegen.review.transaction import Transaction, recover, review_lock

_VERSION_LINE = re.compile(r"^version:[ \t]*[\"']?\d+[\"']?[ \t]*(#.*)?$", re.MULTILINE)


def lock_protocol(root: Path, at: str, reason: str | None = None) -> LedgerEvent:
    """Record protocol.md's SHA-256, version and text; later edits then need an amendment."""
    with writable_review(root) as review:
        if locks(review):
            raise SitegenError("the protocol is already locked; change it with `sitegen protocol amend`")
        text = (root / "protocol.md").read_text(encoding="utf-8")
        payload = ProtocolLockPayload(version=review.protocol.meta.version, sha256=review.protocol.sha256,
                                      reason=reason, text=text)
        return _append(root, review, "protocol_lock", at, payload, {})


def amend_protocol(root: Path, at: str, reason: str) -> LedgerEvent:
    """Record the edits made to a locked protocol.md as an amendment, raising its version if needed."""
    if not reason.strip():
        raise SitegenError("an amendment needs a reason (--reason)")
    with review_lock(root):
        recover(root)
        review, problems = inspect_review(root)
        # The edit being amended is exactly what check reports; anything else must be fixed first.
        others = [p for p in problems if p.code != "protocol-locked"]
        if others or review is None:
            raise ReviewInvalid(others)
        trail = locks(review)
        if not trail:
            raise SitegenError("the protocol is not locked yet; lock it with `sitegen protocol lock` first")
        previous = trail[-1][1]
        text = (root / "protocol.md").read_text(encoding="utf-8")
        if protocol_hash(text) == previous.sha256:
            raise SitegenError(f"protocol.md has not changed since version {previous.version}; edit it, then amend")
        version = review.protocol.meta.version
        if version == previous.version:
            version += 1
            text = _VERSION_LINE.sub(f"version: {version}", text, count=1)
            if _front_matter_version(text) != version:
                raise SitegenError(f"could not raise the version line of protocol.md; set `version: {version}` "
                                   "in its front matter yourself, then amend")
        elif version != previous.version + 1:
            raise SitegenError(f"protocol.md says version {version}; the amendment of version {previous.version} "
                               f"must be version {previous.version + 1}")
        diff = "".join(difflib.unified_diff(
            (previous.text or "").splitlines(keepends=True), text.splitlines(keepends=True),
            f"protocol.md (version {previous.version})", f"protocol.md (version {version})"))
        payload = ProtocolLockPayload(version=version, sha256=protocol_hash(text), reason=reason.strip(), text=text,
                                      diff=diff)
        return _append(root, review, "amendment", at, payload, {"protocol.md": text})


def _front_matter_version(text: str) -> object:
    lines = text.split("\n")
    end = lines.index("---", 1) if "---" in lines[1:] else 0
    try:
        return (yaml.safe_load("\n".join(lines[1:end])) or {}).get("version")
    except yaml.YAMLError:
        return None


def locks(review: Review) -> list[tuple[LedgerEvent, ProtocolLockPayload]]:
    """The protocol's lock and amendments, oldest first: its trail."""
    return [(event, payload) for event, payload in zip(review.ledger, review.payloads, strict=True)
            if isinstance(payload, ProtocolLockPayload)]


def _append(root: Path, review: Review, type_: str, at: str, payload: ProtocolLockPayload,
            files: dict[str, str]) -> LedgerEvent:
    check_event_time(review.ledger, at)
    event = next_event(review.ledger[-1] if review.ledger else None, type_, at, model_data(payload))
    transaction = Transaction(root)
    for rel, text in files.items():
        transaction.write(rel, text)
    transaction.write("ledger.jsonl", ledger_text([*review.ledger, event]))
    transaction.commit()
    return event
