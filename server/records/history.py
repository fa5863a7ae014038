"""What `server.insight.analytics` reads: every audit record, and when each decided approval paused.

Audit records do not carry their pause time, so it is read from the thread's checkpoint
history: the time of the checkpoint whose task raised the interrupt (the gate raises it right
after that checkpoint is saved). Pause times never change, so each is read once per process.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from server.identity.access import as_server
from server.records import trail

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from langgraph_sdk.client import LangGraphClient

logger = logging.getLogger(__name__)
HISTORY_PAGE = 100
HISTORY_PAGES = 20
"""At most this many history pages are read per thread; an older pause counts as untimed."""
CONCURRENT_THREADS = 8
PAUSES_KEPT = 100_000
_paused: dict[tuple[str, str], datetime] = {}


async def all_records() -> list[dict[str, Any]]:
    """Every audit record of every thread (`server.records.trail`)."""
    return await asyncio.to_thread(trail.read_all)


async def pause_times(
    client: LangGraphClient, records: Iterable[Mapping[str, Any]]
) -> dict[tuple[str, str], datetime]:
    """When each decided approval among `records` paused, by (thread_id, interrupt_id).

    An approval whose pause cannot be found (a deleted thread, a history too long) is missing.
    """
    wanted: dict[str, set[str]] = {}
    for record in records:
        if record.get("outcome") == "accepted" and record.get("interrupt_id"):
            key = (str(record.get("thread_id")), str(record["interrupt_id"]))
            if key not in _paused:
                wanted.setdefault(key[0], set()).add(key[1])
    limit = asyncio.Semaphore(CONCURRENT_THREADS)

    async def read(thread_id: str, ids: set[str]) -> dict[tuple[str, str], datetime]:
        async with limit:
            try:
                return await _pauses_of(client, thread_id, ids)
            except Exception:  # noqa: BLE001  (a thread that cannot be read leaves its decisions untimed)
                logger.info("analytics: no history for thread %s", thread_id)
                return {}

    for found in await asyncio.gather(*(read(t, ids) for t, ids in wanted.items())):
        if len(_paused) + len(found) > PAUSES_KEPT:
            _paused.clear()
        _paused.update(found)
    return _paused


async def _pauses_of(
    client: LangGraphClient, thread_id: str, ids: set[str]
) -> dict[tuple[str, str], datetime]:
    """Walk `thread_id`'s checkpoints newest first until every interrupt of `ids` is found."""
    found: dict[tuple[str, str], datetime] = {}
    before: Any = None
    for _ in range(HISTORY_PAGES):
        with as_server():
            states = await client.threads.get_history(thread_id, limit=HISTORY_PAGE, before=before)
        for state in states:
            raised = {i.get("id") for task in state.get("tasks") or [] for i in task.get("interrupts") or []}
            for interrupt_id in raised & ids:
                found[thread_id, interrupt_id] = _utc(datetime.fromisoformat(str(state["created_at"])))
        if ids <= {i for _, i in found} or len(states) < HISTORY_PAGE:
            return found
        before = states[-1]["checkpoint"]
    return found


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
