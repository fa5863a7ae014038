"""The inbox's rows in the layer's own store (`hitl_inbox`): one per pending call, shared by every replica.

The runtime (LangGraph's threads) stays the truth; the table is what the inbox, the watcher and the
metrics read, so a replica keeps nothing per pending approval in memory and reads nothing
proportional to the queue at start. Rows are written from the runtime, never from a client:

- **Marks.** Every run, state write or delete the engine made through this process's auth
  handlers marks its thread once it answered 2xx (`server.http.inbox_marks`; a refused
  write marks nothing), as do the server's own runs and decisions (other replicas' marks arrive by
  `server.coordination.broadcast`); a loop reads the marked threads again every
  `MARKS_EVERY_SECONDS` (one `threads.search(ids=...)`) until they settle, and replaces their
  rows: a pause is listed on every replica within a second. A marked thread whose run waits or
  runs is written once per record of it, not once per look (`_written_empty`). A request that
  waited for its run's end reads that one thread at once (`read_waited`). An inbox page never
  reads a thread.
- **A decision** removes the rows of what it answers in its own transaction
  (`server.decisions.store.accept`); a row of an interrupt an accepted decision holds is never written.
- **Repair** (each watcher pass, on any replica): the threads the runtime changed since the shared
  watermark (`hitl_inbox_seen`), newest first, so a pause whose replica died before it wrote the
  row is listed on the next pass; a pass costs what changed, not what waits. A store that never
  had rows (a new one, or one an older release kept in memory) is filled once from every
  interrupted thread.

The three run side by side and await between reading a thread and writing its rows; a thread's rows
are never written from a record older than the one they came from (`inbox_table_rows.replace_rows`),
and a reader whose record was older leaves the mark for a newer read to settle.

It is one concept: the table kept current from the runtime, by each of the three ways above.
Not for building a row (`inbox_rows`), writing one (`inbox_table_rows`) or serving a page (`inbox`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import insert, select, update

from server.coordination.inbox_rows import (
    FIELDS,
    SEARCH_PAGE,
    interrupted_threads,
    newest_update,
    pending_of,
    runs_in_flight,
)
from server.coordination.inbox_table_rows import Entry, replace_rows, utc_stamp, wrote
from server.identity.access import as_server
from server.ledger import inbox_counts, storage
from server.ledger.storage import inbox, inbox_seen, store_marks
from server.records import threads

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from langgraph_sdk.client import LangGraphClient
    from sqlalchemy import Engine

    from server.records.threads import Escalation

logger = logging.getLogger(__name__)

WATCH_BATCH = 500
"""At most this many threads of each kind (new, due, unanswerable) per watcher pass; the rest the next."""
FILLED = "inbox-filled"
"""The mark (`hitl_store_marks`) of a store whose rows were once filled from every interrupted thread."""
CHANGES = "changes"
READS = ("fill", "repair", "marks", "watcher", "waited")
"""Why a thread is read again: a store's first fill, a watcher's repair, a mark, the watcher's look at
new or due rows, a request that waited for its run to end (`server.http.inbox_marks`)."""


class Sharing(Protocol):
    """Where this process's marks and escalations go to the other replicas (`broadcast.Broadcast`)."""

    def mark(self, thread_id: str, at: datetime) -> None:
        """Tell the others that `thread_id` changed at `at`."""

    def escalate(self, escalation: Escalation) -> None:
        """Tell the others of an escalation."""


class InboxTable:
    """Keeps `hitl_inbox` current from the runtime; see the module docstring for how."""

    CHANGES_PAGE = 200
    FIRST_CHANGES = 8
    """A pass in which little changed asks the runtime for this many threads only."""
    SETTLE_SECONDS = 120.0
    """A mark whose thread never moved (a refused or failed run) is dropped after this long."""
    MARKS_EVERY_SECONDS = 0.25

    def __init__(self, engine: Engine | None = None) -> None:
        """Write to `engine` (the layer's own store by default)."""
        self._engine = engine
        self.marks: dict[str, datetime] = {}
        self.filled = False
        """Whether this process saw the store filled (`FILLED`): until then its first read fills it."""
        self._repairing = asyncio.Lock()
        """One repair (a fill, the changes since the watermark) at a time; the request path never takes it
        but to fill a store never filled."""
        self._reading_marks = asyncio.Lock()
        self.broadcast: Sharing | None = None
        """Where this process's marks and escalations go to the other replicas (`broadcast`)."""
        self.reread: Counter[str] = Counter()
        """Threads this process read again from the runtime, by why (`READS`): the metrics' counter."""
        self._written_empty: dict[str, str] = {}
        """Marked threads whose rows this process last wrote as none, by that record's `updated_at`: the
        marks' loop writes the same record's (no) rows once, not every look while its run waits."""

    @property
    def engine(self) -> Engine:
        """The store the rows are in (made ready, its rows counted, on first use; blocking)."""
        return inbox_counts.counted(storage.using(self._engine))

    def mark(self, thread_id: str, *, at: datetime | None = None, share: bool = True) -> None:
        """Something is changing `thread_id` (since `at`, now by default): read it again until it settles.

        A mark made here is also sent to the other replicas (`share`); theirs arrive with `share` off.
        """
        at = at or datetime.now(UTC)
        if (known := self.marks.get(thread_id)) is None or known < at:
            self.marks[thread_id] = at
        if share and self.broadcast is not None:
            self.broadcast.mark(thread_id, at)

    def escalate(self, escalation: Escalation, *, share: bool = True) -> None:
        """`escalation` was recorded (here, or on another replica when `share` is off): its rows change."""
        if share and self.broadcast is not None:
            self.broadcast.escalate(escalation)
        self.mark(escalation.thread_id, share=False)

    async def ready(self, client: LangGraphClient) -> None:
        """The request path: nothing, once this process saw the store filled; never waits for a repair.

        Only a store never filled (new, or upgraded from an older release) is filled first, once.
        """
        if not self.filled and await asyncio.to_thread(self._seen) is None:
            async with self._repairing:
                if await asyncio.to_thread(self._seen) is None:
                    await self._fill(client)
        self.filled = True

    async def read_waited(self, client: LangGraphClient, thread_id: str) -> None:
        """A request waited for a run on `thread_id` to end: its rows now, if it is marked (one thread)."""
        if thread_id in self.marks:
            async for _ in self.entries(client, [thread_id], "waited"):
                pass

    async def refresh(self, client: LangGraphClient) -> None:
        """A watcher pass: a new store filled once, else the threads changed since the last; the marks."""
        async with self._repairing:
            seen = await asyncio.to_thread(self._seen)
            if seen is None:
                await self._fill(client)
            else:
                await self._read_changes(client, seen)
        self.filled = True
        await self.read_marked(client)

    async def read_marked(self, client: LangGraphClient) -> None:
        """The marked threads' rows, current (one reader at a time)."""
        if self.marks:
            async with self._reading_marks:
                async for _ in self.entries(client, list(self.marks), "marks"):
                    pass

    async def keep_marks_read(self, client: LangGraphClient) -> None:
        """Read the marked threads every `MARKS_EVERY_SECONDS` until cancelled (the server's lifespan)."""
        while True:
            try:
                with as_server():
                    await self.ready(client)
                    await self.read_marked(client)
            except Exception:
                logger.exception("inbox: reading the marked threads failed; trying again")
            await asyncio.sleep(self.MARKS_EVERY_SECONDS)

    async def entries(
        self, client: LangGraphClient, thread_ids: Iterable[str], why: str = "watcher"
    ) -> AsyncIterator[Entry]:
        """The runtime's current record of each of `thread_ids` still interrupted (its rows replaced too)."""
        wanted = list(dict.fromkeys(thread_ids))
        for start in range(0, len(wanted), SEARCH_PAGE):
            ids = wanted[start : start + SEARCH_PAGE]
            page = await client.threads.search(ids=ids, limit=len(ids), select=FIELDS)  # type: ignore[arg-type]
            found = {str(t["thread_id"]): dict(t) for t in page}
            for thread_id in ids:
                entry = await self._read(client, thread_id, found.get(thread_id), why)
                if entry is not None:
                    yield entry

    def counts_by_tool(self) -> dict[tuple[str, str], int]:
        """How many rows wait, by tool and the group that decides them (blocking; the counts kept)."""
        with self.engine.connect() as conn:
            return inbox_counts.by_tool(conn)

    def to_watch(self, now: datetime, unanswerable: set[str]) -> dict[str, set[str]]:
        """The threads a watcher pass looks at, each with why (new, due, unanswerable); blocking.

        Rows not yet announced, past their deadline, or decided by one of `unanswerable` (groups,
        or `owner:<name>`): each kind read by its own index, at most `WATCH_BATCH` threads.
        """
        due = utc_stamp(now) or ""
        groups = {u for u in unanswerable if not u.startswith("owner:")}
        owners = {u.removeprefix("owner:") for u in unanswerable - groups}
        found: dict[str, set[str]] = {}
        kinds = [("new", inbox.c.noticed == 0), ("due", inbox.c.deadline <= due)]
        if groups:
            kinds.append(("unanswerable", inbox.c.decided_by.in_(groups)))
        if owners:
            kinds.append(("unanswerable", (inbox.c.decided_by == "owner") & inbox.c.owner.in_(owners)))
        with self.engine.connect() as conn:
            for why, where in kinds:
                query = select(inbox.c.thread_id).where(where).distinct().limit(WATCH_BATCH)
                for thread_id in conn.scalars(query):
                    found.setdefault(thread_id, set()).add(why)
        return found

    def groups_waiting(self) -> dict[str, int]:
        """Every `decided_by` that has rows, and how many (blocking; the counts kept)."""
        with self.engine.connect() as conn:
            return inbox_counts.by_group(conn)

    def owners_asked(self) -> set[str]:
        """Every owner a question waits for (blocking; the counts kept)."""
        with self.engine.connect() as conn:
            return inbox_counts.owners(conn)

    def announced(self, thread_id: str, interrupt_ids: Iterable[str]) -> list[dict[str, Any]]:
        """Mark the rows of `interrupt_ids` announced; the rows that were not yet (blocking; each once)."""
        where = (
            (inbox.c.thread_id == thread_id)
            & inbox.c.interrupt_id.in_(list(interrupt_ids))
            & (inbox.c.noticed == 0)
        )
        with self.engine.begin() as conn:
            rows = conn.scalars(update(inbox).where(where).values(noticed=1).returning(inbox.c.row)).all()
        return [json.loads(row) for row in rows]

    def _seen(self) -> str | None:
        """How far the watchers read the runtime's changes; None for a store never filled."""
        with self.engine.connect() as conn:
            filled = conn.scalar(select(store_marks.c.mark).where(store_marks.c.mark == FILLED))
            seen = conn.scalar(select(inbox_seen.c.seen_until).where(inbox_seen.c.name == CHANGES))
        return None if filled is None else (seen or "")

    def _saw(self, stamp: str, *, filled: bool = False) -> None:
        """Move the shared watermark on to `stamp` (never back); mark the store filled once."""
        with self.engine.begin() as conn:
            current = conn.scalar(select(inbox_seen.c.seen_until).where(inbox_seen.c.name == CHANGES))
            if current is None:
                conn.execute(insert(inbox_seen).values(name=CHANGES, seen_until=stamp))
            elif stamp > current:
                conn.execute(update(inbox_seen).where(inbox_seen.c.name == CHANGES).values(seen_until=stamp))
            if filled:
                with contextlib.suppress(Exception), conn.begin_nested():  # another replica filled it too
                    conn.execute(insert(store_marks).values(mark=FILLED, made_at=time.time()))

    async def _fill(self, client: LangGraphClient) -> None:
        """Every interrupted thread's rows, once per store (read in pages; a store's first pass only)."""
        newest = await newest_update(client)
        started = time.monotonic()
        count = 0
        async for thread in interrupted_threads(client):
            await self._read(client, str(thread["thread_id"]), thread, "fill")
            count += 1
        await asyncio.to_thread(self._saw, newest, filled=True)
        logger.info("inbox: filled from %d interrupted threads in %.1f s", count, time.monotonic() - started)

    async def _read_changes(self, client: LangGraphClient, seen: str) -> None:
        """The threads updated since `seen`, newest first, in pages that grow from `FIRST_CHANGES`."""
        offset, newest, limit = 0, seen, self.FIRST_CHANGES
        while True:
            page = await client.threads.search(
                sort_by="updated_at",
                sort_order="desc",
                limit=limit,
                offset=offset,
                select=FIELDS,  # type: ignore[arg-type]
            )
            for thread in map(dict, page):
                stamp = str(thread.get("updated_at") or "")
                if stamp < seen:
                    break
                newest = max(newest, stamp)
                thread_id = str(thread["thread_id"])
                if stamp > seen or not await asyncio.to_thread(self._listed, thread_id, thread):
                    await self._read(client, thread_id, thread, "repair")
            else:
                if len(page) == limit:
                    offset, limit = offset + limit, min(limit * 4, self.CHANGES_PAGE)
                    continue
            break
        if newest != seen:
            await asyncio.to_thread(self._saw, newest)

    def _listed(self, thread_id: str, thread: dict[str, Any]) -> bool:
        """Whether the table already agrees with `thread` (the one at the watermark, read each pass)."""
        with self.engine.connect() as conn:
            has_rows = conn.scalar(select(inbox.c.thread_id).where(inbox.c.thread_id == thread_id).limit(1))
        return (has_rows is not None) == (thread.get("status") == "interrupted")

    async def _read(
        self, client: LangGraphClient, thread_id: str, thread: dict[str, Any] | None, why: str
    ) -> Entry | None:
        """Replace `thread_id`'s rows with what the runtime has now (None: it is gone); settle its mark."""
        self.reread[why] += 1
        entry = None
        if thread is not None and thread.get("status") == "interrupted":
            try:
                pending = await pending_of(client, thread)
                escalations = await threads.escalations_of(client, thread_id)
            except Exception:  # one unreadable thread keeps its old rows; the others are read
                logger.exception("inbox: could not read thread %s", thread_id)
                return None
            entry = Entry(
                thread, pending, {i: e for i, e in escalations.items() if i in {p.id for p in pending}}
            )
        read_at = None if thread is None else utc_stamp(thread.get("updated_at")) or ""
        if why == "marks" and thread is not None and entry is None and self._unchanged(thread_id, read_at):
            await self._settle(client, thread)
            return None
        try:
            written = await asyncio.to_thread(self._write, thread_id, entry, read_at)
        except Exception:  # a thread the table cannot take is skipped, never the whole inbox
            logger.exception("inbox: skipping thread %s, its rows could not be written", thread_id)
            return None
        if not written:  # a newer record was written meanwhile: a read of it settles the mark
            self._drop_if_old(thread_id)
            return None
        if entry is None and read_at and thread_id in self.marks:
            self._written_empty[thread_id] = read_at
        else:
            self._written_empty.pop(thread_id, None)
        if thread is None:
            self._unmark(thread_id)
        else:
            await self._settle(client, thread)
        return entry

    def _unchanged(self, thread_id: str, read_at: str | None) -> bool:
        """Whether this process last wrote `thread_id`'s rows as none from this very record."""
        return bool(read_at) and self._written_empty.get(thread_id) == read_at

    def _unmark(self, thread_id: str) -> None:
        """`thread_id` settled: no mark, nothing remembered of it."""
        self.marks.pop(thread_id, None)
        self._written_empty.pop(thread_id, None)

    def _write(self, thread_id: str, entry: Entry | None, read_at: str | None) -> bool:
        """Replace `thread_id`'s rows from its record of `read_at`; False if a newer record's are there."""

        def once() -> int | None:
            with self.engine.begin() as conn:
                return replace_rows(conn, thread_id, entry, read_at=read_at)

        if storage.retrying(once, f"inbox rows of {thread_id}") is None:
            return False
        wrote()
        return True

    def _drop_if_old(self, thread_id: str) -> None:
        """Drop `thread_id`'s mark once older than `SETTLE_SECONDS` (were the runtime's clock set back)."""
        marked = self.marks.get(thread_id)
        if marked is not None and (datetime.now(UTC) - marked).total_seconds() > self.SETTLE_SECONDS:
            self._unmark(thread_id)

    async def _settle(self, client: LangGraphClient, thread: dict[str, Any]) -> None:
        """Drop `thread`'s mark once it moved since and no run of it is in flight (or the mark is old).

        The runtime may show a thread `idle` while its run still runs (its status set at a checkpoint
        counts pending runs only): such a thread is asked for its runs before its mark goes, or its
        pause would wait for the next repair.
        """
        thread_id = str(thread["thread_id"])
        marked = self.marks.get(thread_id)
        if marked is None or thread.get("status") == "busy":
            return
        stamp = thread.get("updated_at")
        try:
            moved = stamp is not None and datetime.fromisoformat(str(stamp)) >= marked
        except ValueError:
            moved = True
        if (datetime.now(UTC) - marked).total_seconds() <= self.SETTLE_SECONDS and (
            not moved or (thread.get("status") == "idle" and await runs_in_flight(client, thread_id))
        ):
            return
        self._unmark(thread_id)


TABLE = InboxTable()
