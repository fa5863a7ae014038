"""Policy knobs in-process: the graph applies a run's override and a thread's allowances itself."""

from __future__ import annotations

import pytest
from langgraph.types import Command
from pydantic import ValidationError

from agents.offline import phrases
from hitl.gate.trusted_state import seal_allowance
from hitl.policy.overrides import OverrideError


def say(chat, text: str, policy=None):
    """Send `text` on `chat`'s thread with `policy` as the run's override (no server involved)."""
    context = None if policy is None else {"policy": policy}
    return chat.graph.invoke(
        {"messages": [{"role": "user", "content": text}]}, chat.config, context=context, version="v2"
    )


def allowance_for(chat, pending, tool: str, **bounds):
    """What the server writes for an approve with `allow` on `pending` (a batched interrupt): sealed."""
    waiting = [a["tool_call_id"] for a in pending.value["action_requests"]]
    return {
        f"{pending.id}-0": seal_allowance(
            {
                "id": f"{pending.id}-0",
                "thread_id": chat.thread_id,
                "agent": "support",
                "tool": tool,
                "bounds": bounds,
                "granted_by": "reviewer1",
                "granted_role": "reviewer",
                "granted_at": "2026-11-30T00:00:00+00:00",
                "interrupt_id": pending.id,
                "tool_call_ids": waiting,
            }
        )
    }


def test_a_run_override_holds_for_its_resumes_and_ends_with_the_run(support_agent, services, new_order):
    """override: limit 10 pauses 59; the resume (no context) keeps it; the next run is back to the policy."""
    chat = support_agent()
    (pending,) = say(
        chat,
        phrases.refund_amount(59, new_order(59)),
        {"tools": {"issue_refund": {"auto_approve_limit": 10}}},
    ).interrupts
    assert pending.value["action_requests"][0]["description"].startswith("Refund 59 to order")
    assert chat.resume({"decisions": [{"type": "reject", "message": "no"}]}).interrupts == ()
    assert services.payments.count() == 0

    assert say(chat, phrases.refund_amount(59, new_order(59))).interrupts == ()
    assert services.payments.count() == 1


def test_a_bad_override_fails_the_run_before_anything_happens(support_agent, services):
    """in-process validation: an unknown tool raises OverrideError and nothing is refunded."""
    with pytest.raises(OverrideError, match="send_mail"):
        say(support_agent(), phrases.REFUND_PARTIAL, {"tools": {"send_mail": {}}})
    assert services.payments.count() == 0


def test_subagents_apply_the_run_override(ops_agent):
    """override reach: gate_all pauses a SELECT in ops and inside the general-purpose subagent."""
    select = phrases.run_sql("SELECT count(*) FROM orders")
    for text, agent in [(select, "ops"), (phrases.via_general_purpose(select), "general-purpose")]:
        (pending,) = say(ops_agent(), text, {"gate_all": True}).interrupts
        assert (pending.value["agent"], pending.value["name"]) == (agent, "execute_sql")


def test_an_allowance_granted_on_a_resume_lets_the_next_email_through(support_agent, services, new_order):
    """allowance: granted with a batch's approve, the batch still resumes whole; then it covers e-mail.

    The next e-mail in the thread runs unpaused; one in another thread pauses.
    """
    order_id = new_order(400)
    chat = support_agent()
    (pending,) = say(chat, phrases.refund_and_email(order_id)).interrupts
    grant = allowance_for(chat, pending, "send_email")
    decisions = {"decisions": [{"type": "approve"}, {"type": "approve", "allow": {"scope": "thread"}}]}
    result = chat.graph.invoke(
        Command(resume=decisions, update={"approval_allowances": grant}), chat.config, version="v2"
    )
    assert result.interrupts == ()
    address = f"{order_id.lower()}@example.com"
    assert len(services.outbox.sent_to(address)) == 1

    assert say(chat, phrases.email_customer(order_id)).interrupts == ()
    assert len(services.outbox.sent_to(address)) == 2
    (elsewhere,) = say(support_agent(), phrases.email_customer(order_id)).interrupts
    assert elsewhere.value["action_requests"][0]["name"] == "send_email"


def test_per_call_edits_of_deep_agents_file_tools_follow_the_tool_schema(ops_agent, workspace):
    """edit args, per-call: write_file with content 7 is refused before it is saved; nothing is written."""
    chat = ops_agent()
    (pending,) = chat.say(phrases.write_file("Release 1.4 is live", "notes/release.txt")).interrupts
    bad = {
        "type": "edit",
        "edited_action": {"name": "write_file", "args": {"file_path": "/x.txt", "content": 7}},
    }
    with pytest.raises(ValidationError, match=r"content"):
        chat.resume({pending.id: bad})
    assert [i.id for i in chat.pending()] == [pending.id]
    assert not (workspace / "x.txt").exists()
