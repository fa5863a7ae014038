"""Where the audit trail is kept: rows in the layer's own store, one chain per thread.

Appending locks the thread's head row first (`SELECT ... FOR UPDATE` on PostgreSQL; on SQLite
the first write takes the database's one write lock), reads the last hash, links the new
records after it (`hitl.proof.audit_chain.link`) and moves the head, all in one transaction: writers
on any replica queue on the head, so two records never share a `prev_hash`. `server.decisions.store`
appends an accepted decision's records in the same transaction as its claim. Blocking: callers
off the event loop use `asyncio.to_thread`. Not for what a record says (`server.records.audit`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite

from hitl.proof import audit_chain
from server.ledger import storage
from server.ledger.storage import audit_heads, audit_records

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from sqlalchemy import Connection, Engine


@dataclass(frozen=True)
class Head:
    """A thread's last record: its position, key and hash (0, '' and '' before the first)."""

    thread_id: str
    seq: int
    key: str
    hash: str

    def as_json(self) -> dict[str, str]:
        """The head as `GET /audit/{thread_id}` and verification show it."""
        return audit_chain.head(self.key, self.hash)


def lock_head(conn: Connection, thread_id: str) -> Head:
    """Lock `thread_id`'s head for this transaction and read it (made empty on a thread's first record)."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    conn.execute(
        dialect.insert(audit_heads)
        .values(thread_id=thread_id, seq=0, key="", hash="")
        .on_conflict_do_nothing(index_elements=[audit_heads.c.thread_id])
    )
    row = conn.execute(
        select(audit_heads.c.seq, audit_heads.c.key, audit_heads.c.hash)
        .where(audit_heads.c.thread_id == thread_id)
        .with_for_update()
    ).one()
    return Head(thread_id, int(row.seq), str(row.key), str(row.hash))


def append(conn: Connection, head: Head, records: Sequence[Mapping[str, Any]]) -> Head:
    """Chain `records` after the locked `head` and move it; the new head."""
    for record in records:
        seq = head.seq + 1
        key = f"{seq:08d}"
        linked = audit_chain.link({k: v for k, v in record.items() if k != "key"}, head.hash)
        stored = json.dumps({**linked, "key": key}, default=str, ensure_ascii=False)
        conn.execute(audit_records.insert().values(thread_id=head.thread_id, seq=seq, record=stored))
        head = Head(head.thread_id, seq, key, str(linked["hash"]))
    conn.execute(
        update(audit_heads)
        .where(audit_heads.c.thread_id == head.thread_id)
        .values(seq=head.seq, key=head.key, hash=head.hash)
    )
    return head


def write(records: Sequence[Mapping[str, Any]], *, engine: Engine | None = None) -> None:
    """Append `records` to their threads' trails, a transaction per thread (retried over a restart)."""
    database = storage.using(engine)
    for thread_id, batch in groupby(records, key=lambda r: str(r["thread_id"])):
        chained = list(batch)

        def append_all(thread_id: str = thread_id, chained: list[Mapping[str, Any]] = chained) -> None:
            with database.begin() as conn:
                append(conn, lock_head(conn, thread_id), chained)

        storage.retrying(append_all, f"audit trail of {thread_id}")


def head_of(thread_id: str, *, engine: Engine | None = None) -> Head:
    """`thread_id`'s head as committed now (not locked)."""
    database = storage.using(engine)
    with database.connect() as conn:
        row = conn.execute(
            select(audit_heads.c.seq, audit_heads.c.key, audit_heads.c.hash).where(
                audit_heads.c.thread_id == thread_id
            )
        ).first()
    return Head(thread_id, int(row.seq), str(row.key), str(row.hash)) if row else Head(thread_id, 0, "", "")


def read(thread_id: str, *, engine: Engine | None = None) -> tuple[list[dict[str, Any]], Head]:
    """`thread_id`'s records, oldest first with their `key`, and the head they end at."""
    database = storage.using(engine)
    with database.connect() as conn:  # the head first: records after it (a later append) are left out
        row = conn.execute(
            select(audit_heads.c.seq, audit_heads.c.key, audit_heads.c.hash).where(
                audit_heads.c.thread_id == thread_id
            )
        ).first()
        head = (
            Head(thread_id, int(row.seq), str(row.key), str(row.hash)) if row else Head(thread_id, 0, "", "")
        )
        rows = conn.scalars(
            select(audit_records.c.record)
            .where(audit_records.c.thread_id == thread_id, audit_records.c.seq <= head.seq)
            .order_by(audit_records.c.seq)
        )
        return [json.loads(r) for r in rows], head


def read_all(*, engine: Engine | None = None) -> list[dict[str, Any]]:
    """Every record of every thread's trail, by thread and in each trail's order (for the analytics)."""
    database = storage.using(engine)
    with database.connect() as conn:
        rows = conn.scalars(
            select(audit_records.c.record).order_by(audit_records.c.thread_id, audit_records.c.seq)
        )
        return [json.loads(r) for r in rows]
