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

from langgraph_sdk.errors import InternalServerError

from bench.paused_graph import GRAPH_ID

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langgraph_sdk.client import LangGraphClient
    from rich.progress import Progress

STALL_SECONDS = 120.0
POLL_SECONDS = 0.5
"""The shortest pause between two counts of the fill."""
POLL_SHARE = 0.1
"""At most this share of the fill's time goes to counting: PostgreSQL counts a user's interrupted
threads in about 2 ms per 1,000 threads (0.2 s at 100,000), CPU the replicas' workers need."""
SENDERS_PER_CLIENT = 4
"""Requests in flight per replica: enough to keep its HTTP side busy while its workers run."""
REFUSALS_TOLERATED = 100
"""Server errors (500: e.g. PostgreSQL out of connections on a shared machine) a fill rides out."""


@dataclass(frozen=True)
class Fill:
    """How many pending approvals a fill added and how long it took."""

    added: int
    seconds: float
    server_errors: int = 0
    """Requests the server failed (each retried with a new thread after a second)."""

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


async def start_paused(client: LangGraphClient) -> bool:
    """A new thread and a run of the pausing graph on it; False when the server failed the request."""
    try:
        thread = await client.threads.create()
        await client.runs.create(thread["thread_id"], GRAPH_ID, input={"messages": []})
    except InternalServerError:
        return False
    return True


@dataclass
class _Filling:
    """One fill under way: how many were sent, how many wait, how many requests the server failed."""

    missing: int
    window: int
    until: float = float("inf")
    """When to stop sending (`time.perf_counter`); the runs sent still count once paused."""
    sent: int = 0
    done: int = 0
    server_errors: int = 0

    async def send(self, client: LangGraphClient) -> None:
        """Start runs through `client` while some are missing, at most `window` not yet paused."""
        while self.sent < self.missing and time.perf_counter() < self.until:
            if self.sent - self.done >= self.window:
                await asyncio.sleep(POLL_SECONDS / 5)
                continue
            self.sent += 1
            if not await start_paused(client):
                self.server_errors, self.sent = self.server_errors + 1, self.sent - 1
                await asyncio.sleep(1.0)

    @property
    def finished(self) -> bool:
        """Every missing run paused, or the time is up and every run sent paused."""
        sending = time.perf_counter() < self.until
        return self.done >= self.missing or (not sending and self.done >= self.sent)

    def trouble(self, failed_runs: int, since_progress: float) -> str | None:
        """Why the fill must stop, if it must."""
        if failed_runs > 0:
            return f"{failed_runs} run(s) of {GRAPH_ID} ended in error instead of waiting for approval"
        if self.server_errors > REFUSALS_TOLERATED:
            return f"{GRAPH_ID}: the server failed {self.server_errors} requests of the fill"
        if since_progress > STALL_SECONDS:
            return (
                f"{GRAPH_ID}: {self.done}/{self.missing} pending after {STALL_SECONDS:.0f} s without progress"
            )
        return None


async def fill_paused(
    clients: Sequence[LangGraphClient],
    total: int,
    *,
    window: int,
    progress: Progress,
    minutes: float | None = None,
) -> Fill:
    """Start runs of the pausing graph through `clients` until `total` threads wait; how long it took.

    With `minutes`, no run is started after that long: the fill ends when those sent have paused.

    Raises:
        RuntimeError: when a run ends in error, the server fails more than `REFUSALS_TOLERATED`
            requests, or the count stops rising for `STALL_SECONDS`.
    """
    counter = clients[0]
    before, errors_before = await interrupted(counter), await counter.threads.count(status="error")
    until = time.perf_counter() + minutes * 60 if minutes is not None else float("inf")
    filling = _Filling(total - before, window, until)
    if filling.missing <= 0:
        return Fill(0, 0.0)
    task = progress.add_task(f"{filling.missing} pending approvals of {GRAPH_ID}", total=filling.missing)
    started = last_progress = time.perf_counter()

    async def count() -> None:
        nonlocal last_progress
        counting = 0.0
        while not filling.finished:
            await asyncio.sleep(max(POLL_SECONDS, counting / POLL_SHARE))
            counted = time.perf_counter()
            if (now_done := await interrupted(counter) - before) > filling.done:
                filling.done, last_progress = now_done, time.perf_counter()
                progress.update(task, completed=filling.done)
            failed = await counter.threads.count(status="error") - errors_before
            counting = time.perf_counter() - counted
            if (trouble := filling.trouble(failed, time.perf_counter() - last_progress)) is not None:
                raise RuntimeError(trouble)

    await asyncio.gather(count(), *(filling.send(clients[i]) for i in senders(len(clients))))
    return Fill(filling.done, time.perf_counter() - started, filling.server_errors)
