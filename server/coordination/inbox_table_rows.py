"""The rows of the inbox table (`hitl_inbox`): built from a thread as the runtime has it, replaced, removed.

`replace_rows` makes a thread's rows those of its record now (keeping when each was first listed
and whether it was announced; none for an interrupt an accepted decision holds; never from a record
older than the one they were last written from, `hitl_inbox_read`); `remove` takes a
decision's rows out in its own transaction. Both count what they wrote in the same transaction
(`server.ledger.inbox_counts`). `written` counts this process's writes (the inbox's
count cache reads it); `listed_at` remembers when rows read here started waiting (a metric).
Not for keeping the table current (`inbox_table`) or paging it (`inbox`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, insert, select
from sqlalchemy.dialects import postgresql, sqlite

from hitl.recently_used import RecentlyUsed
from server.coordination.inbox_rows import rows_of
from server.ledger import inbox_counts
from server.ledger.storage import decided_interrupts, inbox, inbox_read

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from sqlalchemy import Connection

    from server.decisions.pending import Pending
    from server.records.threads import Escalation

LISTED_KEPT = 100_000
"""When rows this process read started waiting, for the decision-time metric (`listed_at`)."""
_writes = [0]


def written() -> int:
    """How many times this process changed the table (any thread's rows)."""
    return _writes[0]


def wrote() -> None:
    """This process changed the table."""
    _writes[0] += 1


@dataclass(frozen=True)
class Entry:
    """One interrupted thread as the runtime has it now: its record, what waits on it, its escalations."""

    thread: dict[str, Any]
    pending: list[Pending]
    escalations: dict[str, Escalation]


_listed: RecentlyUsed[tuple[str, str], str] = RecentlyUsed(LISTED_KEPT)


def listed(thread_id: str, interrupt_id: str, created_at: str) -> None:
    """This process read a row of `interrupt_id` that has waited since `created_at`."""
    _listed.put((thread_id, interrupt_id), created_at)


def listed_at(thread_id: str, interrupt_id: str) -> str | None:
    """When `interrupt_id` started waiting, if this process read one of its rows lately."""
    return _listed.get((thread_id, interrupt_id))


def utc_stamp(stamp: object) -> str | None:
    """`stamp` (ISO, or a datetime) as a UTC ISO string that sorts as time does; None if unreadable."""
    if isinstance(stamp, datetime):
        moment = stamp
    elif isinstance(stamp, str) and stamp:
        try:
            moment = datetime.fromisoformat(stamp)
        except ValueError:
            return None
    else:
        return None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC).isoformat(timespec="microseconds")
    except OverflowError:  # past year 9999 (or before year 1) in UTC
        return None


def decided_by(deciders: Iterable[str]) -> str:
    """The `decided_by` of a row: its one decider (a group, or `owner`); several joined by `+`.

    A turn's calls have one decider each (`hitl.gate.batched`); a row needing several people at
    once (an older release's batch) is in no one's inbox and is answered on its thread.
    """
    return "+".join(sorted(deciders))


def _approved(row: dict[str, Any]) -> str:
    approvals = row.get("approvals") or {}
    people = approvals.get("approved_by") or [] if isinstance(approvals, dict) else []
    return "," + "".join(f"{person}," for person in people)


def table_rows(entry: Entry, now: float) -> list[dict[str, Any]]:
    """The `hitl_inbox` rows of one interrupted thread (its `noticed` left to the writer)."""
    thread_id = str(entry.thread["thread_id"])
    rows = []
    for row, kept in rows_of(entry.thread, entry.pending, entry.escalations):
        group = decided_by(kept.deciders)
        served = {**row, "group": group, "created_at": utc_stamp(row["created_at"]) or ""}
        rows.append(
            {
                "thread_id": thread_id,
                "interrupt_id": row["interrupt_id"],
                "action_index": row["action_index"],
                "created_at": served["created_at"],
                "decided_by": group,
                "owner": kept.owner,
                "agent": kept.agent,
                "graph_id": kept.graph_id,
                "tool": kept.tool,
                "deadline": utc_stamp(row["deadline"]),
                "approved_by": _approved(row),
                "row": json.dumps(served, default=str),
                "written_at": now,
            }
        )
    return rows


def replace_rows(conn: Connection, thread_id: str, entry: Entry | None, *, read_at: str | None) -> int | None:
    """Make `thread_id`'s rows those of `entry` (None: none) in `conn`'s transaction; how many there are.

    `read_at` is the `updated_at` (`utc_stamp`) of the thread's record `entry` was read from (None:
    the thread is gone). Readers run side by side (the marks, a repair, a waited request, another
    replica), each awaiting between its read and its write: a record older than the one the rows
    were last written from is not written (None), or a reader holding a thread's `busy` record
    would delete the rows of the pause another reader wrote after it. The check is the
    transaction's first statement, so writers of one thread take turns from there on.
    A row keeps when it was first listed and whether it was announced; an interrupt an accepted
    decision holds (`hitl_decided_interrupts`) gets no row.
    """
    if not _newest_read(conn, thread_id, read_at):
        return None
    rows = table_rows(entry, time.time()) if entry is not None else []
    held: set[str] = set()
    if rows:
        ids = {row["interrupt_id"] for row in rows}
        held = set(
            conn.scalars(
                select(decided_interrupts.c.interrupt_id).where(decided_interrupts.c.interrupt_id.in_(ids))
            )
        )
    known = {
        (r.interrupt_id, r.action_index): r
        for r in conn.execute(
            select(inbox.c.interrupt_id, inbox.c.action_index, inbox.c.created_at, inbox.c.noticed).where(
                inbox.c.thread_id == thread_id
            )
        )
    }
    counted = (inbox.c.decided_by, inbox.c.owner, inbox.c.tool)
    kept = []
    for row in rows:
        if row["interrupt_id"] in held:
            continue
        earlier = known.get((row["interrupt_id"], row["action_index"]))
        row["noticed"] = earlier.noticed if earlier is not None else 0
        if earlier is not None and earlier.created_at:
            row["created_at"] = earlier.created_at
            served = json.loads(row["row"])
            row["row"] = json.dumps({**served, "created_at": earlier.created_at}, default=str)
        kept.append(row)
        listed(thread_id, row["interrupt_id"], row["created_at"])
    gone: list[Mapping[Any, Any]] = []
    if known:  # counted as the rows this statement deleted: a decision may have taken some meanwhile
        deleting = delete(inbox).where(inbox.c.thread_id == thread_id).returning(*counted)
        gone = list(conn.execute(deleting).mappings())
    if kept:
        conn.execute(insert(inbox), kept)
    inbox_counts.changed(conn, kept, gone)
    return len(kept)


def _newest_read(conn: Connection, thread_id: str, read_at: str | None) -> bool:
    """Record `read_at` as the record `thread_id`'s rows are written from, unless a newer one was (False)."""
    if read_at is None:
        conn.execute(delete(inbox_read).where(inbox_read.c.thread_id == thread_id))
        return True
    upsert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    statement = upsert(inbox_read).values(thread_id=thread_id, read_at=read_at)
    statement = statement.on_conflict_do_update(
        index_elements=[inbox_read.c.thread_id],
        set_={"read_at": statement.excluded.read_at},
        where=inbox_read.c.read_at <= statement.excluded.read_at,
    )
    return conn.scalar(statement.returning(inbox_read.c.thread_id)) is not None


def remove(conn: Connection, thread_id: str, interrupt_ids: Iterable[str]) -> list[dict[str, Any]]:
    """Take the rows of `interrupt_ids` out of the inbox, in the transaction that decided them.

    Returns the rows the watcher had not announced yet (decided before its next pass), for the
    count of approvals asked: each row is counted once, here or when announced.
    """
    where = (inbox.c.thread_id == thread_id) & inbox.c.interrupt_id.in_(list(interrupt_ids))
    returned = (inbox.c.row, inbox.c.noticed, inbox.c.decided_by, inbox.c.owner, inbox.c.tool)
    gone = conn.execute(delete(inbox).where(where).returning(*returned)).mappings().all()
    inbox_counts.changed(conn, [], gone)
    wrote()
    return [json.loads(row["row"]) for row in gone if not row["noticed"]]
