"""The inbox's counts kept with its rows (`hitl_inbox_counts`) on a real SQLite store: always `count(*)`.

Rows are written as the server writes them (`replace_rows`, `remove`); the counts are compared with
a `GROUP BY` over `hitl_inbox`, and read as `GET /inbox` reads them (`read_counts`).
"""

from __future__ import annotations

import random
import threading

import pytest
from sqlalchemy import case, create_engine, delete, func, literal, select

from server.coordination.inbox import InboxQuery, read_counts
from server.coordination.inbox_table import InboxTable
from server.coordination.inbox_table_rows import remove, replace_rows, utc_stamp
from server.identity.users import User
from server.ledger import inbox_counts, storage
from server.ledger.storage import inbox, store_marks
from tests.unit.coordination.test_inbox_table import paused, put

GROUPS = ("reviewer", "supervisor", "finance", "owner")
OWNERS = ("requester1", "requester2", "requester3")
TOOLS = ("issue_refund", "send_email")


@pytest.fixture
def store(tmp_path):
    engine = storage.ready(create_engine(f"sqlite:///{tmp_path / 'hitl.db'}"))
    yield engine
    engine.dispose()


def counted_rows(engine) -> dict[tuple[str, str, str], int]:
    """`count(*)` of `hitl_inbox` by the counts' key."""
    owner = case(
        (inbox.c.decided_by == "owner", func.coalesce(inbox.c.owner, literal(""))), else_=literal("")
    )
    query = select(inbox.c.decided_by, owner, func.coalesce(inbox.c.tool, ""), func.count()).group_by(
        inbox.c.decided_by, owner, func.coalesce(inbox.c.tool, "")
    )
    with engine.connect() as conn:
        return {(str(g), str(o), str(t)): int(n) for g, o, t, n in conn.execute(query)}


def kept(engine) -> dict[tuple[str, str, str], int]:
    with engine.connect() as conn:
        found = conn.execute(select(storage.inbox_counts)).all()
    return {(g, o, t): n for g, o, t, n in found}


def test_counts_follow_every_insert_rewrite_and_removal(store):
    """300 random writes (pauses, rewrites to other deciders, decisions, threads gone): counts == count(*)."""
    draws = random.Random(58)  # noqa: S311  (a test's data)
    threads: dict[str, object] = {}
    for step in range(300):
        action = draws.random()
        if action < 0.5 or not threads:
            entry = paused(draws.choice(GROUPS), draws.choice(OWNERS), tool=draws.choice(TOOLS))
            put(store, entry)
            threads[entry.thread["thread_id"]] = entry
            continue
        thread_id = draws.choice(sorted(threads))
        entry = threads[thread_id]
        with store.begin() as conn:
            if action < 0.7:  # the thread read again: its decider changed (an escalation)
                again = paused(draws.choice(GROUPS), draws.choice(OWNERS), tool=draws.choice(TOOLS))
                again.thread["thread_id"] = thread_id
                replace_rows(conn, thread_id, again, read_at=utc_stamp(f"2026-12-06T00:00:00.{step:06d}"))
            elif action < 0.85:  # a decision takes its rows out
                remove(conn, thread_id, [p.id for p in entry.pending])  # type: ignore[attr-defined]
                del threads[thread_id]
            else:  # the thread is gone
                replace_rows(conn, thread_id, None, read_at=None)
                del threads[thread_id]
        assert kept(store) == counted_rows(store)
    assert sum(counted_rows(store).values()) > 0
    assert all(n > 0 for n in kept(store).values())  # a key at 0 is deleted


def test_a_page_counts_read_the_counts_and_a_filter_counts_rows(store):
    """read_counts: per group and total from the counts; with a tool filter the total counts the rows."""
    reviewer = User("reviewer1", "reviewer")
    put(store, paused("reviewer"), paused("reviewer", tool="send_email"), paused("supervisor"))
    put(store, paused("owner", owner="reviewer1"), paused("owner", owner="requester2"))
    assert read_counts(store, reviewer, InboxQuery()) == (3, {"owner": 1, "reviewer": 2})
    assert read_counts(store, reviewer, InboxQuery(group="owner")) == (1, {"owner": 1, "reviewer": 2})
    assert read_counts(store, reviewer, InboxQuery(tool="send_email"))[0] == 1
    table = InboxTable(store)
    assert table.groups_waiting() == {"owner": 2, "reviewer": 2, "supervisor": 1}
    assert table.owners_asked() == {"reviewer1", "requester2"}
    assert table.counts_by_tool() == {
        ("issue_refund", "owner"): 2,
        ("issue_refund", "reviewer"): 1,
        ("send_email", "reviewer"): 1,
        ("issue_refund", "supervisor"): 1,
    }


def test_a_store_with_rows_and_no_counts_is_counted_once(store):
    """an older release's rows: counted from the rows on first use, marked, and not again."""
    put(store, *(paused(GROUPS[i % 4], OWNERS[i % 3]) for i in range(12)))
    with store.begin() as conn:
        conn.execute(delete(storage.inbox_counts))
    assert kept(store) == {}
    inbox_counts.counted(store)
    assert kept(store) == counted_rows(store)
    with store.connect() as conn:
        assert conn.scalar(select(store_marks.c.mark).where(store_marks.c.mark == inbox_counts.COUNTED))
    with store.begin() as conn:
        conn.execute(delete(storage.inbox_counts).where(storage.inbox_counts.c.decided_by == "owner"))
    inbox_counts._COUNTED.discard(store)  # noqa: SLF001  (a new process on the same store)
    inbox_counts.counted(store)
    assert "owner" not in {key[0] for key in kept(store)}  # the mark stands: not counted twice


def test_writers_of_one_thread_at_once_take_turns_and_the_newest_record_stays(store):
    """race: 4 writers x 100 records of one thread at once: no write fails, the newest record's rows stay."""
    entry = paused("reviewer")
    thread_id = entry.thread["thread_id"]
    failures: list[Exception] = []
    written: list[tuple[str, bool]] = []

    def writer(seed: int) -> None:
        draws = random.Random(seed)  # noqa: S311  (a test's data)
        for n in range(100):  # each record's stamp its own (the microseconds name the writer and the write)
            read_at = utc_stamp(
                f"2026-12-06T00:{draws.randrange(60):02d}:{draws.randrange(60):02d}.{seed}{n:05d}"
            )
            waiting = draws.random() < 0.5  # the record shows the pause, or the thread busy again
            try:
                with store.begin() as conn:
                    if replace_rows(conn, thread_id, entry if waiting else None, read_at=read_at) is not None:
                        written.append((str(read_at), waiting))
            except Exception as failure:  # noqa: BLE001  (counted: there must be none)
                failures.append(failure)

    writers = [threading.Thread(target=writer, args=(seed,)) for seed in range(4)]
    for running in writers:
        running.start()
    for running in writers:
        running.join()
    assert failures == []
    newest = max(written)
    assert all(stamp <= newest[0] for stamp, _ in written)
    assert sum(counted_rows(store).values()) == (1 if newest[1] else 0)
    assert kept(store) == counted_rows(store)
