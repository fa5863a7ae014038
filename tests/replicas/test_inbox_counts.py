"""The inbox's counts stay exact on two replicas racing pauses, decisions and repairs (issue 58).

Requesters pause refunds through both replicas while reviewers approve earlier ones through the
other, and every replica's watcher repairs the table each second; at every snapshot taken meanwhile,
and at the end, `hitl_inbox_counts` equals `count(*)` of `hitl_inbox` per key (group, owner, tool).
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import case, func, literal, select

from server.ledger.storage import inbox, inbox_counts
from tests.conftest import add_order
from tests.replicas.conftest import approve, http, pause_refund, until

pytestmark = pytest.mark.server
PAUSES = 16
AMOUNTS = (300, 899)
"""A reviewer's refund and a supervisor's: two groups' counts move."""


@pytest.fixture(scope="module")
def replica_env() -> dict[str, str]:
    return {"HITL_WATCH_INTERVAL": "1"}


def snapshot(layer) -> tuple[dict[tuple[str, str, str], int], dict[tuple[str, str, str], int]]:
    """The counts kept and `count(*)` per key, read in one snapshot (REPEATABLE READ)."""
    owner = case((inbox.c.decided_by == "owner", func.coalesce(inbox.c.owner, "")), else_=literal(""))
    tool = func.coalesce(inbox.c.tool, "")
    rows = select(inbox.c.decided_by, owner, tool, func.count()).group_by(inbox.c.decided_by, owner, tool)
    with layer.connect().execution_options(isolation_level="REPEATABLE READ") as conn, conn.begin():
        counted = {(g, o, t): int(n) for g, o, t, n in conn.execute(rows)}
        kept = {(g, o, t): int(n) for g, o, t, n in conn.execute(select(inbox_counts))}
    return kept, counted


async def test_counts_equal_count_star_while_two_replicas_race(replicas, business, layer):
    """16 pauses (8 through each replica), 8 approved through the other meanwhile: exact in every snapshot."""
    a, b = replicas.urls
    decided: list[str] = []
    snapshots: list[tuple[dict, dict]] = []
    racing = True

    async def watch() -> None:
        while racing:
            snapshots.append(await asyncio.to_thread(snapshot, layer))
            await asyncio.sleep(0.05)

    async def pause_and_maybe_decide(n: int) -> str:
        asked_on, decided_on = (a, b) if n % 2 else (b, a)
        async with http(asked_on, "requester1") as requester, http(decided_on, "supervisor1") as supervisor:
            order_id = add_order(business, AMOUNTS[n % len(AMOUNTS)])
            thread_id, interrupt_id = await pause_refund(requester, order_id)
            if n % 4 < 2:  # half of them
                answer = await supervisor.post(f"/threads/{thread_id}/runs", json=approve(interrupt_id))
                answer.raise_for_status()
                decided.append(thread_id)
            return thread_id

    watcher = asyncio.create_task(watch())
    try:
        threads = await asyncio.gather(*(pause_and_maybe_decide(n) for n in range(PAUSES)))
    finally:
        racing = False
        await watcher
    waiting = set(threads) - set(decided)

    async def settled() -> bool:
        with layer.connect() as conn:
            listed = set(conn.scalars(select(inbox.c.thread_id).distinct()))
        return listed == waiting

    await until(settled, seconds=60)
    await asyncio.sleep(2)  # two more repair passes on each replica
    kept, counted = snapshot(layer)
    assert kept == counted
    assert sum(counted.values()) == len(waiting) == PAUSES // 2
    assert len(snapshots) > 10
    assert all(kept == counted for kept, counted in snapshots)
