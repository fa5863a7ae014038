"""A decision whose run cannot start is never stuck for ever (issue 54, finding 5).

Withdrawing on a thread whose custom assistant a supervisor deleted: the withdrawal was recorded,
its run 404'd, the reconciler raised on every pass, and every decision, withdrawal and delete on
the thread answered 409. Now the server's own decisions (a withdrawal, an expiry) run on the
thread's graph when its assistant is gone, so the thread ends and may be deleted; and a person's
answer sent through an assistant that is gone is given up (a `not_applied` record on the trail,
listed in `GET /analytics`, the reconciler done with it), its approval answerable again.
Outcomes are read from the business database, the layer's store and the trail.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from sqlalchemy import create_engine, select

from agents.offline import phrases
from server.ledger.storage import decisions
from tests.server.helpers import only_pending, start

pytestmark = pytest.mark.server


async def custom_assistant(http_as) -> str:
    """A supervisor's own assistant of the support agent; its id."""
    made = await http_as("supervisor1").post(
        "/assistants", json={"graph_id": "support", "name": f"custom-{uuid.uuid4().hex[:6]}"}
    )
    assert made.status_code == 200, made.text
    return made.json()["assistant_id"]


async def until(check, seconds: float = 60, what: str = "condition"):
    """Poll `check` (async) until it returns something truthy (bounded)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := await check():
            return result
        await asyncio.sleep(0.5)
    pytest.fail(f"{what} not reached in {seconds} s")


def decision_states(server, thread_id: str) -> list[str]:
    """The states of the thread's decisions in the layer's store."""
    with create_engine(server.layer_url).connect() as conn:
        return list(conn.scalars(select(decisions.c.state).where(decisions.c.thread_id == thread_id)))


async def test_a_withdrawal_after_its_assistant_was_deleted_applies_and_the_thread_may_go(
    client_as, http_as, server, server_order, ledger
):
    """withdraw after a supervisor deleted the thread's assistant: 200, applied on the thread's graph.

    The thread ends without a refund, its decision is settled (the reconciler has nothing left to
    do), the owner deletes the thread, and the trail holds the withdrawal and the deletion.
    """
    requester = client_as("requester1")
    assistant = await custom_assistant(http_as)
    order_id = server_order(300)
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id), assistant)
    only_pending(thread)
    gone = await http_as("supervisor1").delete(f"/assistants/{assistant}")
    assert gone.status_code == 204, gone.text

    answer = await http_as("requester1").post(f"/threads/{thread_id}/withdraw", json={"reason": "no longer"})
    assert answer.status_code == 200, answer.text

    async def ended():
        return (await requester.threads.get(thread_id))["status"] == "idle"

    await until(ended, what="the withdrawal's run")
    assert ledger.refunds_of(order_id) == []

    async def settled():
        return decision_states(server, thread_id) == ["applied"]

    await until(settled, what="the reconciler settling the withdrawal")
    deleted = await http_as("requester1").delete(f"/threads/{thread_id}")
    assert deleted.status_code == 204, deleted.text
    trail = (await http_as("supervisor1").get(f"/audit/{thread_id}")).json()["records"]
    assert [(r["decision"], r["reviewer"]) for r in trail] == [
        ("withdrawn", "requester1"),
        ("thread_deleted", "requester1"),
    ]


async def test_an_answer_whose_assistant_is_gone_is_recorded_not_applied_and_may_be_given_again(
    client_as, http_as, server, server_order, ledger
):
    """an approve sent through an assistant deleted before its run came: given up, listed, answerable again.

    supervisor1's approve (a run delayed an hour, which the owner cancels) is accepted; then the
    assistant it was sent through is deleted. The reconciler gives it up: `failed` in the layer's
    store, a `not_applied` record on the trail saying why, listed in `GET /analytics` under
    `not_applied`, nothing refunded. The approval waits again: reviewer1's approve through the
    support agent refunds it once, and the trail verifies.
    """
    requester = client_as("requester1")
    supervisor = http_as("supervisor1")
    assistant = await custom_assistant(http_as)
    order_id = server_order(300)
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id), assistant)
    interrupt_id = only_pending(thread)["id"]
    later = {
        "assistant_id": assistant,
        "command": {"resume": {interrupt_id: {"decisions": [{"type": "approve"}]}}},
        "after_seconds": 3600,
    }
    first = await supervisor.post(f"/threads/{thread_id}/runs", json=later)
    assert first.status_code == 200, first.text
    cancelled = await http_as("requester1").post(f"/threads/{thread_id}/runs/{first.json()['run_id']}/cancel")
    assert cancelled.status_code in {200, 202, 204}, cancelled.text
    gone = await supervisor.delete(f"/assistants/{assistant}")
    assert gone.status_code == 204, gone.text

    async def given_up():
        records = (await supervisor.get(f"/audit/{thread_id}")).json()["records"]
        return [r for r in records if r["decision"] == "not_applied"]

    [record] = await until(given_up, seconds=90, what="the reconciler giving the decision up")
    assert (record["outcome"], record["reviewer"]) == ("failed", "system")
    assert f"assistant {assistant}, which the answer was sent through, no longer exists" in record["message"]
    assert "the approval may be answered again" in record["message"]
    assert decision_states(server, thread_id) == ["failed"]
    assert ledger.refunds_of(order_id) == []
    listed = (await supervisor.get("/analytics")).json()["not_applied"]
    assert [(r["thread_id"], r["outcome"]) for r in listed if r["thread_id"] == thread_id] == [
        (thread_id, "failed")
    ]

    await client_as("reviewer1").runs.wait(
        thread_id, "support", command={"resume": {interrupt_id: {"decisions": [{"type": "approve"}]}}}
    )
    assert ledger.refunds_of(order_id) == [300.0]
    check = (await supervisor.get(f"/audit/{thread_id}/verification")).json()
    assert check["trail_problems"] == [], check
