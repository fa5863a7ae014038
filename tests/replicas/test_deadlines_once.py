"""Deadlines across replicas: one watcher leads (`server.coordination.leadership`), so each is acted on once.

Both replicas run the watcher every 0.3 s with refund deadlines of 3 s: a refund nobody
answers is escalated to a supervisor, then rejected by the system at its second deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import select

from server.ledger.storage import notice_outbox
from tests.conftest import add_order
from tests.notices import Receiver
from tests.replicas.conftest import audit, http, pause_refund, until

if TYPE_CHECKING:
    from sqlalchemy import Engine

pytestmark = pytest.mark.server
APPROVALS = 20


@pytest.fixture(scope="module")
def receiver():
    running = Receiver()
    yield running
    running.http.shutdown()
    running.http.server_close()


@pytest.fixture(scope="module")
def replica_env(receiver) -> dict[str, str]:
    return {
        "REFUND_DEADLINE_SECONDS": "3",
        "ESCALATION_DEADLINE_SECONDS": "3",
        "HITL_WATCH_INTERVAL": "0.3",
        "HITL_NOTIFY_URL": receiver.url,
    }


async def test_each_deadline_is_acted_on_once_with_one_notice_each(replicas, business, layer, receiver):
    """20 refunds: escalated once, then rejected once by the system; one notice per event; none refunded."""
    a, b = replicas.urls
    async with http(a, "requester1") as requester, http(b, "supervisor1") as supervisor:
        orders = [add_order(business, 600 + i) for i in range(APPROVALS)]
        paused = []
        for start in range(0, APPROVALS, 10):
            paused += await asyncio.gather(*(pause_refund(requester, o) for o in orders[start : start + 10]))

        async def all_settled() -> bool:
            threads = [(await supervisor.get(f"/threads/{t}")).json() for t, _ in paused]
            return all(t["status"] == "idle" for t in threads)

        await until(all_settled, seconds=90, every=0.5)
        for thread_id, interrupt_id in paused:
            trail = [
                (r["interrupt_id"], r["reviewer"], r["decision"], r["outcome"])
                for r in await audit(supervisor, thread_id)
            ]
            assert trail == [
                (interrupt_id, "system", "escalated", "accepted"),
                (interrupt_id, "system", "reject", "accepted"),
            ]
        expected = {(t, e) for t, _ in paused for e in ("approval_pending", "approval_escalated")}

        async def all_delivered() -> bool:  # a delivery that failed once is tried again by the outbox
            return {(n["thread_id"], n["event"]) for n in receiver.notices} >= expected

        try:
            await until(all_delivered, seconds=30, every=0.5)
        except pytest.fail.Exception:
            pytest.fail(undelivered(layer, expected, receiver))
        notices = Counter((n["thread_id"], n["event"]) for n in receiver.notices)
        assert set(notices) == expected
        assert set(notices.values()) == {1}
    assert all(business.payments.refunds_for(o) == [] for o in orders)


def undelivered(layer: Engine, expected: set[tuple[str, str]], receiver: Receiver) -> str:
    """Which notices the receiver never got, and what the shared outbox holds undelivered (its attempts)."""
    got = {(n["thread_id"], n["event"]) for n in receiver.notices}
    with layer.connect() as conn:
        rows = conn.execute(
            select(notice_outbox.c.payload, notice_outbox.c.attempts, notice_outbox.c.next_try_at).where(
                notice_outbox.c.delivered_at.is_(None)
            )
        ).all()
    now = time.time()
    held = [
        f"attempts {r.attempts}, next try in {r.next_try_at - now:.0f} s: {r.payload[:160]}" for r in rows
    ]
    return (
        f"not received in 30 s: {sorted(expected - got)}; received {len(got)} of {len(expected)}; "
        f"undelivered in the outbox: {len(rows)}\n" + "\n".join(held[:10])
    )
