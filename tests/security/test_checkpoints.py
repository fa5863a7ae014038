"""Checks at the right moment: a resume is judged on the checkpoint it runs from; no run drops an approval.

Class 4 of issue 15. A reviewer's approve of a 300 refund must not be replayed onto an
earlier checkpoint where a supervisor-only 899 refund waits; a message enqueued behind a
run that is about to pause must not discard the approval it leaves.
"""

from __future__ import annotations

import pytest

from agents.offline import phrases
from tests.security.outcomes import REFUSED_OR_BUSY, human, refusal_of, refused_with
from tests.server.helpers import APPROVE, decisions, only_pending, start

pytestmark = pytest.mark.server


async def fork_point(requester, supervisor, server_order) -> tuple[str, str, str, str]:
    """A thread whose 899 refund was rejected by a supervisor and whose 300 refund now waits.

    Returns the thread, the checkpoint where the 899 refund waited, and the two orders.
    """
    large, small = server_order(899), server_order(300)
    thread_id, _ = await start(requester, phrases.refund_in_full(large))
    await supervisor.runs.wait(thread_id, "support", command=decisions({"type": "reject", "message": "No"}))
    await requester.runs.wait(
        thread_id, "support", input={"messages": [human(phrases.refund_amount(300, small))]}
    )
    pending = only_pending(await requester.threads.get(thread_id))
    assert pending["value"]["action_requests"][0]["args"]["amount"] == 300
    for state in await requester.threads.get_history(thread_id, limit=100):
        for task in state["tasks"]:
            for interrupt in task.get("interrupts") or []:
                calls = (interrupt.get("value") or {}).get("action_requests") or []
                if any(c["args"].get("order_id") == large for c in calls):
                    return thread_id, state["checkpoint"]["checkpoint_id"], large, small
    pytest.fail("no checkpoint in the history holds the 899 refund's interrupt")
    raise AssertionError


FORKS = {
    "checkpoint_id": lambda cp: {"checkpoint_id": cp},
    "checkpoint": lambda cp: {"checkpoint": {"checkpoint_id": cp, "checkpoint_ns": ""}},
    "config.configurable": lambda cp: {"config": {"configurable": {"checkpoint_id": cp}}},
}


@pytest.mark.parametrize("fork", sorted(FORKS))
async def test_reviewer_resume_forked_to_a_supervisor_only_refund_is_refused(
    requester, reviewer, supervisor, server_order, ledger, fork
):
    """a reviewer's approve naming the checkpoint of the pending 899 refund: refused, nothing refunded."""
    thread_id, checkpoint_id, large, small = await fork_point(requester, supervisor, server_order)
    with refused_with(REFUSED_OR_BUSY):
        await reviewer.runs.wait(
            thread_id, "support", command=decisions(APPROVE), **FORKS[fork](checkpoint_id)
        )
    assert ledger.refunds_of(large) == []
    assert ledger.refunds_of(small) == []
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert (ledger.refunds_of(large), ledger.refunds_of(small)) == ([], [300.0])


@pytest.mark.parametrize("strategy", [None, "enqueue"])
async def test_a_run_enqueued_behind_a_pausing_run_keeps_the_approval(
    requester, supervisor, server_order, ledger, strategy
):
    """a second message right after a run that will pause: refused (409) or run, the approval still waits."""
    order_id = server_order(899)
    thread_id = (await requester.threads.create())["thread_id"]
    await requester.runs.create(
        thread_id, "support", input={"messages": [human(phrases.refund_in_full(order_id))]}
    )
    extra = {} if strategy is None else {"multitask_strategy": strategy}
    second = requester.runs.create(thread_id, "support", input={"messages": [human("Hello")]}, **extra)
    refusal = await refusal_of(second)
    assert refusal is None or refusal.status_code == 409, refusal
    for run in await requester.runs.list(thread_id):
        await requester.runs.join(thread_id, run["run_id"])
    after = await requester.threads.get(thread_id)
    assert after["status"] == "interrupted", after["status"]
    pending = only_pending(after)
    assert pending["value"]["action_requests"][0]["args"]["order_id"] == order_id
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert ledger.refunds_of(order_id) == [899.0]
