"""Server-owned records beside each thread: its escalations and the graph it runs.

Escalations are kept in the LangGraph Store under `NAMESPACE`, which no client may write or read
(see `server.http.auth.on_store`); graphs in the layer's database (`hitl_thread_graphs`, one
indexed read where a Store item costs an API call). Never in thread metadata, which a thread's
owner can PATCH. Every escalation is read defensively: a malformed one is logged and skipped,
never trusted, never fatal.
Not for the audit trail (`server.records.audit`) or claims (`server.coordination.claims`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from hitl.policy.groups import is_decider
from server.identity.access import as_server
from server.ledger import storage
from server.ledger.storage import thread_graphs

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from langgraph_sdk.client import LangGraphClient

    from hitl.contracts.interrupts import Decider
    from server.decisions.pending import Pending

logger = logging.getLogger(__name__)

NAMESPACE = "hitl_records"
ESCALATIONS = (NAMESPACE, "escalations")
SEARCH_PAGE = 1000
RECORDED_KEPT = 10_000
"""Threads whose recorded graph this process remembers (a cache that skips the table read)."""


@dataclass(frozen=True)
class Escalation:
    """An approval the watcher escalated: who must now decide, since when, and until when."""

    thread_id: str
    interrupt_id: str
    required_role: Decider
    escalated_at: datetime
    deadline: datetime

    @classmethod
    def parse(cls, thread_id: str, interrupt_id: str, value: object) -> Escalation | None:
        """The record stored as `value`, or None (logged) when it is not one this server wrote."""
        try:
            if not isinstance(value, dict):
                msg = f"expected an object, got {type(value).__name__}"
                raise TypeError(msg)  # noqa: TRY301  (one place logs every malformed shape)
            role = value.get("required_role")
            if not is_decider(role):
                msg = f"required_role must be 'owner' or a group name, got {role!r}"
                raise ValueError(msg)  # noqa: TRY301
            escalated_at, deadline = (_instant(value.get(k), k) for k in ("escalated_at", "deadline"))
        except (TypeError, ValueError) as error:
            logger.warning("skipping malformed escalation %s/%s: %s", thread_id, interrupt_id, error)
            return None
        return cls(thread_id, interrupt_id, role, escalated_at, deadline)

    def as_value(self) -> dict[str, str]:
        """What is stored."""
        return {
            "thread_id": self.thread_id,
            "required_role": self.required_role,
            "escalated_at": self.escalated_at.isoformat(),
            "deadline": self.deadline.isoformat(),
        }


def _instant(stamp: object, name: str) -> datetime:
    if not isinstance(stamp, str):
        msg = f"{name} must be an ISO timestamp, got {type(stamp).__name__}"
        raise TypeError(msg)
    moment = datetime.fromisoformat(stamp)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


async def _items(client: LangGraphClient, prefix: tuple[str, ...]) -> AsyncIterator[dict[str, Any]]:
    """Every stored item under `prefix`, a page at a time."""
    offset = 0
    while True:
        page = (await client.store.search_items(prefix, limit=SEARCH_PAGE, offset=offset))["items"]
        for item in page:
            yield dict(item)
        if len(page) < SEARCH_PAGE:
            return
        offset += SEARCH_PAGE


def _escalation_of(item: dict[str, Any]) -> Escalation | None:
    namespace = list(item.get("namespace") or [])
    thread_id = str(namespace[-1]) if len(namespace) == len(ESCALATIONS) + 1 else ""
    return Escalation.parse(thread_id, str(item.get("key")), item.get("value")) if thread_id else None


async def escalations_of(client: LangGraphClient, thread_id: str) -> dict[str, Escalation]:
    """The escalations recorded for `thread_id`, by interrupt id (malformed ones left out)."""
    found = {}
    async for item in _items(client, (*ESCALATIONS, thread_id)):
        if (escalation := _escalation_of(item)) is not None:
            found[escalation.interrupt_id] = escalation
    return found


async def all_escalations(client: LangGraphClient) -> dict[str, dict[str, Escalation]]:
    """Every recorded escalation, by thread id, then interrupt id (malformed ones left out)."""
    found: dict[str, dict[str, Escalation]] = {}
    async for item in _items(client, ESCALATIONS):
        if (escalation := _escalation_of(item)) is not None:
            found.setdefault(escalation.thread_id, {})[escalation.interrupt_id] = escalation
    return found


async def put_escalation(client: LangGraphClient, escalation: Escalation) -> None:
    """Record `escalation` (the watcher's write; clients cannot write this namespace)."""
    await client.store.put_item(
        (*ESCALATIONS, escalation.thread_id), escalation.interrupt_id, escalation.as_value(), index=False
    )


def roles(escalations: Mapping[str, Escalation]) -> dict[str, Decider]:
    """Who must decide each escalated interrupt: the argument `Pending.escalated` takes."""
    return {interrupt_id: e.required_role for interrupt_id, e in escalations.items()}


async def escalated(thread_id: str, pending: list[Pending]) -> list[Pending]:
    """`pending` as the server's escalation records have it (for the resume gate in `server.http.auth`)."""
    if not pending:
        return pending
    with as_server():
        recorded = roles(await escalations_of(get_client(), thread_id))
    return [p.escalated(recorded) for p in pending]


_recorded: dict[str, str] = {}
"""Recorded graphs read or written here, by thread. A record is written once and never changed or
deleted, so a copy is never stale: on replicas, the one that paused a thread and the one that
answers it each read the table at most once per thread."""


async def record_graph(thread_id: str, graph_id: str) -> None:
    """Record `graph_id` as the graph of `thread_id` unless it has one (`on_run`, as a run is let through).

    The watcher resumes an expired approval with this graph, never with the thread's
    owner-writable `metadata.graph_id`. A later run on another assistant does not change it.
    """
    if thread_id in _recorded or not graph_id:
        return
    _remember(thread_id, await asyncio.to_thread(_insert_graph, thread_id, graph_id))


def _insert_graph(thread_id: str, graph_id: str) -> str:
    """Insert the thread's graph unless one is recorded; the recorded one (blocking)."""
    engine = storage.engine()
    row = thread_graphs.c
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    insert = dialect.insert(thread_graphs).values(
        thread_id=thread_id, graph_id=graph_id, recorded_at=time.time()
    )
    with engine.begin() as conn:
        conn.execute(insert.on_conflict_do_nothing(index_elements=[row.thread_id]))
        return str(conn.execute(select(row.graph_id).where(row.thread_id == thread_id)).scalar_one())


def _recorded_graph(thread_id: str) -> str | None:
    """The thread's recorded graph, None when it has none (blocking)."""
    row = thread_graphs.c
    with storage.engine().connect() as conn:
        found = conn.execute(select(row.graph_id).where(row.thread_id == thread_id)).scalar()
    return None if found is None else str(found)


def _remember(thread_id: str, graph_id: str) -> None:
    if len(_recorded) >= RECORDED_KEPT:
        _recorded.clear()
    _recorded[thread_id] = graph_id


async def graph_of(client: LangGraphClient, thread_id: str) -> str | None:
    """The graph to resume `thread_id` with: its recorded graph, else its latest run's (both server-owned).

    A thread first run before graphs were recorded in the layer's database (they were kept in
    the Store) has none until its next run: its latest run's graph stands in.
    """
    if (graph_id := _recorded.get(thread_id)) is not None:
        return graph_id
    if (graph_id := await asyncio.to_thread(_recorded_graph, thread_id)) is not None:
        _remember(thread_id, graph_id)
        return graph_id
    runs = await client.runs.list(thread_id, limit=1)
    if not runs:
        return None
    assistant = await client.assistants.get(str(runs[0]["assistant_id"]))
    return str(assistant["graph_id"])
