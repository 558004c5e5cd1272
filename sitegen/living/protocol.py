"""Locking the protocol: its hash and version go on the ledger before screening starts."""

from __future__ import annotations

from pathlib import Path

from sitegen.errors import SitegenError
from sitegen.living.ledger import event_line, next_event
from sitegen.review.check import load_valid_review
from sitegen.review.models import LedgerEvent, ProtocolLockPayload, parse_timestamp
from sitegen.review.transaction import Transaction, recover, review_lock
from sitegen.review.write import model_data


def lock_protocol(root: Path, at: str, reason: str | None = None) -> LedgerEvent:
    """Record protocol.md's SHA-256 and version on the ledger; later edits then need an amendment."""
    with review_lock(root):
        recover(root)
        review = load_valid_review(root)
        if any(event.type in ("protocol_lock", "amendment") for event in review.ledger):
            raise SitegenError("the protocol is already locked; change it with an amendment")
        try:
            when = parse_timestamp(at)
        except ValueError as exc:
            raise SitegenError(f"--at {exc}") from None
        if review.ledger and when < max(parse_timestamp(e.ts) for e in review.ledger):
            raise SitegenError(f"--at {at} is earlier than the latest ledger event")
        payload = ProtocolLockPayload(version=review.protocol.meta.version, sha256=review.protocol.sha256,
                                      reason=reason)
        event = next_event(review.ledger[-1] if review.ledger else None, "protocol_lock", at, model_data(payload))
        transaction = Transaction(root)
        transaction.write("ledger.jsonl", "".join(event_line(e) + "\n" for e in [*review.ledger, event]))
        transaction.commit()
        return event
