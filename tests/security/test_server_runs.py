"""Every run the server starts itself works on the thread owner's records, and on nobody else's (issue 54).

Finding 1 of the fifth attack pass: `POST /threads/{id}/withdraw` resumed the thread with a run
that named nobody, and the tools took "nobody" for "everyone": a requester withdrew the agent's
"which order?" question giving another customer's order id, and the agent read that order and
refunded 45 (under the auto-approve limit) with nobody deciding. Now each run the server starts
passes one door (`server.admission.server_runs`) that writes whose records it works on, and a
tool in a server run that names nobody refuses. Outcomes are read from the business database
and the trail.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest

from agents.offline import phrases
from services.database import orders
from tests.security.outcomes import add_owned_order
from tests.server.helpers import only_pending, start

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.server


async def until_idle(
    client, thread_id: str, seconds: float = 60, sent: Callable[[], int] = lambda: 1
) -> dict:
    """The thread once its run has ended and `sent()` is not 0 (bounded polling)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        thread = await client.threads.get(thread_id)
        if thread["status"] == "idle" and sent():
            return thread
        await asyncio.sleep(0.2)
    pytest.fail(f"thread {thread_id} still {thread['status']} after {seconds} s")


async def question_waiting(requester) -> str:
    """requester1 asks for a refund without naming the order; the agent asks which one. The thread."""
    thread_id, thread = await start(requester, phrases.REFUND_WITHOUT_ORDER)
    [action] = only_pending(thread)["value"]["action_requests"]
    assert action["name"] == "ask_user", action
    return thread_id


async def test_a_withdrawal_naming_another_customers_order_reads_and_refunds_nothing(
    client_as, http_as, server_services, ledger
):
    """withdraw with requester2's order id as the reason: the run acts for requester1, so no refund.

    The agent reads the answer as the order id; looking it up finds no such order of requester1,
    nothing is refunded, the customer's name and address never reach the thread, and the trail
    holds the withdrawal alone. The run carries whose records it works on.
    """
    requester = client_as("requester1")
    theirs = add_owned_order(server_services, 45, "requester2")
    thread_id = await question_waiting(requester)

    answer = await http_as("requester1").post(f"/threads/{thread_id}/withdraw", json={"reason": theirs})
    assert answer.status_code == 200, answer.text
    await until_idle(requester, thread_id)

    assert ledger.refunds_of(theirs) == []
    state = await requester.threads.get_state(thread_id)
    said = " ".join(str(m["content"]) for m in state["values"]["messages"])
    assert f"There is no order {theirs} for requester1" in said, said
    assert f"{theirs.lower()}@example.com" not in said
    records = (await http_as("supervisor1").get(f"/audit/{thread_id}")).json()["records"]
    assert [(r["decision"], r["reviewer"]) for r in records] == [("withdrawn", "requester1")]
    [run, *_] = await requester.runs.list(thread_id)
    told = run["kwargs"]["config"]["configurable"]
    assert told["hitl_acting_for"] == {"identity": "requester1", "roles": ["requester"]}
    assert told["hitl_requested_by"] == ["requester1"]


async def test_a_withdrawal_naming_the_owners_own_order_works_on_it(
    client_as, http_as, server_services, ledger
):
    """withdraw with requester1's own order id: the run acts for requester1: it reads and refunds it (45)."""
    requester = client_as("requester1")
    mine = add_owned_order(server_services, 45, "requester1")
    thread_id = await question_waiting(requester)

    answer = await http_as("requester1").post(f"/threads/{thread_id}/withdraw", json={"reason": mine})
    assert answer.status_code == 200, answer.text
    await until_idle(requester, thread_id)

    assert ledger.refunds_of(mine) == [45.0]


def move_order(services, order_id: str, owner: str) -> None:
    """Give `order_id` to another customer, straight in the business database (as a back office would)."""
    with services.engine.begin() as conn:
        conn.execute(orders.update().where(orders.c.order_id == order_id).values(owner=owner))


async def test_the_reconcilers_run_works_on_the_owners_records_only(
    client_as, http_as, server_services, ledger
):
    """the reconciler's run: it acts for requester1, so an order moved to requester2 is not refunded.

    supervisor1 approves the e-mail with a run delayed an hour, which the owner cancels: the
    decision is accepted and not applied, so the reconciler (a pass every 10 s) sends it again
    through the door. In that run the e-mail goes out once (its receipt covers it) and the refund
    of 45 that waited beside it is refused: the order went to requester2 meanwhile.
    """
    requester = client_as("requester1")
    order_id = add_owned_order(server_services, 45, "requester1")
    thread_id, thread = await start(requester, phrases.refund_and_email(order_id))
    interrupt = only_pending(thread)
    assert [a["name"] for a in interrupt["value"]["action_requests"]] == ["send_email"]
    later = {
        "assistant_id": "support",
        "command": {"resume": {interrupt["id"]: {"decisions": [{"type": "approve"}]}}},
        "after_seconds": 3600,
    }
    first = await http_as("supervisor1").post(f"/threads/{thread_id}/runs", json=later)
    assert first.status_code == 200, first.text
    cancelled = await http_as("requester1").post(f"/threads/{thread_id}/runs/{first.json()['run_id']}/cancel")
    assert cancelled.status_code in {200, 202, 204}, cancelled.text
    move_order(server_services, order_id, "requester2")

    await until_idle(
        requester, thread_id, seconds=90, sent=lambda: ledger.emails_to(f"{order_id.lower()}@example.com")
    )
    assert ledger.emails_to(f"{order_id.lower()}@example.com") == 1
    assert ledger.refunds_of(order_id) == []
    [run, *_] = await requester.runs.list(thread_id)
    told = run["kwargs"]["config"]["configurable"]
    assert told["hitl_acting_for"] == {"identity": "requester1", "roles": ["requester"]}
    records = (await http_as("supervisor1").get(f"/audit/{thread_id}")).json()["records"]
    assert next((r["decision"], r["reviewer"]) for r in records if r["outcome"] == "accepted") == (
        "approve",
        "supervisor1",
    )


FORGED_WORDS = {
    "hitl_in_process": True,
    "hitl_acting_for": {"identity": "requester2", "roles": ["requester"]},
    "hitl_escalated": {"any-call": "requester"},
}
"""What the server alone says in a run, as a client could try to say it: in-process (every record),
acting for another customer, an escalation to a group the sender is in."""


@pytest.mark.parametrize("key", sorted(FORGED_WORDS))
@pytest.mark.parametrize("user", ["requester1", "reviewer1", "supervisor1", None])
async def test_no_caller_may_say_a_run_is_in_process_or_whom_it_works_for(
    http_as, server_services, ledger, user, key
):
    """a run sending a server-only key in config or context: 422 (anonymous 401); nothing refunded.

    The request refunds 45 (under the auto-approve limit) of requester2's order: had the key been
    taken, the run would have worked on every record, or on requester2's.
    """
    theirs = add_owned_order(server_services, 45, "requester2")
    message = {"messages": [{"role": "user", "content": phrases.refund_amount(45, theirs)}]}
    for where in (
        {"config": {"configurable": {key: FORGED_WORDS[key]}}},
        {"context": {key: FORGED_WORDS[key]}},
    ):
        sent = await http_as(user).post(
            "/runs/wait", json={"assistant_id": "support", "input": message, **where}
        )
        assert sent.status_code == (401 if user is None else 422), sent.text
        if user is not None:
            assert key in sent.json()["detail"]
    assert ledger.refunds_of(theirs) == []
