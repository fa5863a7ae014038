"""Claims on interrupts, so two answers to one approval give one outcome, on any replica.

A claim is a row in the layer's shared store (`hitl_decided_interrupts`): the interrupt
and the accepted decision that answers it. It is inserted in the same transaction that
records the decision (`server.decisions.store.accept`), all or nothing for an answer to several
interrupts, so it never outlives a decision that was not recorded (a replica that dies
before the commit leaves nothing behind) and never lapses while one is: the decision is
then applied by its own run, a re-send or the reconciler. It is released only when the
decision is given up (`release`). Not for side effects, which stay single by tool call id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite

from server.ledger.storage import decided_interrupts

if TYPE_CHECKING:
    from collections.abc import Iterable

    from sqlalchemy import Connection


def claim(conn: Connection, interrupt_ids: Iterable[str], decision_id: str) -> str | None:
    """Claim every id for `decision_id` in `conn`'s transaction; the decision already holding one, else None.

    On a conflict the caller rolls its transaction back (the claims taken so far go with it).
    Ids are claimed in one order everywhere, so two claimers never wait on each other in a ring.
    """
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    for interrupt_id in sorted(set(interrupt_ids)):
        statement = (
            dialect.insert(decided_interrupts)
            .values(interrupt_id=interrupt_id, decision_id=decision_id)
            .on_conflict_do_nothing(index_elements=[decided_interrupts.c.interrupt_id])
            .returning(decided_interrupts.c.interrupt_id)
        )
        if conn.execute(statement).first() is None:
            holder = holder_of(conn, interrupt_id)
            if holder != decision_id:
                return holder or "?"
    return None


def holder_of(conn: Connection, interrupt_id: str) -> str | None:
    """The decision that holds `interrupt_id`, if any."""
    return conn.scalar(
        select(decided_interrupts.c.decision_id).where(decided_interrupts.c.interrupt_id == interrupt_id)
    )


def release(conn: Connection, decision_id: str) -> None:
    """Release `decision_id`'s claims (it was given up): its interrupts may be answered again."""
    conn.execute(delete(decided_interrupts).where(decided_interrupts.c.decision_id == decision_id))
