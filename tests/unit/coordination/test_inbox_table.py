"""The inbox table's rows and pages on a real SQLite store: scope, keyset order, counts, what a rewrite keeps.

Rows come from thread records as the runtime lists them (`Pending.from_thread`); pages are read as
`GET /inbox` reads them (`inbox.read_page`, `inbox.read_counts`).
"""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import create_engine, func, insert, select

from server.coordination.inbox import InboxQuery, encode_cursor, read_counts, read_page
from server.coordination.inbox_table import FILLED, InboxTable
from server.coordination.inbox_table_rows import Entry, remove, replace_rows, utc_stamp, written
from server.decisions.pending import Pending
from server.identity.users import User
from server.ledger import storage
from server.ledger.storage import decided_interrupts, inbox, store_marks

_serial = itertools.count()


@pytest.fixture
def store(tmp_path):
    engine = storage.ready(create_engine(f"sqlite:///{tmp_path / 'hitl.db'}"))
    yield engine
    engine.dispose()


def paused(role: str, owner: str = "requester1", minute: int = 0, tool: str = "issue_refund") -> Entry:
    """A thread paused on one call that `role` decides (`owner`: the thread's owner answers)."""
    number = next(_serial)
    value: dict[str, Any] = {
        "action_requests": [{"name": tool, "args": {"n": number}, "tool_call_id": f"call-{number}"}],
        "review_configs": [{"action_name": tool, "allowed_decisions": ["approve"], "required_role": role}],
    }
    thread = {
        "thread_id": f"t-{number:04d}",
        "updated_at": f"2026-12-05T08:{minute:02d}:00+00:00",
        "metadata": {"owner": owner, "graph_id": "support"},
        "status": "interrupted",
        "interrupts": {"task": [{"id": f"i-{number}", "value": value}]},
    }
    return Entry(thread, Pending.from_thread(thread), {})


def put(store, *entries: Entry) -> None:
    for entry in entries:
        with store.begin() as conn:
            read_at = utc_stamp(entry.thread["updated_at"])
            replace_rows(conn, entry.thread["thread_id"], entry, read_at=read_at)


def page(store, user: User, **params: str) -> tuple[list[str], bool]:
    rows, more = read_page(store, user, InboxQuery.from_params(params))
    return [row["thread_id"] for row in rows], more


REVIEWER = User("reviewer1", "reviewer")
SUPERVISOR = User("supervisor1", "supervisor")
OWNER = User("requester1", "requester")


def test_each_caller_sees_what_they_may_decide_once_and_oldest_first(store):
    """scope: groups and own questions, merged in created_at order; a supervisor's two groups, no repeats."""
    by_reviewer, by_supervisor = paused("reviewer", minute=3), paused("supervisor", minute=1)
    question = paused("owner", minute=2)
    put(store, by_reviewer, by_supervisor, question)
    reviewers, supervisors, owners = (e.thread["thread_id"] for e in (by_reviewer, by_supervisor, question))
    assert page(store, SUPERVISOR, limit="50") == ([supervisors, reviewers], False)
    assert page(store, REVIEWER, limit="50") == ([reviewers], False)
    assert page(store, OWNER, limit="50") == ([owners], False)
    assert page(store, User("requester2", "requester"), limit="50") == ([], False)
    assert read_counts(store, SUPERVISOR, InboxQuery()) == (2, {"reviewer": 1, "supervisor": 1})
    assert read_counts(store, OWNER, InboxQuery()) == (1, {"owner": 1})


def test_keyset_pages_walk_every_row_once_across_groups(store):
    """cursor: pages of 3 over 10 rows of two groups cover each once, in order, and say when they end."""
    entries = [paused("reviewer" if i % 2 else "supervisor", minute=i) for i in range(10)]
    put(store, *entries)
    seen: list[str] = []
    params: dict[str, str] = {"limit": "3"}
    while True:
        rows, more = read_page(store, SUPERVISOR, InboxQuery.from_params(params))
        seen += [row["thread_id"] for row in rows]
        if not more:
            break
        last = rows[-1]
        params["cursor"] = encode_cursor(last)
    assert seen == [e.thread["thread_id"] for e in entries]


def test_a_rewrite_keeps_when_a_row_was_first_listed_and_that_it_was_announced(store):
    """replace: the thread read again later keeps its row's created_at and noticed flag."""
    entry = paused("reviewer", minute=5)
    put(store, entry)
    with store.begin() as conn:
        conn.execute(inbox.update().values(noticed=1))
    later = Entry({**entry.thread, "updated_at": "2026-12-05T09:59:00+00:00"}, entry.pending, {})
    put(store, later)
    with store.connect() as conn:
        [(created, noticed)] = conn.execute(select(inbox.c.created_at, inbox.c.noticed)).all()
    assert (created, noticed) == (utc_stamp("2026-12-05T08:05:00+00:00"), 1)


def test_a_record_older_than_the_one_the_rows_came_from_is_not_written(store):
    """stale: a `busy` record read before the pause does not delete the pause's rows; a newer record does."""
    pause = paused("reviewer", minute=5)
    thread_id = pause.thread["thread_id"]
    put(store, pause)
    with store.begin() as conn:
        assert replace_rows(conn, thread_id, None, read_at=utc_stamp("2026-12-05T08:04:59+00:00")) is None
        assert replace_rows(conn, thread_id, pause, read_at=utc_stamp(pause.thread["updated_at"])) == 1
    assert page(store, REVIEWER, limit="50")[0] == [thread_id]
    with store.begin() as conn:  # its run resumed: the newer record has no pause
        assert replace_rows(conn, thread_id, None, read_at=utc_stamp("2026-12-05T08:06:00+00:00")) == 0
        assert replace_rows(conn, thread_id, pause, read_at=utc_stamp(pause.thread["updated_at"])) is None
    assert page(store, REVIEWER, limit="50")[0] == []
    with store.begin() as conn:  # the thread is gone: whatever record comes next is written
        replace_rows(conn, thread_id, None, read_at=None)
        assert replace_rows(conn, thread_id, pause, read_at=utc_stamp(pause.thread["updated_at"])) == 1


def test_an_interrupt_an_accepted_decision_holds_gets_no_row_and_a_decision_removes_its_own(store):
    """claims: a held interrupt is not listed again; `remove` takes out only the decided interrupt's rows."""
    held, other = paused("reviewer"), paused("reviewer")
    with store.begin() as conn:
        conn.execute(insert(decided_interrupts).values(interrupt_id=held.pending[0].id, decision_id="d-1"))
    put(store, held, other)
    assert page(store, REVIEWER, limit="50")[0] == [other.thread["thread_id"]]
    with store.begin() as conn:
        remove(conn, other.thread["thread_id"], [other.pending[0].id])
    assert page(store, REVIEWER, limit="50")[0] == []


def test_filters_narrow_inside_the_scope(store):
    """filters: tool, asked_by, group; a group that is not the caller's lists nothing."""
    refund = paused("reviewer", tool="issue_refund")
    email = paused("reviewer", owner="requester2", tool="send_email")
    put(store, refund, email)
    assert page(store, REVIEWER, tool="send_email")[0] == [email.thread["thread_id"]]
    assert page(store, REVIEWER, asked_by="requester2")[0] == [email.thread["thread_id"]]
    assert page(store, REVIEWER, group="supervisor")[0] == []
    assert read_counts(store, REVIEWER, InboxQuery(tool="send_email"))[0] == 1


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-12-05T09:00:00+01:00", "2026-12-05T08:00:00.000000+00:00"),
        ("2026-12-05T08:00:00", "2026-12-05T08:00:00.000000+00:00"),
        ("not a time", None),
        ("", None),
        (None, None),
    ],
)
def test_stamps_are_stored_in_utc_so_they_sort_as_time_does(raw, expected):
    assert utc_stamp(raw) == expected


def test_each_row_is_counted_as_asked_once_when_announced_or_when_decided_unannounced(store):
    """requested: announced rows come back once; a decision returns only rows nobody announced yet."""
    first, second = paused("reviewer"), paused("reviewer")
    put(store, first, second)
    table = InboxTable(store)
    [announced] = table.announced(first.thread["thread_id"], [first.pending[0].id])
    assert announced["thread_id"] == first.thread["thread_id"]
    assert table.announced(first.thread["thread_id"], [first.pending[0].id]) == []
    with store.begin() as conn:
        assert remove(conn, first.thread["thread_id"], [first.pending[0].id]) == []
        [decided] = remove(conn, second.thread["thread_id"], [second.pending[0].id])
    assert decided["thread_id"] == second.thread["thread_id"]
    assert table.announced(second.thread["thread_id"], [second.pending[0].id]) == []


class SlowRuntime:
    """A runtime whose thread search waits until released: a watcher's repair of many changed threads."""

    def __init__(self) -> None:
        self.released = asyncio.Event()
        self.searching = asyncio.Event()
        self.threads = self

    async def search(self, **_query: object) -> list[dict[str, Any]]:
        self.searching.set()
        await self.released.wait()
        return []


async def test_the_request_path_never_waits_for_a_repair_in_progress(store):
    """a replica's first inbox read while its watcher repairs a long backlog: served at once, not after it."""
    with store.begin() as conn:
        conn.execute(insert(store_marks).values(mark=FILLED, made_at=0.0))
    put(store, paused("reviewer"))
    table, runtime = InboxTable(store), SlowRuntime()
    repair = asyncio.create_task(table.refresh(runtime))  # type: ignore[arg-type]
    await runtime.searching.wait()
    await asyncio.wait_for(table.ready(runtime), timeout=2)  # type: ignore[arg-type]
    assert page(store, REVIEWER, limit="50")[0]
    assert not repair.done()
    runtime.released.set()
    await repair


class Runtime:
    """A runtime listing each thread as `records` has it now (`threads.search(ids=...)`); no run in flight."""

    def __init__(self, records: dict[str, dict[str, Any]]) -> None:
        self.records = records
        self.threads = self
        self.runs = self

    async def search(self, *, ids: list[str], **_query: object) -> list[dict[str, Any]]:
        return [dict(self.records[i]) for i in ids if i in self.records]

    async def list(self, *_args: object, **_query: object) -> list[dict[str, Any]]:
        return []


async def test_a_marked_threads_run_in_flight_is_written_once_per_record_not_once_per_look(store):
    """the marks' loop looks every 0.25 s: a thread whose run waits in the queue writes its (no) rows once.

    A bench fill keeps hundreds of threads marked and busy; each look used to be a write transaction.
    A newer record of it is written again, and its mark still settles once it moved on.
    """
    entry = paused("reviewer")
    put(store, entry)
    thread_id = entry.thread["thread_id"]
    busy = {**entry.thread, "status": "busy", "updated_at": "2026-12-05T08:01:00+00:00", "interrupts": {}}
    runtime = Runtime({thread_id: busy})
    table = InboxTable(store)
    table.mark(thread_id, share=False)
    before = written()
    for _ in range(5):
        await table.read_marked(runtime)  # type: ignore[arg-type]
    assert written() - before == 1
    with store.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(inbox)) == 0  # the first look took its row out
    runtime.records[thread_id] = {**busy, "updated_at": "2026-12-05T08:02:00+00:00"}
    await table.read_marked(runtime)  # type: ignore[arg-type]
    await table.read_marked(runtime)  # type: ignore[arg-type]
    assert written() - before == 2
    assert thread_id in table.marks  # still busy: the mark stays
    runtime.records[thread_id] = {**busy, "status": "idle", "updated_at": datetime.now(UTC).isoformat()}
    await table.read_marked(runtime)  # type: ignore[arg-type]
    assert table.marks == {}
    assert written() - before == 3
