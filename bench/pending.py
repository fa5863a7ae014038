"""Make pending approvals on the bench server, as fast as the server honestly can.

Each one is real: a fresh order above the auto-approve limit, a new thread, and a run that
goes through the model and the gate until it stops at the interrupt. Runs are created in the
background (`runs.create`), up to `window` at a time, and counted as their threads turn
`interrupted`; nothing is written into the server's state behind its back.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from agents.offline import phrases
from tests.conftest import add_order

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient
    from rich.progress import Progress

    from services.registry import Services

PENDING_AMOUNT = 450.0
STALL_SECONDS = 120.0
POLL_SECONDS = 0.25


async def pending_count(client: LangGraphClient) -> int:
    """Threads of the bench user waiting for a person."""
    return await client.threads.count(status="interrupted")


async def add_pending(  # noqa: PLR0913  (one batch, fully described)
    client: LangGraphClient,
    services: Services,
    agent: str,
    count: int,
    *,
    window: int,
    progress: Progress,
) -> float:
    """Leave `count` more threads of `agent` waiting for approval; returns how many per second.

    The request names the amount ('Refund 450 on order B…'), so the run goes straight to the
    refund and pauses there: one model call, one gate.

    Raises:
        RuntimeError: when a run fails or the queue stops moving for `STALL_SECONDS`.
    """
    orders = [add_order(services, PENDING_AMOUNT) for _ in range(count)]
    before, errors_before = await pending_count(client), await client.threads.count(status="error")
    task = progress.add_task(f"{count} pending approvals of {agent}", total=count)
    started = last_progress = time.perf_counter()
    sent = done = 0
    while done < count:
        while sent < count and sent - done < window:
            thread = await client.threads.create()
            text = phrases.refund_amount(PENDING_AMOUNT, orders[sent])
            request: dict[str, Any] = {"messages": [{"role": "user", "content": text}]}
            await client.runs.create(thread["thread_id"], agent, input=request)
            sent += 1
        await asyncio.sleep(POLL_SECONDS)
        now_done = await pending_count(client) - before
        if now_done > done:
            done, last_progress = now_done, time.perf_counter()
            progress.update(task, completed=done)
        if (failed := await client.threads.count(status="error") - errors_before) > 0:
            msg = f"{failed} run(s) of {agent} ended in error instead of waiting for approval"
            raise RuntimeError(msg)
        if time.perf_counter() - last_progress > STALL_SECONDS:
            msg = f"{agent}: {done}/{count} pending after {STALL_SECONDS:.0f} s without progress"
            raise RuntimeError(msg)
    return count / (time.perf_counter() - started)


async def fill_to(  # noqa: PLR0913  (one fill, fully described)
    client: LangGraphClient, services: Services, agent: str, total: int, *, window: int, progress: Progress
) -> float | None:
    """Add pending approvals of `agent` until the server holds `total`; the rate, None if none added."""
    missing = total - await pending_count(client)
    if missing <= 0:
        return None
    return await add_pending(client, services, agent, missing, window=window, progress=progress)
