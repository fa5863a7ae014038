"""Four eyes through the real server: whoever asked for a gated call may not approve it themselves.

"Who asked" is the thread's owner and the caller of the run that made the call; the gate
writes them into the interrupt (`requested_by`) and the server refuses their approve, edit or
respond with 403, audited, leaving the approval pending for someone else. A reject withdraws.
"""

from __future__ import annotations

import pytest

from agents.offline import phrases
from tests.conftest import add_order
from tests.server.helpers import APPROVE, decisions, only_pending, refused, start

pytestmark = pytest.mark.server


async def test_a_reviewer_cannot_approve_the_email_they_asked_for(client_as, server_services):
    """own e-mail: reviewer1's approve is 403, audited; the e-mail waits; supervisor1 approves, sent once."""
    reviewer, supervisor = client_as("reviewer1"), client_as("supervisor1")
    order_id = add_order(server_services, 40)
    thread_id, thread = await start(reviewer, phrases.email_customer(order_id))
    pending = only_pending(thread)
    assert pending["value"]["requested_by"] == ["reviewer1"]
    with refused(403, r"reviewer1 asked for send_email, so someone else must approve it"):
        await reviewer.runs.wait(thread_id, "support", command={"resume": decisions(APPROVE)["resume"]})
    assert (await reviewer.threads.get(thread_id))["status"] == "interrupted"
    assert server_services.outbox.sent_to(f"{order_id.lower()}@example.com") == []
    records = (await supervisor.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["reviewer"], r["outcome"]) for r in records] == [("reviewer1", "refused")]

    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert len(server_services.outbox.sent_to(f"{order_id.lower()}@example.com")) == 1


async def test_a_run_started_by_someone_else_makes_them_an_asker_too(client_as, server_services):
    """supervisor1 asks for a refund on requester1's thread: supervisor1 may not approve it; reviewer1 may."""
    requester, supervisor, reviewer = (
        client_as("requester1"),
        client_as("supervisor1"),
        client_as("reviewer1"),
    )
    order_id = add_order(server_services, 300)
    thread_id, _ = await start(requester, "Hello")
    await supervisor.runs.wait(
        thread_id,
        "support",
        input={"messages": [{"role": "user", "content": phrases.refund_amount(300, order_id)}]},
    )
    pending = only_pending(await supervisor.threads.get(thread_id))
    assert pending["value"]["requested_by"] == ["requester1", "supervisor1"]
    with refused(403, "separation of duties"):
        await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert server_services.payments.refunds_for(order_id) == []
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [300.0]


async def test_the_asker_may_withdraw_with_a_reject(client_as, server_services):
    """reject by the asker: accepted, the e-mail is never sent."""
    reviewer = client_as("reviewer1")
    order_id = add_order(server_services, 40)
    thread_id, _ = await start(reviewer, phrases.email_customer(order_id))
    await reviewer.runs.wait(
        thread_id, "support", command=decisions({"type": "reject", "message": "Sent by phone instead"})
    )
    assert (await reviewer.threads.get(thread_id))["status"] == "idle"
    assert server_services.outbox.sent_to(f"{order_id.lower()}@example.com") == []
