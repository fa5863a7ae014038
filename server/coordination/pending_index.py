"""`PendingIndex`: every pending approval, kept current without rereading every thread.

The inbox and the watcher read from it. Three ways keep it current:

- **Marks** (the request path). Every run, state write or delete that goes through this
  process's auth handlers marks its thread; the next read looks up only the marked threads
  (one `threads.search(ids=...)`) and keeps re-reading a mark until its thread has settled
  (not busy, and updated since the mark).
- **Shared marks** (`server.coordination.broadcast`): the marks and escalations of the other replicas,
  sent over the business database as they are made.
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

from server.decisions.pending import Pending
from server.identity.users import User
from server.records import threads

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from langgraph_sdk.client import LangGraphClient

    from server.identity.users import Decider
    from server.records.threads import Escalation

logger = logging.getLogger(__name__)
SEARCH_PAGE = 1000
SERVER_VIEW = User(identity="system", role="supervisor")
FIELDS = ["thread_id", "updated_at", "metadata", "interrupts", "status"]
RowKey = tuple[str, str, str, int]
"""A row's place in the inbox: (created_at, thread_id, interrupt_id, action index)."""


class Sharing(Protocol):
    """Where this process's marks and escalations go to the other replicas (`broadcast.Broadcast`)."""

    def mark(self, thread_id: str, at: datetime) -> None:
        """Tell the others that `thread_id` changed at `at`."""

    def escalate(self, escalation: Escalation) -> None:
        """Tell the others of an escalation."""


@dataclass(frozen=True, slots=True)
class IndexedRow:
    """What the index keeps of one inbox row: its place, its filters, and who may decide it.

    The row itself (args, description, ...) is rebuilt from its thread for the rows served,
    so a pending approval costs the index a few hundred bytes, not a copy of itself.
    """

    key: RowKey
    agent: str | None
    graph_id: str | None
    tool: str | None
    deciders: frozenset[Decider]
    owner: str | None

    def visible_to(self, user: User) -> bool:
        """Whether `user` may decide this row."""
        return all(user.may_decide(d, self.owner) for d in self.deciders)


def rows_of(
    thread: dict[str, Any], pending_list: list[Pending], escalations: Mapping[str, Escalation]
) -> list[tuple[dict[str, Any], IndexedRow]]:
    """The inbox rows of one thread (without their age), each with what the index keeps of it.

    Who decides and until when come from the server's `escalations` records; of the thread's
    metadata only strings are read (`owner`, set by the server; `graph_id`, a filter only).
    """
    metadata = thread.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    owner, graph_id = (v if isinstance(v := metadata.get(k), str) else None for k in ("owner", "graph_id"))
    since = str(thread.get("updated_at") or "")
    roles = threads.roles(escalations)
    rows = []
    for listed in pending_list:
        pending = listed.escalated(roles)
        escalation = escalations.get(pending.id)
        deciders = frozenset(pending.deciders)
        for index, action in enumerate(actions_of(pending)):
            row = {
                "thread_id": str(thread["thread_id"]),
                "interrupt_id": pending.id,
                "action_index": index,
                "kind": action["kind"],
                "agent": action["agent"],
                "graph_id": graph_id,
                "tool": action["tool"],
                "tool_call_id": action["tool_call_id"],
                "args": action["args"],
                "description": action["description"],
                "allowed_decisions": action["allowed_decisions"],
                "required_role": max(deciders),
                "owner": owner,
                "created_at": since,
                "deadline": escalation.deadline.isoformat() if escalation else pending.deadline,
                "escalated": pending.escalated_to is not None,
                **({"approvals": action["approvals"]} if action.get("approvals") else {}),
            }
            kept = IndexedRow(row_key(row), row["agent"], row["graph_id"], row["tool"], deciders, owner)
            rows.append((row, kept))
    return rows


def row_key(row: dict[str, Any]) -> RowKey:
    """Where `row` sorts: oldest first, then by thread, interrupt and action."""
    return (row["created_at"], row["thread_id"], row["interrupt_id"], row["action_index"])


def actions_of(pending: Pending) -> list[dict[str, Any]]:
    """What a reviewer decides on in `pending`: one entry per action of a batch, else one."""
    value = pending.value if isinstance(pending.value, dict) else {}
    if isinstance(value.get("action_requests"), list):
        configs = value.get("review_configs") or []
        return [
            {
                "kind": "batched",
                "agent": action.get("agent", value.get("agent")),
                "tool": action.get("name"),
                "tool_call_id": action.get("tool_call_id"),
                "args": action.get("args", {}),
                "description": action.get("description", ""),
                "allowed_decisions": (configs[i] if i < len(configs) else {}).get("allowed_decisions", []),
                "approvals": _approvals(configs[i] if i < len(configs) else {}),
            }
            for i, action in enumerate(value["action_requests"])
        ]
    kind = str(value.get("type") or "interrupt")
    return [
        {
            "kind": kind,
            "agent": value.get("agent"),
            "tool": value.get("name") or value.get("form") or value.get("action") or kind,
            "tool_call_id": value.get("tool_call_id"),
            "args": value.get("args") or value.get("context") or {},
            "description": value.get("description") or value.get("title") or value.get("message") or "",
            "allowed_decisions": value.get("allowed_decisions") or [],
            "approvals": _approvals(value),
        }
    ]


def _approvals(config: object) -> dict[str, Any] | None:
    """A quorum's progress as an inbox row shows it: `{"required": 2, "approved_by": [...]}`, else None."""
    if not isinstance(config, dict) or not isinstance(required := config.get("approvals_required"), int):
        return None
    approved = config.get("approved_by")
    return {
        "required": required,
        "approved_by": [str(p) for p in approved] if isinstance(approved, list) else [],
    }


async def interrupted_threads(client: LangGraphClient) -> AsyncIterator[dict[str, Any]]:
    """Every interrupted thread, a search page at a time."""
    offset = 0
    while True:
        page = await client.threads.search(
            status="interrupted",
            limit=SEARCH_PAGE,
            offset=offset,
            select=FIELDS,  # type: ignore[arg-type]
        )
        for thread in page:
            yield dict(thread)
        if len(page) < SEARCH_PAGE:
            return
        offset += SEARCH_PAGE


async def pending_of(client: LangGraphClient, thread: dict[str, Any]) -> list[Pending]:
    """A thread's waiting interrupts; several are re-read from state (the record can lag)."""
    listed = Pending.from_thread(thread)
    if len(listed) <= 1:
        return listed
    return Pending.from_state(dict(await client.threads.get_state(str(thread["thread_id"]))))


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
