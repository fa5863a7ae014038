"""The approval inbox: every pending approval across threads that the caller may decide.

Built from interrupted threads (only the fields it needs), filtered by who may decide,
oldest first. The cursor is the position of the last item returned, not an offset, so a
page stays stable while other approvals are being resolved.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from server.resume_gate import Pending
from server.users import User

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from langgraph_sdk.client import LangGraphClient


SEARCH_PAGE = 1000
SERVER_VIEW = User(identity="system", role="supervisor")
FIELDS = ["thread_id", "updated_at", "metadata", "interrupts", "status"]


@dataclass(frozen=True)
class InboxQuery:
    """Filters and the page asked for."""

    agent: str | None = None
    tool: str | None = None
    limit: int = 50
    after: tuple[str, str, str] | None = None

    @staticmethod
    def decode_cursor(cursor: str | None) -> tuple[str, str, str] | None:
        """The position a cursor points after.

        Raises:
            ValueError: for a cursor this server did not make.
        """
        if not cursor:
            return None
        try:
            since, thread_id, interrupt_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        except (ValueError, TypeError) as error:
            msg = "cursor is not one this server returned"
            raise ValueError(msg) from error
        return str(since), str(thread_id), str(interrupt_id)


def encode_cursor(item: dict[str, Any]) -> str:
    """The cursor that continues after `item`."""
    position = [item["created_at"], item["thread_id"], item["interrupt_id"]]
    return base64.urlsafe_b64encode(json.dumps(position).encode()).decode()


async def interrupted_threads(client: LangGraphClient, user: User) -> AsyncIterator[dict[str, Any]]:
    """Every interrupted thread `user` could have something to decide on."""
    metadata = None if user.is_staff else {"owner": user.identity}
    offset = 0
    while True:
        page = await client.threads.search(
            status="interrupted",
            metadata=metadata,
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


def items_of(
    thread: dict[str, Any], pending_list: list[Pending], user: User, now: datetime
) -> list[dict[str, Any]]:
    """The inbox rows of one thread that `user` may decide."""
    metadata = thread.get("metadata") or {}
    owner = metadata.get("owner")
    since = str(thread.get("updated_at") or "")
    rows = []
    escalations = metadata.get("escalations") or {}
    for listed in pending_list:
        pending = listed.escalated(metadata)
        if not all(user.may_decide(d, owner) for d in pending.deciders):
            continue
        for action in _actions(pending):
            rows.append(  # noqa: PERF401  (one row per action, built in place)
                {
                    "thread_id": str(thread["thread_id"]),
                    "interrupt_id": pending.id,
                    "kind": action["kind"],
                    "agent": action["agent"],
                    "graph_id": metadata.get("graph_id"),
                    "tool": action["tool"],
                    "tool_call_id": action["tool_call_id"],
                    "args": action["args"],
                    "description": action["description"],
                    "allowed_decisions": action["allowed_decisions"],
                    "required_role": max(pending.deciders),
                    "owner": owner,
                    "created_at": since,
                    "age_seconds": _age(since, now),
                    "deadline": (escalations.get(pending.id) or {}).get("deadline", pending.deadline),
                    "escalated": pending.escalated_to is not None,
                }
            )
    return rows


class PendingIndex:
    """Every interrupted thread and what waits on it, kept current cheaply.

    The first look reads all interrupted threads; later looks read only the threads
    updated since (newest first, stopping at the last look), because every status change
    moves a thread's `updated_at`. A full re-read every `FULL_EVERY_SECONDS` drops threads
    deleted in between. Each process keeps its own; the database stays the truth.
    """

    FULL_EVERY_SECONDS = 60.0
    PAGE = 200

    def __init__(self) -> None:
        """Start empty; the first `refresh` reads everything."""
        self.threads: dict[str, tuple[dict[str, Any], list[Pending]]] = {}
        self.seen_until = ""
        self.full_at = -self.FULL_EVERY_SECONDS
        self._lock = asyncio.Lock()

    async def refresh(self, client: LangGraphClient) -> None:
        """Bring the index up to date with the threads' current records."""
        async with self._lock:
            if time.monotonic() - self.full_at >= self.FULL_EVERY_SECONDS:
                await self._read_all(client)
            else:
                await self._read_changes(client)

    async def _read_all(self, client: LangGraphClient) -> None:
        started = time.monotonic()
        newest = await self._newest(client)
        threads = {}
        async for thread in interrupted_threads(client, SERVER_VIEW):
            threads[str(thread["thread_id"])] = (thread, await pending_of(client, thread))
        self.threads, self.seen_until, self.full_at = threads, newest, started

    async def _read_changes(self, client: LangGraphClient) -> None:
        offset, newest = 0, self.seen_until
        while True:
            page = await client.threads.search(
                sort_by="updated_at",
                sort_order="desc",
                limit=self.PAGE,
                offset=offset,
                select=FIELDS,  # type: ignore[arg-type]
            )
            for thread in map(dict, page):
                stamp = str(thread.get("updated_at") or "")
                if stamp < self.seen_until:
                    self.seen_until = newest
                    return
                newest = max(newest, stamp)
                key = str(thread["thread_id"])
                if thread.get("status") == "interrupted":
                    self.threads[key] = (thread, await pending_of(client, thread))
                else:
                    self.threads.pop(key, None)
            if len(page) < self.PAGE:
                self.seen_until = newest
                return
            offset += self.PAGE

    @staticmethod
    async def _newest(client: LangGraphClient) -> str:
        page = await client.threads.search(sort_by="updated_at", sort_order="desc", limit=1, select=FIELDS)  # type: ignore[arg-type]
        return str(page[0].get("updated_at") or "") if page else ""

    def visible_to(self, user: User) -> list[tuple[dict[str, Any], list[Pending]]]:
        """The indexed threads `user` may see."""
        if user.is_staff:
            return list(self.threads.values())
        return [
            (t, p)
            for t, p in self.threads.values()
            if (t.get("metadata") or {}).get("owner") == user.identity
        ]


INDEX = PendingIndex()


async def page_of(client: LangGraphClient, user: User, query: InboxQuery) -> dict[str, Any]:
    """One page of the inbox and the cursor of the next one (None at the end)."""
    now = datetime.now(UTC)
    await INDEX.refresh(client)
    rows = [row for thread, pending in INDEX.visible_to(user) for row in items_of(thread, pending, user, now)]
    rows = [r for r in rows if _matches(r, query)]
    rows.sort(key=lambda r: (r["created_at"], r["thread_id"], r["interrupt_id"]))
    if query.after is not None:
        rows = [r for r in rows if (r["created_at"], r["thread_id"], r["interrupt_id"]) > query.after]
    page = rows[: query.limit]
    more = len(rows) > query.limit
    return {
        "items": page,
        "next_cursor": encode_cursor(page[-1]) if more and page else None,
        "total": len(rows),
    }


def _matches(row: dict[str, Any], query: InboxQuery) -> bool:
    return (query.agent is None or query.agent in {row["agent"], row["graph_id"]}) and (
        query.tool is None or row["tool"] == query.tool
    )


def _actions(pending: Pending) -> list[dict[str, Any]]:
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
        }
    ]


def _age(since: str, now: datetime) -> float:
    try:
        return max(0.0, (now - datetime.fromisoformat(since)).total_seconds())
    except ValueError:
        return 0.0
