"""A fresh inbox on every replica: marks travel between replicas as they are made.

The watcher runs every 30 s here, so only the broadcast (`server.coordination.broadcast`) can make a
replica see within a second what happened on the other one.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import add_order
from tests.replicas.conftest import approve, http, inbox_threads, pause_refund, until

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def replica_env() -> dict[str, str]:
    return {"HITL_WATCH_INTERVAL": "30"}


async def test_a_pause_on_a_is_listed_by_b_and_an_answer_on_b_leaves_as_list(replicas, business):
    """pause on A: in B's inbox within 1 s; approved through B: out of A's inbox within 1 s, refunded once."""
    a, b = replicas.urls
    async with (
        http(a, "requester1") as requester,
        http(a, "supervisor1") as on_a,
        http(b, "supervisor1") as on_b,
    ):
        assert await inbox_threads(on_a) == await inbox_threads(on_b) == set()  # both indexes loaded
        order_id = add_order(business, 640)
        thread_id, interrupt_id = await pause_refund(requester, order_id)
        paused = time.monotonic()

        async def listed_on_b() -> bool:
            return thread_id in await inbox_threads(on_b)

        await until(listed_on_b, seconds=10)
        assert time.monotonic() - paused < 1.0
        assert thread_id in await inbox_threads(on_a)

        (await on_b.post(f"/threads/{thread_id}/runs", json=approve(interrupt_id))).raise_for_status()
        answered = time.monotonic()

        async def gone_from_a() -> bool:
            return thread_id not in await inbox_threads(on_a)

        await until(gone_from_a, seconds=10)
        assert time.monotonic() - answered < 1.0
    assert [r["amount"] for r in await until(lambda: _refunds(business, order_id))] == [640.0]


async def _refunds(business, order_id):
    return business.payments.refunds_for(order_id)
