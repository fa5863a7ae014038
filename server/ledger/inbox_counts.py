"""How many inbox rows wait, per decider and tool (`hitl_inbox_counts`), kept in each row's own transaction.

Every insert and delete of `hitl_inbox` rows adds its change here in the same transaction, keyed by
the group that decides (`decided_by`), the owner for a question its thread's owner answers (`''` for
a group's), and the tool; so the counts a page carries, the pending gauge and the watcher's look for
unanswerable approvals cost the keys they read, not the rows that wait. Keys are changed in sorted
order (two transactions never wait on each other's keys), and a store that had rows before it had
counts is counted once (`counted`) under a lock that holds the rows' writers.
Not for the rows themselves (`server.coordination.inbox_table_rows`) nor for the counts of a filtered
page (`server.coordination.inbox`).
"""

from __future__ import annotations

import time
import weakref
from collections import Counter
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, delete, func, insert, literal, select, text
from sqlalchemy.dialects import postgresql, sqlite

from server.ledger import storage
from server.ledger.storage import inbox, inbox_counts, store_marks

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from sqlalchemy import Connection, Engine

OWNER = "owner"
"""The `decided_by` of a question its thread's owner answers: counted per owner."""
COUNTED = "inbox-counted"
"""The mark (`hitl_store_marks`) of a store whose counts were once made from its rows."""
Key = tuple[str, str, str]
"""decided_by, owner (of an `OWNER` row, else ''), tool ('' for none)."""
_COUNTED: weakref.WeakSet[Engine] = weakref.WeakSet()


def key_of(row: Mapping[Any, Any]) -> Key:
    """The counts' key of a `hitl_inbox` row (a mapping of its columns)."""
    decided_by = str(row["decided_by"])
    owner = str(row["owner"] or "") if decided_by == OWNER else ""
    return decided_by, owner, str(row["tool"] or "")


def changed(conn: Connection, added: Iterable[Mapping[Any, Any]], gone: Iterable[Mapping[Any, Any]]) -> None:
    """Count the rows `added` and `gone` in `conn`'s transaction (the one that wrote them)."""
    delta: Counter[Key] = Counter()
    for row in added:
        delta[key_of(row)] += 1
    for row in gone:
        delta[key_of(row)] -= 1
    upsert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    for key in sorted(k for k, n in delta.items() if n):
        decided_by, owner, tool = key
        statement = upsert(inbox_counts).values(decided_by=decided_by, owner=owner, tool=tool, n=delta[key])
        statement = statement.on_conflict_do_update(
            index_elements=[inbox_counts.c.decided_by, inbox_counts.c.owner, inbox_counts.c.tool],
            set_={"n": inbox_counts.c.n + statement.excluded.n},
        )
        if conn.scalar(statement.returning(inbox_counts.c.n)) == 0:
            conn.execute(delete(inbox_counts).where(*_at(key), inbox_counts.c.n == 0))


def _at(key: Key) -> list[Any]:
    decided_by, owner, tool = key
    columns = inbox_counts.c
    return [columns.decided_by == decided_by, columns.owner == owner, columns.tool == tool]


def counted(engine: Engine) -> Engine:
    """`engine`, its store's counts made once from its rows if they never were (blocking; once per engine)."""
    if engine in _COUNTED:
        return engine
    with engine.connect() as conn:
        done = conn.scalar(select(store_marks.c.mark).where(store_marks.c.mark == COUNTED))
    if done is None:
        storage.retrying(lambda: _count(engine), "inbox counts")  # a repeat finds them counted
    _COUNTED.add(engine)
    return engine


def _count(engine: Engine) -> None:
    """Make the counts from the rows, holding the rows' writers out meanwhile (SQLite: its write lock)."""
    owner = case((inbox.c.decided_by == OWNER, func.coalesce(inbox.c.owner, literal(""))), else_=literal(""))
    tool = func.coalesce(inbox.c.tool, literal(""))
    with engine.connect() as conn, conn.begin() as transaction:
        if conn.dialect.name == "postgresql":  # writers of rows wait; they change counts after rows
            conn.execute(text(f"LOCK TABLE {inbox.name} IN SHARE ROW EXCLUSIVE MODE"))
        conn.execute(delete(inbox_counts))  # SQLite: takes the write lock before the rows are read
        if conn.scalar(select(store_marks.c.mark).where(store_marks.c.mark == COUNTED)) is not None:
            transaction.rollback()  # another process counted it first
            return
        rows = select(inbox.c.decided_by, owner, tool, func.count()).group_by(inbox.c.decided_by, owner, tool)
        conn.execute(insert(inbox_counts).from_select(["decided_by", "owner", "tool", "n"], rows))
        conn.execute(insert(store_marks).values(mark=COUNTED, made_at=time.time()))


def of_reader(conn: Connection, groups: Iterable[str], identity: str) -> dict[str, int]:
    """How many rows each of `groups` decides, and the reader's own questions (as `OWNER`): O(keys read)."""
    wanted = sorted(set(groups))
    where = (inbox_counts.c.decided_by.in_(wanted) & (inbox_counts.c.owner == "")) | (
        (inbox_counts.c.decided_by == OWNER) & (inbox_counts.c.owner == identity)
    )
    query = select(inbox_counts.c.decided_by, func.sum(inbox_counts.c.n)).where(where)
    found = conn.execute(query.group_by(inbox_counts.c.decided_by)).all()
    return {str(group): int(n) for group, n in found if n}


def by_tool(conn: Connection) -> dict[tuple[str, str], int]:
    """How many rows wait, by tool and the group that decides them (every key: O(groups x tools))."""
    query = select(inbox_counts.c.tool, inbox_counts.c.decided_by, func.sum(inbox_counts.c.n)).group_by(
        inbox_counts.c.tool, inbox_counts.c.decided_by
    )
    return {(str(tool)[:100], str(group)): int(n) for tool, group, n in conn.execute(query) if n}


def by_group(conn: Connection) -> dict[str, int]:
    """Every `decided_by` that has rows, and how many."""
    query = select(inbox_counts.c.decided_by, func.sum(inbox_counts.c.n)).group_by(inbox_counts.c.decided_by)
    return {str(group): int(n) for group, n in conn.execute(query) if n}


def owners(conn: Connection) -> set[str]:
    """Every owner a question of their own waits for."""
    query = select(inbox_counts.c.owner).where(inbox_counts.c.decided_by == OWNER, inbox_counts.c.n > 0)
    return {str(owner) for owner in conn.scalars(query.distinct()) if owner}
