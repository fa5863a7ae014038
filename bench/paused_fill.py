"""Fill a replica set with real pending approvals of the bench's pausing graph, as fast as it serves them.

Each one is a new thread and a run of `bench.paused_graph` that the replicas' workers take from
the queue and run to its interrupt; nothing is written into any store behind the server's back.
Several senders spread the requests over every replica, with at most `window` runs not yet
paused; the fill is counted as threads turn `interrupted`. Not the support agent's fill of the
single-server sections: that is `bench.pending`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.paused_graph import GRAPH_ID

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langgraph_sdk.client import LangGraphClient
    from rich.progress import Progress

STALL_SECONDS = 120.0
POLL_SECONDS = 0.5
SENDERS_PER_CLIENT = 4
"""Requests in flight per replica: enough to keep its HTTP side busy while its workers run."""


@dataclass(frozen=True)
class Fill:
    """How many pending approvals a fill added and how long it took."""

    added: int
    seconds: float

    @property
    def per_second(self) -> float:
        """Pending approvals made per second (0 when none were added)."""
        return self.added / self.seconds if self.seconds > 0 else 0.0


def senders(clients: int, per_client: int = SENDERS_PER_CLIENT) -> list[int]:
    """Which client each sender uses: `per_client` senders per client, taking turns across clients."""
    return [i % clients for i in range(clients * per_client)]


async def interrupted(client: LangGraphClient) -> int:
    """Threads the client's user sees waiting on an interrupt."""
    return await client.threads.count(status="interrupted")


async def fill_paused(
    clients: Sequence[LangGraphClient], total: int, *, window: int, progress: Progress
) -> Fill:
    """Start runs of the pausing graph through `clients` until `total` threads wait; how long it took.

    Raises:
        RuntimeError: when a run ends in error, or the count stops rising for `STALL_SECONDS`.
    """
    counter = clients[0]
    before, errors_before = await interrupted(counter), await counter.threads.count(status="error")
    missing = total - before
    if missing <= 0:
        return Fill(0, 0.0)
    task = progress.add_task(f"{missing} pending approvals of {GRAPH_ID}", total=missing)
    sent = done = 0
    started = last_progress = time.perf_counter()

    async def send(client: LangGraphClient) -> None:
        nonlocal sent
        while sent < missing:
            if sent - done >= window:
                await asyncio.sleep(POLL_SECONDS / 5)
                continue
            sent += 1
            thread = await client.threads.create()
            await client.runs.create(thread["thread_id"], GRAPH_ID, input={"messages": []})

    async def count() -> None:
        nonlocal done, last_progress
        while done < missing:
            await asyncio.sleep(POLL_SECONDS)
            now_done = await interrupted(counter) - before
            if now_done > done:
                done, last_progress = now_done, time.perf_counter()
                progress.update(task, completed=done)
            if (failed := await counter.threads.count(status="error") - errors_before) > 0:
                msg = f"{failed} run(s) of {GRAPH_ID} ended in error instead of waiting for approval"
                raise RuntimeError(msg)
            if time.perf_counter() - last_progress > STALL_SECONDS:
                msg = f"{GRAPH_ID}: {done}/{missing} pending after {STALL_SECONDS:.0f} s without progress"
                raise RuntimeError(msg)

    await asyncio.gather(count(), *(send(clients[i]) for i in senders(len(clients))))
    return Fill(done, time.perf_counter() - started)
