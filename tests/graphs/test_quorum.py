"""Quorum in-process: a refund over the dual-control limit needs two approvals, round by round.

Without a server there are no names: the rounds alone count (the server's tests check who).
A run that says it comes from the server (an authenticated caller) runs the call only when
the server's names make the quorum.
"""

from __future__ import annotations

import pytest
from langgraph.types import Command

from agents.offline import phrases
from hitl.policy import quorum
from hitl.policy.gates import ToolGate

APPROVE = {"decisions": [{"type": "approve"}]}


def only_interrupt(result):
    assert len(result.interrupts) == 1
    return result.interrupts[0]


def test_a_dual_control_refund_pauses_again_after_the_first_approve(support_agent, services):
    """2,400 > 2,000: the first approve leaves it pending "1 of 2" (a new interrupt id); the second runs."""
    chat = support_agent()
    first = only_interrupt(chat.say(phrases.refund_in_full("A4096")))
    config = first.value["review_configs"][0]
    assert (config["required_role"], config["approvals_required"], config["approved_by"]) == (
        "supervisor",
        2,
        [],
    )
    assert "may_allow" not in config

    second = only_interrupt(chat.resume(APPROVE))
    assert second.id != first.id
    assert second.value["action_requests"][0]["args"]["amount"] == 2400.0
    assert second.value["review_configs"][0]["approvals_required"] == 2
    assert services.payments.refunds_for("A4096") == []

    chat.resume(APPROVE)
    assert [r["amount"] for r in services.payments.refunds_for("A4096")] == [2400.0]
    assert chat.pending() == ()


def test_a_reject_in_any_round_rejects(support_agent, services):
    chat = support_agent()
    chat.say(phrases.refund_in_full("A4096"))
    chat.resume(APPROVE)
    chat.resume({"decisions": [{"type": "reject", "message": "Second supervisor says no"}]})
    assert services.payments.count() == 0
    assert "Second supervisor says no" in chat.last_words()
    assert chat.pending() == ()


def test_an_edit_restarts_the_count_on_the_new_args(support_agent, services):
    """Round 2 edits to 2,200: that needs two approvals again (the editor's is the first), so round 3 asks."""
    chat = support_agent()
    chat.say(phrases.refund_in_full("A4096"))
    chat.resume(APPROVE)
    edited = {"order_id": "A4096", "amount": 2200, "reason": "Keeps the milk jug"}
    third = only_interrupt(
        chat.resume(
            {"decisions": [{"type": "edit", "edited_action": {"name": "issue_refund", "args": edited}}]}
        )
    )
    assert third.value["action_requests"][0]["args"] == edited
    assert "2200" in third.value["action_requests"][0]["description"]
    assert services.payments.count() == 0
    chat.resume(APPROVE)
    assert [r["amount"] for r in services.payments.refunds_for("A4096")] == [2200.0]


def test_an_edit_below_the_limit_needs_one_approval(support_agent, services):
    chat = support_agent()
    chat.say(phrases.refund_in_full("A4096"))
    edited = {"order_id": "A4096", "amount": 1500, "reason": "Partial"}
    result = chat.resume(
        {"decisions": [{"type": "edit", "edited_action": {"name": "issue_refund", "args": edited}}]}
    )
    assert result.interrupts == ()
    assert [r["amount"] for r in services.payments.refunds_for("A4096")] == [1500.0]


def test_a_supervisors_quorum_call_and_a_reviewers_call_are_asked_apart(support_agent, services):
    """Refund 2,400 (two supervisors) and e-mail (a reviewer) in one turn: two interrupts, never one batch.

    Each is answered on its own, in any order: the e-mail runs once approved; the refund asks its
    second round on its own and runs after it.
    """
    chat = support_agent()
    result = chat.say(phrases.refund_and_email("A4096"))
    by_tool = {i.value["name"]: i for i in result.interrupts}
    assert sorted(by_tool) == ["issue_refund", "send_email"]
    assert {i.value["type"] for i in result.interrupts} == {"tool_approval"}
    assert (by_tool["issue_refund"].value["required_role"], by_tool["send_email"].value["required_role"]) == (
        "supervisor",
        "reviewer",
    )
    chat.resume({by_tool["send_email"].id: {"type": "approve"}})
    assert len(services.outbox.sent_to("ada.okafor@example.com")) == 1
    second = only_interrupt(chat.resume({by_tool["issue_refund"].id: {"type": "approve"}}))
    assert (second.value["name"], second.value["approved_by"]) == ("issue_refund", [])
    assert services.payments.refunds_for("A4096") == []
    chat.resume({second.id: {"type": "approve"}})
    assert [r["amount"] for r in services.payments.refunds_for("A4096")] == [2400.0]
    assert len(services.outbox.sent_to("ada.okafor@example.com")) == 1


def test_the_refund_specialist_asks_two_approvers_too(support_agent, services):
    chat = support_agent()
    first = only_interrupt(chat.say(phrases.via_specialist(phrases.refund_in_full("A4096"))))
    assert first.value["agent"] == "refund_specialist"
    second = only_interrupt(chat.resume(APPROVE))
    assert second.value["agent"] == "refund_specialist"
    assert services.payments.count() == 0
    chat.resume(APPROVE)
    assert [r["amount"] for r in services.payments.refunds_for("A4096")] == [2400.0]


def test_a_server_run_needs_the_servers_names_for_the_quorum(support_agent, services):
    """An authenticated caller (a server run): approving rounds without two named approvers run nothing."""
    chat = support_agent()
    chat.say(phrases.refund_in_full("A4096"))
    as_server = {
        "configurable": {
            "thread_id": chat.thread_id,
            "langgraph_auth_user_id": "supervisor1",
            "langgraph_auth_permissions": ["supervisor", "reviewer"],
        }
    }
    chat.graph.invoke(Command(resume=APPROVE), as_server, version="v2")
    call = chat.graph.get_state(chat.config).interrupts[0].value["action_requests"][0]
    named = {call["tool_call_id"]: {"args": quorum.digest(call["args"]), "approved_by": ["supervisor1"]}}
    as_server["configurable"][quorum.APPROVALS_KEY] = named
    chat.graph.invoke(Command(resume=APPROVE), as_server, version="v2")
    assert services.payments.count() == 0
    assert "needs 2 different approvers, and approved by supervisor1 only" in chat.last_words()


def test_quorum_settings_are_checked():
    with pytest.raises(ValueError, match="at least 1"):
        ToolGate(allowed_decisions=("approve",), approvals_required=0)
    with pytest.raises(ValueError, match="needs 'approve'"):
        ToolGate(allowed_decisions=("reject",), approvals_required=2)
    with pytest.raises(ValueError, match="owner"):
        ToolGate(allowed_decisions=("approve",), decider="owner", approvals_required=2)
    by_amount = ToolGate(
        allowed_decisions=("approve",), approvals_required=lambda a: 3 if a["amount"] > 1 else 1
    )
    assert (by_amount.approvals_needed({"amount": 5}), by_amount.approvals_needed({"amount": 1})) == (3, 1)
    assert by_amount.approvals_needed({}) == 2  # unreadable args: a quorum all the same


def test_tally_counts_distinct_approvers_of_the_current_args():
    a, b = {"amount": 2400}, {"amount": 2200}
    receipts = [
        {"tool_call_id": "c1", "approvals": {}, "decision": "approve", "final_args": a, "reviewer": "s1"},
        {"tool_call_id": "c1", "approvals": {}, "decision": "approve", "final_args": a, "reviewer": "s1"},
        {"tool_call_id": "c2", "approvals": {}, "decision": "approve", "final_args": a, "reviewer": "s1"},
        {"tool_call_id": "c2", "approvals": {}, "decision": "edit", "final_args": b, "reviewer": "s2"},
        {"tool_call_id": "c2", "approvals": {}, "decision": "approve", "final_args": b, "reviewer": "s1"},
        {"tool_call_id": "c3", "approvals": {}, "decision": "approve", "final_args": a, "reviewer": "s1"},
        {"tool_call_id": "c3", "approvals": {}, "decision": "reject", "final_args": None, "reviewer": "s2"},
        {"tool_call_id": "c4", "decision": "approve", "final_args": a, "reviewer": "s1"},
    ]
    assert quorum.tally(receipts) == {
        "c1": {"args": quorum.digest(a), "approved_by": ["s1"]},
        "c2": {"args": quorum.digest(b), "approved_by": ["s2", "s1"]},
    }


def test_an_order_is_added_for_the_demo(services):
    assert services.orders.get("A4096")["amount"] == 2400.0


def test_per_call_schema_changing_sql_needs_two_approving_rounds(ops_agent, services):
    """ops (per-call): DROP TABLE asks twice, by new interrupt ids, and runs once after the second approve."""
    chat = ops_agent()
    with services.engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE scratch_quorum (n INTEGER)")
    first = only_interrupt(chat.say(phrases.run_sql("DROP TABLE scratch_quorum")))
    assert (first.value["type"], first.value["approvals_required"], first.value["approved_by"]) == (
        "tool_approval",
        2,
        [],
    )
    second = only_interrupt(chat.resume({first.id: {"type": "approve"}}))
    assert second.id != first.id
    assert second.value["args"] == first.value["args"]
    assert services.sql.writes() == 0
    assert chat.resume({second.id: {"type": "approve"}}).interrupts == ()
    assert services.sql.writes() == 1


def test_per_call_reject_in_the_second_round_runs_nothing(ops_agent, services):
    chat = ops_agent()
    first = only_interrupt(chat.say(phrases.run_sql("TRUNCATE TABLE refunds")))
    second = only_interrupt(chat.resume({first.id: {"type": "approve"}}))
    assert chat.resume({second.id: {"type": "reject", "message": "Not today"}}).interrupts == ()
    assert services.sql.writes() == 0
    assert "Not today" in chat.last_words()


def test_per_call_other_writes_need_one_approval(ops_agent, services):
    chat = ops_agent()
    first = only_interrupt(
        chat.say(phrases.run_sql("UPDATE orders SET status = 'late' WHERE order_id = 'A2048'"))
    )
    assert "approvals_required" not in first.value
    assert chat.resume({first.id: {"type": "approve"}}).interrupts == ()
    assert services.sql.writes() == 1
