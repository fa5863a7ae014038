"""The `support` agent in-process: every decision, the refund limit and the specialist subagent."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agents.offline import phrases
from hitl.contracts import answers
from hitl.contracts.published_schema import ANSWER_SCHEMAS, REFERENCE_KEY


def only_interrupt(result):
    assert len(result.interrupts) == 1
    return result.interrupts[0]


def test_approve_writes_the_refund_exactly_once(support_agent, services):
    """approve: the 899 refund pauses, then is written once, and the model says so."""
    chat = support_agent()
    pending = only_interrupt(chat.say(phrases.REFUND_IN_FULL))
    action = pending.value["action_requests"][0]
    assert (action["name"], action["args"]["amount"], action["agent"]) == ("issue_refund", 899.0, "support")
    assert services.payments.refunds_for("A1024") == []

    chat.resume({"decisions": [{"type": "approve"}]})

    refunds = services.payments.refunds_for("A1024")
    assert [r["amount"] for r in refunds] == [899.0]
    assert refunds[0]["tool_call_id"] == action["tool_call_id"]
    assert "Refunded 899 on order A1024" in chat.last_words()


def test_edit_to_699_writes_699(support_agent, services):
    """edit: the reviewer's amount is the one refunded, once."""
    chat = support_agent()
    chat.say(phrases.REFUND_IN_FULL)
    edited = {"order_id": "A1024", "amount": 699, "reason": "Partial: customer keeps the lid"}
    chat.resume({"decisions": [{"type": "edit", "edited_action": {"name": "issue_refund", "args": edited}}]})
    assert [r["amount"] for r in services.payments.refunds_for("A1024")] == [699.0]
    assert services.payments.count() == 1


def test_reject_writes_nothing_and_the_model_hears_why(support_agent, services):
    """reject: no refund row, and the model's answer carries the reviewer's reason."""
    chat = support_agent()
    chat.say(phrases.REFUND_IN_FULL)
    chat.resume({"decisions": [{"type": "reject", "message": "Photos show no damage"}]})
    assert services.payments.count() == 0
    assert "Photos show no damage" in chat.last_words()


def test_respond_answers_ask_user_and_the_refund_goes_on(support_agent, services):
    """respond: the person's answer becomes ask_user's result; the 59 refund then runs unpaused."""
    chat = support_agent()
    pending = only_interrupt(chat.say(phrases.REFUND_WITHOUT_ORDER.replace("refund", "refund 59 on")))
    request = pending.value["action_requests"][0]
    assert request["name"] == "ask_user"
    assert pending.value["review_configs"][0] == {
        "action_name": "ask_user",
        "allowed_decisions": ["respond"],
        "required_role": "owner",
    }
    result = chat.resume({"decisions": [{"type": "respond", "message": "It is A2048"}]})
    assert result.interrupts == ()
    assert [r["amount"] for r in services.payments.refunds_for("A2048")] == [59.0]


def test_a_small_refund_runs_without_a_pause_and_a_large_one_pauses(support_agent, services):
    """when: 59 is under the auto-approve limit of 100 and runs; 899 waits."""
    small = support_agent().say(phrases.REFUND_PARTIAL)
    assert small.interrupts == ()
    assert services.payments.count() == 1
    large = support_agent().say(phrases.REFUND_IN_FULL)
    assert len(large.interrupts) == 1
    assert services.payments.count() == 1


def test_the_refund_specialist_pauses_even_for_59(support_agent, services):
    """Subagent policy: refund_specialist gates every refund; its approval reaches the parent thread."""
    chat = support_agent()
    pending = only_interrupt(chat.say(phrases.REFUND_VIA_SPECIALIST))
    assert pending.value["agent"] == "refund_specialist"
    assert pending.value["action_requests"][0]["args"]["amount"] == 59.0
    assert services.payments.count() == 0

    chat.resume({"decisions": [{"type": "approve"}]})
    assert [r["amount"] for r in services.payments.refunds_for("A2048")] == [59.0]
    assert "refund specialist reports" in chat.last_words()


def test_email_is_gated_with_approve_and_reject_only(support_agent, services):
    """send_email: looks the customer up, pauses with approve/reject, sends once when approved."""
    chat = support_agent()
    pending = only_interrupt(chat.say(phrases.EMAIL_CUSTOMER))
    assert pending.value["review_configs"][0]["allowed_decisions"] == ["approve", "reject"]
    assert pending.value["action_requests"][0]["args"]["to"] == "mara.lind@example.com"
    chat.resume({"decisions": [{"type": "approve"}]})
    assert len(services.outbox.sent_to("mara.lind@example.com")) == 1


def test_a_wrong_answer_is_refused_and_the_thread_stays_answerable(support_agent, services, new_order):
    """A bad batched answer (wrong count, disallowed type, bad edit) is refused before it is saved."""
    chat = support_agent()
    order_id = new_order(250)
    chat.say(phrases.refund_and_email(order_id))
    bad_answers = [
        {"decisions": []},
        {"decisions": [{"type": "approve"}]},
        {
            "decisions": [
                {"type": "approve"},
                {"type": "edit", "edited_action": {"name": "send_email", "args": {}}},
            ]
        },
        {"decisions": [{"type": "respond", "message": "x"}, {"type": "approve"}]},
        {
            "decisions": [
                {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"amount": "ten"}}},
                {"type": "approve"},
            ]
        },
    ]
    for bad in bad_answers:
        with pytest.raises(ValidationError):
            chat.resume(bad)
        assert services.payments.count() == 0
    chat.resume({"decisions": [{"type": "approve"}, {"type": "reject", "message": "No e-mail yet"}]})
    assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [250.0]
    assert services.outbox.sent_to(f"{order_id.lower()}@example.com") == []


def test_interrupt_values_survive_a_json_round_trip(support_agent):
    """contracts: every interrupt value and schema is plain JSON."""
    pending = only_interrupt(support_agent().say(phrases.REFUND_IN_FULL))
    assert json.loads(json.dumps(pending.value)) == pending.value
    assert json.loads(json.dumps(pending.response_schema)) == pending.response_schema


def test_a_pause_publishes_a_reference_to_its_answer_schema(support_agent):
    """memory: each pause keeps a reference of a few bytes; the whole schema is derived from the value."""
    chat = support_agent()
    first = only_interrupt(chat.say(phrases.REFUND_IN_FULL))
    assert first.response_schema == {"title": "BatchedResponse", REFERENCE_KEY: ANSWER_SCHEMAS}
    shape = answers.response_type(first.value)
    full = answers.response_schema(first.value)
    assert full == shape.published_schema()
    assert full["properties"]["decisions"]["minItems"] == 1
    assert len(json.dumps(full)) > 20 * len(json.dumps(first.response_schema))
