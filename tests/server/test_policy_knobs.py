"""Policy knobs through the real server: review text, per-run overrides, thread allowances."""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agents.offline import phrases
from tests.server.helpers import APPROVE, decisions, only_pending, refused

pytestmark = pytest.mark.server

PREFIX = "support asks before acting for a customer"
ALLOW_IN_THREAD = {"type": "approve", "allow": {"scope": "thread"}}


async def run(client, text: str, thread_id: str | None = None, policy: Any = None, agent: str = "support"):
    """Send `text` (on a new thread unless `thread_id`) with `policy` as the run's override.

    Returns the thread id and the thread after the run.
    """
    if thread_id is None:
        thread_id = (await client.threads.create())["thread_id"]
    context = None if policy is None else {"policy": policy}
    await client.runs.wait(
        thread_id, agent, input={"messages": [{"role": "user", "content": text}]}, context=context
    )
    return thread_id, await client.threads.get(thread_id)


def action(thread: dict[str, Any]) -> dict[str, Any]:
    """The one action request of the thread's one pending batched interrupt."""
    (request,) = only_pending(thread)["value"]["action_requests"]
    return request


async def trail(client, thread_id: str) -> list[dict[str, Any]]:
    return (await client.http.get(f"/audit/{thread_id}"))["records"]


async def test_review_text_is_built_from_the_call_and_the_order(requester, server_order):
    """descriptions: each shape of review text appears in the interrupt.

    A refund shows the order's payment and delivery; an unknown order falls back to the call's args (the
    run still pauses); an e-mail shows recipient and subject.
    """
    order_id = server_order(640)
    _, thread = await run(requester, phrases.refund_in_full(order_id))
    assert action(thread)["description"] == (
        f"Refund 640 to order {order_id} (customer: requester1, Test Customer; paid 640, "
        f"delivered {datetime.now(UTC).date().isoformat()}): "
        "Item arrived broken"
    )

    _, thread = await run(requester, phrases.refund_amount(300, "Z99999999"))
    assert thread["status"] == "interrupted"
    assert action(thread)["description"] == "Refund 300 to order Z99999999: Customer request"

    _, thread = await run(requester, phrases.email_customer(order_id))
    assert (
        action(thread)["description"] == f"E-mail {order_id.lower()}@example.com: About your order {order_id}"
    )


async def test_a_tool_gated_only_by_the_run_shows_the_agent_prefix(requester, reviewer, server_order):
    """prefix + tightening: a tool gated only by the run's override pauses with the agent's prefix.

    Approve/reject only, across the run's resumes; the next run on the thread is back to the policy.
    """
    order_id = server_order(40)
    thread_id, thread = await run(
        requester, phrases.email_customer(order_id), policy={"tools": {"get_order": {}}}
    )
    request = action(thread)
    assert request["name"] == "get_order"
    assert request["description"].startswith(f"{PREFIX}: get_order order_id=")
    assert only_pending(thread)["value"]["review_configs"][0]["allowed_decisions"] == ["approve", "reject"]

    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    after = await requester.threads.get(thread_id)
    assert action(after)["name"] == "send_email"  # the run's override held across the resume
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))

    _, thread = await run(requester, phrases.email_customer(order_id), thread_id=thread_id)
    assert action(thread)["name"] == "send_email"  # a new run without the override: get_order runs


async def test_a_lower_limit_pauses_a_59_refund_and_is_audited(
    requester, reviewer, server_order, server_services
):
    """tightening: limit 10 pauses a requester's 59 refund; approved, it is refunded once.

    The audit shows the override as tighten_policy by requester1.
    """
    order_id = server_order(59)
    thread_id, thread = await run(
        requester,
        phrases.refund_amount(59, order_id),
        policy={"tools": {"issue_refund": {"auto_approve_limit": 10}}},
    )
    assert action(thread)["args"]["amount"] == 59.0
    assert server_services.payments.refunds_for(order_id) == []

    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [59.0]
    (change, *_) = await trail(requester, thread_id)
    assert (change["decision"], change["outcome"], change["reviewer"]) == (
        "tighten_policy",
        "accepted",
        "requester1",
    )
    assert change["message"] == "lowers issue_refund's auto-approve limit from 100 to 10"


async def test_removing_decisions_narrows_what_a_reviewer_may_answer(requester, reviewer, server_order):
    """tightening: gate_all pauses a 59 refund with only approve/reject; an edit is refused with 422."""
    order_id = server_order(59)
    policy = {"gate_all": True, "tools": {"issue_refund": {"allowed_decisions": ["approve", "reject"]}}}
    thread_id, thread = await run(requester, phrases.refund_amount(59, order_id), policy=policy)
    assert only_pending(thread)["value"]["review_configs"][0]["allowed_decisions"] == ["approve", "reject"]
    edit = {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"amount": 10}}}
    with refused(422, "edit"):
        await reviewer.runs.wait(thread_id, "support", command=decisions(edit))
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"


async def test_loosening_is_refused_to_a_reviewer_and_works_for_a_supervisor(
    reviewer, supervisor, server_order, server_services
):
    """loosening: ungating send_email is 403 for a reviewer and works for a supervisor.

    The refusal is audited and sends nothing; the supervisor's run sends without a pause and the audit
    says loosen_policy by supervisor1.
    """
    order_id = server_order(45)
    ungated = {"tools": {"send_email": {"gated": False}}}
    thread_id = (await reviewer.threads.create())["thread_id"]
    with refused(403, "Only a supervisor may loosen the policy"):
        await run(reviewer, phrases.email_customer(order_id), thread_id=thread_id, policy=ungated)
    assert server_services.outbox.sent_to(f"{order_id.lower()}@example.com") == []
    (attempt,) = await trail(reviewer, thread_id)
    assert (attempt["decision"], attempt["outcome"], attempt["message"]) == (
        "loosen_policy",
        "refused",
        "ungates send_email",
    )

    thread_id, thread = await run(supervisor, phrases.email_customer(order_id), policy=ungated)
    assert (thread["status"], thread["interrupts"]) == ("idle", {})
    assert len(server_services.outbox.sent_to(f"{order_id.lower()}@example.com")) == 1
    (change,) = await trail(supervisor, thread_id)
    assert (change["decision"], change["outcome"], change["reviewer"]) == (
        "loosen_policy",
        "accepted",
        "supervisor1",
    )


async def test_a_raised_limit_still_pauses_refunds_over_the_supervisor_limit(
    supervisor, server_order, server_services
):
    """loosening + always-review: with limit 1000 a 300 refund runs unpaused, a 600 one still pauses."""
    small, large = server_order(300), server_order(600)
    raised = {"tools": {"issue_refund": {"auto_approve_limit": 1000}}}
    _, thread = await run(supervisor, phrases.refund_in_full(small), policy=raised)
    assert thread["status"] == "idle"
    assert [r["amount"] for r in server_services.payments.refunds_for(small)] == [300.0]
    _, thread = await run(supervisor, phrases.refund_in_full(large), policy=raised)
    assert only_pending(thread)["value"]["review_configs"][0]["required_role"] == "supervisor"
    assert server_services.payments.refunds_for(large) == []


@pytest.mark.parametrize(
    ("policy", "agent", "match"),
    [
        ({"tools": {"send_mail": {}}}, "support", "names tools it does not have: send_mail"),
        ({"tools": {"send_email": {"allowed_decisions": ["aprove"]}}}, "support", "allowed_decisions.0"),
        ({"gate_all": "yes"}, "support", "gate_all: Input should be a valid boolean"),
        (
            {"tools": {"issue_refund": {"auto_approve_limit": "10"}}},
            "support",
            "issue_refund.auto_approve_limit",
        ),
        ({"auto_approve": True}, "support", "Extra inputs are not permitted"),
        (
            {"tools": {"send_email": {"gated": False, "allowed_decisions": ["approve"]}}},
            "support",
            "gated: false",
        ),
        ({"tools": {"book_flight": {"auto_approve_limit": 10}}}, "travel", "has no auto-approve limit"),
        (["gate_all"], "support", "valid dictionary"),
    ],
)
async def test_bad_overrides_are_refused_at_run_creation(requester, policy, agent, match):
    """validation: each bad override gets 422 naming the problem, and the thread never runs."""
    thread_id = (await requester.threads.create())["thread_id"]
    with refused(422, match):
        await run(requester, "Refund 59 on order A2048", thread_id=thread_id, policy=policy, agent=agent)
    assert (await requester.threads.get(thread_id))["status"] == "idle"


async def test_an_override_on_a_resume_and_forged_state_are_refused(requester, reviewer, server_order):
    """side doors: a policy sent with a resume (422), allowances in input (422) or in a state write (403)."""
    order_id = server_order(300)
    thread_id, _ = await run(requester, phrases.refund_in_full(order_id))
    with refused(422, "applies from the start of a run"):
        await reviewer.runs.wait(
            thread_id, "support", command=decisions(APPROVE), context={"policy": {"gate_all": True}}
        )
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    forged = {"x": {"id": "x", "thread_id": thread_id, "agent": "support", "tool": "issue_refund"}}
    with refused(422, "may not set approval_allowances"):
        await requester.runs.wait(
            thread_id,
            "support",
            input={"messages": [{"role": "user", "content": "hi"}], "approval_allowances": forged},
        )
    with refused(403, "Only a supervisor may write a thread's state"):
        await requester.threads.update_state(thread_id, {"approval_allowances": forged})


async def test_an_allowance_skips_the_next_email_in_its_thread_only_until_revoked(
    requester, reviewer, client_as, server_order, server_services
):
    """allowance: the next send_email in its thread runs unpaused, elsewhere it pauses, until revoked.

    Granting and revoking are audited; a stranger gets 404; after the revoke the pause is back, and a
    revoke while the thread waits gets 409.
    """
    order_id = server_order(35)
    address = f"{order_id.lower()}@example.com"
    thread_id, thread = await run(requester, phrases.email_customer(order_id))
    assert only_pending(thread)["value"]["review_configs"][0]["may_allow"] is True
    await reviewer.runs.wait(thread_id, "support", command=decisions(ALLOW_IN_THREAD))
    assert len(server_services.outbox.sent_to(address)) == 1

    _, again = await run(requester, phrases.email_customer(order_id), thread_id=thread_id)
    assert (again["status"], len(server_services.outbox.sent_to(address))) == ("idle", 2)

    _, other = await run(requester, phrases.email_customer(order_id))
    assert action(other)["name"] == "send_email"

    with refused(404):
        await client_as("requester2").http.post(f"/threads/{thread_id}/allowances/revoke", json={})
    revoked = await reviewer.http.post(f"/threads/{thread_id}/allowances/revoke", json={"tool": "send_email"})
    (allowance,) = (await requester.threads.get_state(thread_id))["values"]["approval_allowances"].values()
    assert revoked == {"revoked": [allowance["id"]]}
    assert (allowance["granted_by"], allowance["revoked_by"]) == ("reviewer1", "reviewer1")

    _, third = await run(requester, phrases.email_customer(order_id), thread_id=thread_id)
    assert action(third)["name"] == "send_email"
    assert len(server_services.outbox.sent_to(address)) == 2
    records = [(r["decision"], r["tool"], r["reviewer"]) for r in await trail(requester, thread_id)]
    assert records == [
        ("approve", "send_email", "reviewer1"),
        ("allow", "send_email", "reviewer1"),
        ("revoke_allowance", "send_email", "reviewer1"),
    ]
    with refused(409, "waits for an approval"):
        await reviewer.http.post(f"/threads/{thread_id}/allowances/revoke", json={})


async def test_an_allowance_never_covers_a_refund_over_the_supervisor_limit(
    requester, reviewer, supervisor, server_order, server_services
):
    """allowance: bounds hold, and a refund over the supervisor limit is never covered.

    After allowing refunds up to 1000, 200 runs unpaused; 600 still pauses for a supervisor, who may not
    allow it for the thread (422) and approves it plainly.
    """
    first, second, large = server_order(300), server_order(200), server_order(600)
    thread_id, _ = await run(requester, phrases.refund_in_full(first))
    allow = {"type": "approve", "allow": {"scope": "thread", "bounds": {"amount": {"max": 1000}}}}
    await reviewer.runs.wait(thread_id, "support", command=decisions(allow))

    _, thread = await run(requester, phrases.refund_in_full(second), thread_id=thread_id)
    assert thread["status"] == "idle"
    assert [r["amount"] for r in server_services.payments.refunds_for(second)] == [200.0]

    _, thread = await run(requester, phrases.refund_in_full(large), thread_id=thread_id)
    config = only_pending(thread)["value"]["review_configs"][0]
    assert (config["required_role"], "may_allow" in config) == ("supervisor", False)
    with refused(422, "cannot be allowed for the thread"):
        await supervisor.runs.wait(thread_id, "support", command=decisions(allow))
    assert server_services.payments.refunds_for(large) == []
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(large)] == [600.0]


async def test_the_cli_approves_with_an_allowance(server, requester, server_order, server_services):
    """CLI: `hitl approve --allow-in-thread` grants an allowance; the next e-mail in the thread runs."""
    order_id = server_order(37)
    thread_id, _ = await run(requester, phrases.email_customer(order_id))
    env = {"HITL_URL": server.url, "HITL_TOKEN": "dev-reviewer1", "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    cli = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "hitl"), "approve", thread_id, "--allow-in-thread", env=env
    )
    assert await asyncio.wait_for(cli.wait(), timeout=120) == 0
    _, thread = await run(requester, phrases.email_customer(order_id), thread_id=thread_id)
    assert thread["status"] == "idle"
    assert len(server_services.outbox.sent_to(f"{order_id.lower()}@example.com")) == 2
