"""`PendingIndex`: every pending approval, kept current without rereading every thread.

The inbox and the watcher read from it. Three ways keep it current:

- **Marks** (the request path). Every run, state write or delete that goes through this
  process's auth handlers marks its thread; the next read looks up only the marked threads
  (one `threads.search(ids=...)`) and keeps re-reading a mark until its thread has settled
  (not busy, and updated since the mark).
- **Shared marks** (`server.coordination.broadcast`): the marks and escalations of the other replicas,
  sent over the layer's own store as they are made.
- **Changes** (each watcher pass). The threads updated since the last pass, newest first:
  what other processes (replicas, crons) changed shows up within `HITL_WATCH_INTERVAL`.
- **A full re-read** (a watcher pass at most every `FULL_EVERY_SECONDS`, and the first look).

Rows are built once per thread version and kept in a sorted list, so a page costs its own
size plus one pass of cheap visibility checks for the total, not a rebuild of every row.
Each process keeps its own index; the runtime's database stays the truth.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from sortedcontainers import SortedList

from server.coordination.inbox_rows import (
    FIELDS,
    SEARCH_PAGE,
    IndexedRow,
    RowKey,
    interrupted_threads,
    pending_of,
    rows_of,
)
from server.records import threads

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

    from server.decisions.pending import Pending
    from server.records.threads import Escalation

logger = logging.getLogger(__name__)


class Sharing(Protocol):
    """Where this process's marks and escalations go to the other replicas (`broadcast.Broadcast`)."""

    def mark(self, thread_id: str, at: datetime) -> None:
        """Tell the others that `thread_id` changed at `at`."""

    def escalate(self, escalation: Escalation) -> None:
        """Tell the others of an escalation."""


@dataclass(frozen=True)
class Entry:
    """One interrupted thread: its record, what waits on it, and the keys of its rows."""

    thread: dict[str, Any]
    pending: list[Pending]
    escalations: dict[str, Escalation]
    keys: tuple[RowKey, ...]


class PendingIndex:
    """Every interrupted thread and its inbox rows; see the module docstring for how it stays current."""

    FULL_EVERY_SECONDS = 60.0
    CHANGES_PAGE = 200
    SETTLE_SECONDS = 120.0
    """A mark whose thread never moved (a refused or failed run) is dropped after this long."""

    def __init__(self) -> None:
        """Start empty; the first look reads everything."""
        self.entries: dict[str, Entry] = {}
        self.rows: dict[RowKey, IndexedRow] = {}
        self.order: SortedList = SortedList()
        self.marks: dict[str, datetime] = {}
        self.escalations: dict[str, dict[str, Escalation]] = {}
        """The server's escalation records, by thread (`server.records.threads`), re-read on each pass."""
        self.version = 0
        self.loaded = False
        self.seen_until = ""
        self.full_at = -self.FULL_EVERY_SECONDS
        self._lock = asyncio.Lock()
        self.broadcast: Sharing | None = None
        """Where this process's marks and escalations go to the other replicas

        (`server.coordination.broadcast`).
        """

    def mark(self, thread_id: str, *, at: datetime | None = None, share: bool = True) -> None:
        """Something is changing `thread_id` (since `at`, now by default): re-read it until it settles.

        A mark made here is also sent to the other replicas (`share`); theirs arrive with `share` off.
        """
        at = at or datetime.now(UTC)
        if (known := self.marks.get(thread_id)) is None or known < at:
            self.marks[thread_id] = at
        if share and self.broadcast is not None:
            self.broadcast.mark(thread_id, at)

    async def sync(self, client: LangGraphClient) -> None:
        """The request path: the first look reads everything, later ones only the marked threads."""
        async with self._lock:
            if not self.loaded:
                await self._read_all(client)
            await self._read_marked(client)

    async def refresh(self, client: LangGraphClient) -> None:
        """A watcher pass: a full re-read now and then, else the threads changed since the last pass."""
        async with self._lock:
            if time.monotonic() - self.full_at >= self.FULL_EVERY_SECONDS:
                await self._read_all(client)
            else:
                await self._load_escalations(client)
                await self._read_changes(client)
            await self._read_marked(client)

    def escalate(self, escalation: Escalation, *, share: bool = True) -> None:
        """`escalation` was recorded (here, or on another replica when `share` is off): its rows change."""
        if share and self.broadcast is not None:
            self.broadcast.escalate(escalation)
        self.escalations.setdefault(escalation.thread_id, {})[escalation.interrupt_id] = escalation
        if (entry := self.entries.get(escalation.thread_id)) is not None:
            self._put(escalation.thread_id, entry.thread, entry.pending)

    def threads(self) -> list[Entry]:
        """Every indexed thread with what waits on it (a copy: the index may change meanwhile)."""
        return list(self.entries.values())

    def page(self, after: RowKey | None, limit: int, keep: Any) -> tuple[list[dict[str, Any]], bool]:  # noqa: ANN401  (a row predicate)
        """Up to `limit` rows after `after` that `keep` accepts, oldest first, and whether more follow."""
        start = 0 if after is None else self.order.bisect_right(after)
        keys: list[RowKey] = []
        more = False
        for key in self.order.islice(start):
            if keep(self.rows[key]):
                if len(keys) == limit:
                    more = True
                    break
                keys.append(key)
        built: dict[str, dict[RowKey, dict[str, Any]]] = {}
        for thread_id in dict.fromkeys(key[1] for key in keys):
            entry = self.entries[thread_id]
            built[thread_id] = {
                kept.key: row for row, kept in rows_of(entry.thread, entry.pending, entry.escalations)
            }
        return [built[key[1]][key] for key in keys], more

    def count(self, keep: Any) -> int:  # noqa: ANN401  (a row predicate)
        """How many rows `keep` accepts."""
        return sum(1 for indexed in self.rows.values() if keep(indexed))

    async def _read_all(self, client: LangGraphClient) -> None:
        started = time.monotonic()
        newest = await self._newest(client)
        await self._load_escalations(client)
        found, unread = {}, set()
        async for thread in interrupted_threads(client):
            try:
                found[str(thread["thread_id"])] = (thread, await pending_of(client, thread))
            except Exception:  # one unreadable thread keeps its old rows; the others are read
                logger.exception("inbox: could not read thread %s", thread.get("thread_id"))
                unread.add(str(thread.get("thread_id")))
        for thread_id in set(self.entries) - set(found) - unread:
            self._drop(thread_id)
        for thread_id, (thread, pending) in found.items():
            self._put(thread_id, thread, pending)
            self._settle(thread)
        self.seen_until, self.full_at, self.loaded = newest, started, True

    async def _load_escalations(self, client: LangGraphClient) -> None:
        """Re-read every escalation record; rebuild the rows of threads whose records changed."""
        loaded = await threads.all_escalations(client)
        before = self.escalations
        changed = {t for t in loaded.keys() | before.keys() if loaded.get(t) != before.get(t)}
        self.escalations = loaded
        for thread_id in changed & self.entries.keys():
            entry = self.entries[thread_id]
            self._put(thread_id, entry.thread, entry.pending)

    async def _read_changes(self, client: LangGraphClient) -> None:
        offset, newest = 0, self.seen_until
        while True:
            page = await client.threads.search(
                sort_by="updated_at",
                sort_order="desc",
                limit=self.CHANGES_PAGE,
                offset=offset,
                select=FIELDS,  # type: ignore[arg-type]
            )
            for thread in map(dict, page):
                stamp = str(thread.get("updated_at") or "")
                if stamp < self.seen_until:
                    self.seen_until = newest
                    return
                newest = max(newest, stamp)
                await self._read(client, str(thread["thread_id"]), thread)
            if len(page) < self.CHANGES_PAGE:
                self.seen_until = newest
                return
            offset += self.CHANGES_PAGE

    async def _read_marked(self, client: LangGraphClient) -> None:
        marked = list(self.marks)
        for start in range(0, len(marked), SEARCH_PAGE):
            ids = marked[start : start + SEARCH_PAGE]
            page = await client.threads.search(ids=ids, limit=len(ids), select=FIELDS)  # type: ignore[arg-type]
            found = {str(t["thread_id"]): dict(t) for t in page}
            for thread_id in ids:
                await self._read(client, thread_id, found.get(thread_id))

    async def _read(self, client: LangGraphClient, thread_id: str, thread: dict[str, Any] | None) -> None:
        """Index `thread` as it is now (None: it is gone) and settle its mark if it has settled."""
        if thread is None:
            self._drop(thread_id)
            self.marks.pop(thread_id, None)
            return
        if thread.get("status") == "interrupted":
            try:
                pending = await pending_of(client, thread)
            except Exception:  # one unreadable thread keeps its old rows; the others are read
                logger.exception("inbox: could not read thread %s", thread_id)
                return
            self._put(thread_id, thread, pending)
        else:
            self._drop(thread_id)
        self._settle(thread)

    def _settle(self, thread: dict[str, Any]) -> None:
        thread_id = str(thread["thread_id"])
        marked = self.marks.get(thread_id)
        if marked is None or thread.get("status") == "busy":
            return
        stamp = thread.get("updated_at")
        try:
            moved = stamp is not None and datetime.fromisoformat(str(stamp)) >= marked
        except ValueError:
            moved = True
        if moved or (datetime.now(UTC) - marked).total_seconds() > self.SETTLE_SECONDS:
            del self.marks[thread_id]

    def _put(self, thread_id: str, thread: dict[str, Any], pending: list[Pending]) -> None:
        ids = {p.id for p in pending}
        escalations = {i: e for i, e in self.escalations.get(thread_id, {}).items() if i in ids}
        current = self.entries.get(thread_id)
        if (
            current is not None
            and current.thread == thread
            and current.pending == pending
            and current.escalations == escalations
        ):
            return
        self._drop(thread_id)
        try:
            kept = [indexed for _, indexed in rows_of(thread, pending, escalations)]
        except Exception:  # a thread the index cannot read is skipped, never the whole inbox
            logger.exception("inbox: skipping thread %s, its record could not be read", thread_id)
            return
        for indexed in kept:
            self.rows[indexed.key] = indexed
            self.order.add(indexed.key)
        self.entries[thread_id] = Entry(thread, pending, escalations, tuple(i.key for i in kept))
        self.version += 1

    def _drop(self, thread_id: str) -> None:
        entry = self.entries.pop(thread_id, None)
        if entry is None:
            return
        for key in entry.keys:
            del self.rows[key]
            self.order.remove(key)
        self.version += 1

    @staticmethod
    async def _newest(client: LangGraphClient) -> str:
        page = await client.threads.search(sort_by="updated_at", sort_order="desc", limit=1, select=FIELDS)  # type: ignore[arg-type]
        return str(page[0].get("updated_at") or "") if page else ""


INDEX = PendingIndex()
