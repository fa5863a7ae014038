"""Bad resumes change nothing, through the real server, and a corrected one then works once."""

from __future__ import annotations

import pytest

from agents.offline import phrases
from hitl.contracts.asks import build_resume, pending_interrupts
from tests.server.helpers import APPROVE, decisions, only_pending, refused, start

pytestmark = pytest.mark.server

BAD_RESUMES = [
    pytest.param({"decisions": []}, "less than 2 items", id="no-decisions"),
    pytest.param({"decisions": [APPROVE]}, "less than 2 items", id="too-few"),
    pytest.param({"decisions": [APPROVE, APPROVE, APPROVE]}, "more than 2 items", id="too-many"),
    pytest.param({"decisions": [{"type": "aprove"}, APPROVE]}, "decisions/0/type", id="unknown-type"),
    pytest.param({"decisions": [APPROVE, {"type": "edit"}]}, "decisions/1/type", id="type-not-allowed"),
    pytest.param(
        {"decisions": [{"type": "edit", "edited_action": {"name": "send_email", "args": {}}}, APPROVE]},
        "edited_action/name",
        id="edit-switches-tool",
    ),
    pytest.param(
        {
            "decisions": [
                {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"amount": "ten"}}},
                APPROVE,
            ]
        },
        "args/amount",
        id="edit-bad-arg-type",
    ),
    pytest.param(
        {
            "decisions": [
                {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"amount": 5}}},
                APPROVE,
            ]
        },
        "order_id",
        id="edit-missing-arg",
    ),
    pytest.param({"decisions": [{"type": "respond"}, APPROVE]}, "decisions/0/type", id="respond-not-allowed"),
    pytest.param(
        {"decisions": [APPROVE, {"type": "reject", "message": 5}]}, "message", id="message-not-text"
    ),
    pytest.param(
        {"f" * 32: {"decisions": [APPROVE, APPROVE]}}, "Unknown interrupt id", id="unknown-interrupt-id"
    ),
    pytest.param("yes", "not of type", id="not-an-object"),
    pytest.param(None, "needs a resume", id="null"),
]


@pytest.mark.parametrize(("bad", "named"), BAD_RESUMES)
async def test_a_bad_resume_is_refused_and_a_corrected_one_works(
    bad, named, requester, supervisor, server_order, server_services
):
    """each bad kind: 422 naming the field; same approval pending, nothing ran; then a fix works once."""
    order_id = server_order(260)
    thread_id, before = await start(requester, phrases.refund_and_email(order_id))
    pending = only_pending(before)
    with refused(422, named):
        await supervisor.runs.wait(thread_id, "support", command={"resume": bad})
    after = await requester.threads.get(thread_id)
    assert after["status"] == "interrupted"
    assert only_pending(after)["id"] == pending["id"]
    assert server_services.payments.refunds_for(order_id) == []

    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE, {"type": "reject"}))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [260.0]
    assert (await requester.threads.get(thread_id))["status"] == "idle"


async def test_an_oversized_resume_gets_413_and_changes_nothing(
    requester, supervisor, server_order, server_services
):
    """size: a 200 KB reason is refused with 413; the approval stays."""
    order_id = server_order(260)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    with refused(413, "limit"):
        await supervisor.runs.wait(
            thread_id, "support", command=decisions({"type": "reject", "message": "x" * 200_000})
        )
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"


async def test_a_resume_with_nothing_pending_gets_409(requester, supervisor, server_order):
    """nothing pending: a resume on an idle thread is refused with 409."""
    thread_id, _ = await start(requester, phrases.refund_amount(20, server_order(20)))
    with refused(409, "no pending approval"):
        await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))


async def test_decisions_bound_by_tool_call_id_reach_the_right_call(
    requester, supervisor, server_order, server_services
):
    """binding: approve the refund and reject the e-mail by tool call id, given in the 'wrong' order."""
    order_id = server_order(270)
    thread_id, thread = await start(requester, phrases.refund_and_email(order_id))
    actions = only_pending(thread)["value"]["action_requests"]
    by_name = {a["name"]: a["tool_call_id"] for a in actions}
    resume = build_resume(
        pending_interrupts(thread),
        {by_name["send_email"]: {"type": "reject", "message": "later"}, by_name["issue_refund"]: APPROVE},
    )
    await supervisor.runs.wait(thread_id, "support", command={"resume": resume})
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [270.0]
    assert server_services.outbox.sent_to(f"{order_id.lower()}@example.com") == []
