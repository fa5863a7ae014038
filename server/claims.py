"""Claims on interrupts being answered, so two answers to one approval give one outcome.

A claim is a row in the shared business database (`approval_claims`), so replicas on one
database refuse a second answer too. It is taken after every check and before the run is
created, all or nothing for an answer to several interrupts, and lapses after
`HOLD_SECONDS` so a resume whose run never started cannot wedge the approval. Not for
side effects, which stay single through their tool-call-id idempotency.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite

from server import shared_db
from server.resume_gate import ResumeRefused
from services.database import approval_claims

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

HOLD_SECONDS = 30.0
KEPT_SECONDS = 24 * 3600.0
"""How long a lapsed claim's row stays before it is deleted (each process looks hourly)."""
PRUNE_EVERY_SECONDS = 3600.0
_pruned_at = 0.0


async def take(
    interrupt_ids: list[str], who: str, *, engine: Engine | None = None, now: float | None = None
) -> None:
    """Claim every id for `who`, or none of them; off the event loop, one short transaction.

    `engine` is the business database's (the default); `now` is seconds since the epoch.

    Raises:
        ResumeRefused: 409 naming who is already answering one of them.
    """
    await asyncio.to_thread(take_now, interrupt_ids, who, engine=engine, now=now)


def take_now(
    interrupt_ids: list[str], who: str, *, engine: Engine | None = None, now: float | None = None
) -> None:
    """`take`, blocking: for threads and processes that are not on an event loop."""
    engine = engine or shared_db.engine()
    now = time.time() if now is None else now
    with engine.begin() as conn:
        for interrupt_id in sorted(set(interrupt_ids)):  # one order everywhere: no deadlock
            if not _claim(conn, interrupt_id, who, now):
                holder = conn.scalar(
                    select(approval_claims.c.claimed_by).where(approval_claims.c.interrupt_id == interrupt_id)
                )
                msg = f"Interrupt {interrupt_id} is already being answered by {holder}."
                raise ResumeRefused(409, msg)  # leaving the block rolls back the claims taken so far
    _prune(engine, now)


def _claim(conn: Connection, interrupt_id: str, who: str, now: float) -> bool:
    """Insert the claim, or take over a lapsed one; False when a live claim holds it."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(approval_claims).values(
        interrupt_id=interrupt_id, claimed_by=who, claimed_at=now
    )
    statement = statement.on_conflict_do_update(
        index_elements=[approval_claims.c.interrupt_id],
        set_={"claimed_by": who, "claimed_at": now},
        where=approval_claims.c.claimed_at < now - HOLD_SECONDS,
    )
    return conn.execute(statement.returning(approval_claims.c.interrupt_id)).first() is not None


def _prune(engine: Engine, now: float) -> None:
    """Delete long-lapsed claims, at most once an hour per process, apart from any claim."""
    global _pruned_at  # noqa: PLW0603  (one timestamp per process)
    if now - _pruned_at < PRUNE_EVERY_SECONDS:
        return
    _pruned_at = now
    with engine.begin() as conn:
        conn.execute(delete(approval_claims).where(approval_claims.c.claimed_at < now - KEPT_SECONDS))
