"""Slack's request signature, checked before anything in a request is read, and each request taken once.

Slack signs every interactivity request: `v0=` + HMAC-SHA256 of `v0:{timestamp}:{raw body}` with
the app's signing secret (`HITL_SLACK_SIGNING_SECRET`). A request is accepted when the signature
matches (constant-time compare), its timestamp is at most `MAX_AGE_SECONDS` from now, and it was
not accepted before: the last is a row in the layer's shared store (`approval_claims`, key
`slack-request:<digest>`), so a replay is refused by every replica. Not for who may decide.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from enum import StrEnum
from typing import TYPE_CHECKING

from sqlalchemy.dialects import postgresql, sqlite

from server.ledger import storage
from server.ledger.storage import approval_claims

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sqlalchemy import Engine

MAX_AGE_SECONDS = 300
VERSION = "v0"


class Verdict(StrEnum):
    """What the signature check found, in words for the audit trail."""

    ACCEPTED = "accepted"
    FORGED = "the Slack signature is missing or does not match (HITL_SLACK_SIGNING_SECRET)"
    STALE = f"the request is more than {MAX_AGE_SECONDS // 60} minutes old (or from the future)"
    REPLAYED = "this exact request was accepted before (a replay)"


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's `X-Slack-Signature` for `body` sent at `timestamp`."""
    base = f"{VERSION}:{timestamp}:".encode() + body
    return f"{VERSION}=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def signed(secret: str, headers: Mapping[str, str], body: bytes) -> bool:
    """Whether the request carries Slack's signature of `body` (constant-time compare)."""
    timestamp = headers.get("x-slack-request-timestamp", "")
    given = headers.get("x-slack-signature", "")
    if not (secret and timestamp and given):
        return False
    return hmac.compare_digest(signature(secret, timestamp, body).encode(), given.encode())


def fresh(headers: Mapping[str, str], now: float) -> bool:
    """Whether the request's timestamp is within `MAX_AGE_SECONDS` of `now`."""
    raw = headers.get("x-slack-request-timestamp", "")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 12):  # noqa: PLR2004  (seconds since 1970)
        return False
    return abs(now - int(raw)) <= MAX_AGE_SECONDS


async def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    engine: Engine | None = None,
    now: float | None = None,
) -> Verdict:
    """Check signature, age and first use, in that order; accepting records the request (shared database)."""
    now = time.time() if now is None else now
    if not signed(secret, headers, body):
        return Verdict.FORGED
    if not fresh(headers, now):
        return Verdict.STALE
    key = "slack-request:" + hashlib.sha256(headers["x-slack-signature"].encode()).hexdigest()
    first = await asyncio.to_thread(_first_use, key, now, engine)
    return Verdict.ACCEPTED if first else Verdict.REPLAYED


async def first_refusal(headers: Mapping[str, str], *, engine: Engine | None = None) -> bool:
    """Whether this is the first refusal of a signed request's signature (a row in the shared database).

    A stale or replayed request carries a real signature, so its refusal is audited, but once:
    resending one captured request a thousand times adds one record, not a thousand.
    """
    key = "slack-refusal:" + hashlib.sha256(headers.get("x-slack-signature", "").encode()).hexdigest()
    return await asyncio.to_thread(_first_use, key, time.time(), engine)


def _first_use(key: str, now: float, engine: Engine | None) -> bool:
    """Insert `key`; False when it is there already (accepted before, by any replica)."""
    engine = storage.using(engine)
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    statement = (
        dialect.insert(approval_claims)
        .values(interrupt_id=key, claimed_by="slack", claimed_at=now)
        .on_conflict_do_nothing(index_elements=[approval_claims.c.interrupt_id])
        .returning(approval_claims.c.interrupt_id)
    )
    with engine.begin() as conn:
        return conn.execute(statement).first() is not None
