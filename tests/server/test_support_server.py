"""The `support` agent through the real `langgraph dev`, driven with `langgraph-sdk`."""

from __future__ import annotations

import json

import pytest

from agents.offline import phrases
from hitl.contracts.published_schema import ANSWER_SCHEMAS, REFERENCE_KEY
from tests.server.helpers import only_pending as pending_of
from tests.server.helpers import start

pytestmark = pytest.mark.server


async def test_approve_through_the_server_refunds_once(requester, supervisor, server_order, server_services):
    """approve: the pending refund is visible in threads.get, then written exactly once."""
    order_id = server_order(450)
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id))
    assert thread["status"] == "interrupted"
    pending = pending_of(thread)
    action = pending["value"]["action_requests"][0]
    assert (action["name"], action["args"]["amount"]) == ("issue_refund", 450.0)
    assert server_services.payments.refunds_for(order_id) == []

    result = await supervisor.runs.wait(
        thread_id, "support", command={"resume": {"decisions": [{"type": "approve"}]}}
    )

    assert f"Refunded 450 on order {order_id}" in result["messages"][-1]["content"]
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [450.0]
    assert (await requester.threads.get(thread_id))["status"] == "idle"


async def test_edit_through_the_server_refunds_the_edited_amount(
    requester, supervisor, server_order, server_services
):
    """edit: the reviewer's 120 is refunded, not the requested 400."""
    order_id = server_order(400)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    edit = {"name": "issue_refund", "args": {"order_id": order_id, "amount": 120, "reason": "Partial"}}
    await supervisor.runs.wait(
        thread_id, "support", command={"resume": {"decisions": [{"type": "edit", "edited_action": edit}]}}
    )
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [120.0]


async def test_reject_through_the_server_writes_nothing(requester, supervisor, server_order, server_services):
    """reject: no refund, and the final answer carries the reason."""
    order_id = server_order(300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    result = await supervisor.runs.wait(
        thread_id,
        "support",
        command={"resume": {"decisions": [{"type": "reject", "message": "Outside the 30 days"}]}},
    )
    assert server_services.payments.refunds_for(order_id) == []
    assert "Outside the 30 days" in result["messages"][-1]["content"]


async def test_interrupts_survive_a_json_round_trip(requester, server_order):
    """contracts: the pending interrupt, as the server returns it, is plain JSON; so is its served schema."""
    thread_id, thread = await start(requester, phrases.refund_in_full(server_order(777)))
    pending = pending_of(thread)
    assert json.loads(json.dumps(pending)) == pending
    assert pending["value"]["review_configs"][0]["required_role"] == "supervisor"
    assert pending["response_schema"][REFERENCE_KEY] == ANSWER_SCHEMAS
    served = await requester.http.get(ANSWER_SCHEMAS.format(thread_id=thread_id))
    assert json.loads(json.dumps(served)) == served
    assert served["schemas"][pending["id"]]["properties"]["decisions"]["minItems"] == 1


async def test_a_small_refund_streams_to_the_end_without_a_pause(
    requester, supervisor, server_order, server_services
):
    """streaming: a 59 refund streams its tool call and finishes without an interrupt."""
    order_id = server_order(59)
    thread = await requester.threads.create()
    streamed_calls = []
    async for chunk in requester.runs.stream(
        thread["thread_id"],
        "support",
        input={"messages": [{"role": "user", "content": phrases.refund_amount(59, order_id)}]},
        stream_mode="messages-tuple",
    ):
        if chunk.event == "messages":
            streamed_calls += [c["name"] for c in chunk.data[0].get("tool_calls") or []]
    assert "issue_refund" in streamed_calls
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [59.0]
    assert (await requester.threads.get(thread["thread_id"]))["status"] == "idle"
