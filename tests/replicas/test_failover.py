"""A replica killed with approvals pending, or right after accepting answers: the other one finishes them.

Threads, runs, checkpoints and the run queue live in the shared runtime database, so what a
killed replica held is answered or re-run through the survivor (the engine re-runs a dead
replica's runs after two missed heartbeats, `LG_BG_JOB_HEARTBEAT` = 5 s in `server.runtime.replicas`);
each refund still happens once, by its tool call id.
"""

from __future__ import annotations

import asyncio
import signal

import pytest

from tests.conftest import add_order
from tests.replicas.conftest import approve, http, pause_refund, until

pytestmark = [pytest.mark.server, pytest.mark.long]
PENDING = 20


async def settle(client, paused: list[tuple[str, str]]) -> None:
    async def idle() -> bool:
        threads = [(await client.get(f"/threads/{t}")).json() for t, _ in paused]
        return all(t["status"] == "idle" for t in threads)

    await until(idle, seconds=120, every=0.5)


async def test_a_killed_replicas_approvals_are_answered_through_the_other_once(replicas, business):
    """SIGKILL of A with 20 pending: all 20 approved through B, each refunded once."""
    a, b = replicas.urls
    async with http(a, "requester1") as requester:
        orders = [add_order(business, 600 + i) for i in range(PENDING)]
        paused = []
        for start in range(0, PENDING, 10):
            paused += await asyncio.gather(*(pause_refund(requester, o) for o in orders[start : start + 10]))
    replicas.stop(0, signal.SIGKILL)
    async with http(b, "supervisor1") as on_b:
        for thread_id, interrupt_id in paused:
            (await on_b.post(f"/threads/{thread_id}/runs", json=approve(interrupt_id))).raise_for_status()
        await settle(on_b, paused)
    assert [len(business.payments.refunds_for(o)) for o in orders] == [1] * PENDING


async def test_answers_accepted_by_a_replica_killed_right_after_are_completed_by_another(replicas, business):
    """resumes accepted (200) by C, C killed at once: B completes each, one refund each."""
    b = replicas.urls[1]
    [c] = replicas.start(1)
    async with http(b, "requester1") as requester, http(c, "supervisor1") as on_c:
        orders = [add_order(business, 600 + i) for i in range(10)]
        paused = list(await asyncio.gather(*(pause_refund(requester, o) for o in orders)))
        answers = await asyncio.gather(*(on_c.post(f"/threads/{t}/runs", json=approve(i)) for t, i in paused))
        assert [r.status_code for r in answers] == [200] * len(paused)
    replicas.stop(len(replicas.processes) - 1, signal.SIGKILL)
    async with http(b, "supervisor1") as on_b:
        await settle(on_b, paused)
    assert [len(business.payments.refunds_for(o)) for o in orders] == [1] * len(orders)
