"""Inbox marks and escalations shared between replicas, by PostgreSQL `LISTEN`/`NOTIFY`.

What one process learns on its request path (a run let through on a thread, an escalation the
watcher recorded) is sent on the `CHANNEL` of the layer's own store, and every other process marks
the thread in its own `server.coordination.inbox_table.TABLE` at once, so the shared inbox rows
of a thread are read again by whichever replica learns of it first.
Nothing is lost when a notice is: each watcher pass still reads the threads changed meanwhile.
Off (marks stay local) when that store is not PostgreSQL: one process.
Not for claims or leases, which are rows (`server.coordination.claims`, `server.coordination.leadership`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import psycopg
from sqlalchemy.engine import make_url

from hitl.settings import get_settings
from server.records.threads import Escalation

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from server.coordination.inbox_table import InboxTable

logger = logging.getLogger(__name__)
CHANNEL = "hitl_inbox"
MAX_PAYLOAD_BYTES = 7000
"""Below PostgreSQL's 8000-byte NOTIFY limit; a bigger batch is sent in several notices."""
RECONNECT_SECONDS = 1.0
SENDER = f"{os.getpid()}-{secrets.token_hex(4)}"
"""This process, so it skips its own notices."""


def conninfo(database_url: str) -> str | None:
    """The libpq URL of a PostgreSQL SQLAlchemy URL (any driver); None for other databases."""
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        return None
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


class Broadcast:
    """Sends this process's marks and escalations, and applies the other processes' to `index`."""

    def __init__(self, index: InboxTable, url: str) -> None:
        """Share `index`'s news over the PostgreSQL database at `url` (a libpq URL)."""
        self.index = index
        self.url = url
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.received = 0
        """Notices from other processes applied to the index (for tests and logs)."""

    def mark(self, thread_id: str, at: datetime) -> None:
        """Queue a mark for the other processes (never blocks the request that made it)."""
        self.outbox.put_nowait({"mark": thread_id, "at": at.isoformat()})

    def escalate(self, escalation: Escalation) -> None:
        """Queue an escalation record for the other processes."""
        self.outbox.put_nowait(
            {"escalation": {**escalation.as_value(), "interrupt_id": escalation.interrupt_id}}
        )

    async def run(self) -> None:
        """Send and listen until cancelled; a lost connection is opened again."""
        while True:
            try:
                async with (
                    await psycopg.AsyncConnection.connect(self.url, autocommit=True) as listener,
                    await psycopg.AsyncConnection.connect(self.url, autocommit=True) as sender,
                ):
                    await listener.execute(f"LISTEN {CHANNEL}")
                    async with asyncio.TaskGroup() as group:
                        group.create_task(self._listen(listener))
                        group.create_task(self._send(sender))
            except asyncio.CancelledError:
                raise
            except Exception:  # the database went away: marks stay local until it is back
                logger.warning("inbox broadcast: connection lost; retrying", exc_info=True)
                await asyncio.sleep(RECONNECT_SECONDS)

    async def _send(self, conn: psycopg.AsyncConnection[Any]) -> None:
        while True:
            items = [await self.outbox.get()]
            while not self.outbox.empty():
                items.append(self.outbox.get_nowait())
            for payload in _batches(items):
                await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))

    async def _listen(self, conn: psycopg.AsyncConnection[Any]) -> None:
        async for notice in conn.notifies():
            try:
                message = json.loads(notice.payload)
                if message.get("from") == SENDER:
                    continue
                for item in message.get("items", []):
                    self._apply(item)
            except Exception:  # a malformed notice is skipped, never the listener
                logger.warning("inbox broadcast: skipped a notice", exc_info=True)

    def _apply(self, item: dict[str, Any]) -> None:
        if isinstance(thread_id := item.get("mark"), str):
            at = datetime.fromisoformat(str(item.get("at")))
            self.index.mark(thread_id, at=at if at.tzinfo else at.replace(tzinfo=UTC), share=False)
        elif isinstance(record := item.get("escalation"), dict):
            thread_id, interrupt_id = str(record.get("thread_id")), str(record.get("interrupt_id"))
            if (escalation := Escalation.parse(thread_id, interrupt_id, record)) is not None:
                self.index.escalate(escalation, share=False)
        self.received += 1


def _batches(items: list[dict[str, Any]]) -> list[str]:
    """`items` as NOTIFY payloads under `MAX_PAYLOAD_BYTES` each."""
    payloads, batch = [], []
    for item in items:
        batch.append(item)
        if len(json.dumps({"from": SENDER, "items": batch})) > MAX_PAYLOAD_BYTES and len(batch) > 1:
            payloads.append(json.dumps({"from": SENDER, "items": batch[:-1]}))
            batch = [item]
    if batch:
        payloads.append(json.dumps({"from": SENDER, "items": batch}))
    return payloads


@contextlib.asynccontextmanager
async def shared(index: InboxTable) -> AsyncIterator[Broadcast | None]:
    """Share `index` with the other processes on the layer's own store while the server runs."""
    url = conninfo(get_settings().resolved_hitl_database_url)
    if url is None:
        yield None
        return
    broadcast = Broadcast(index, url)
    index.broadcast = broadcast
    task = asyncio.create_task(broadcast.run(), name="hitl-inbox-broadcast")
    try:
        yield broadcast
    finally:
        index.broadcast = None
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
