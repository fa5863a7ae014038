"""Provider failures (429, 500, timeouts, malformed tool-call arguments) never lose an approval.

The endpoint fails on request; `langchain-openai` retries as MODEL_MAX_RETRIES and
MODEL_TIMEOUT_SECONDS say, then the run fails with the provider's error. A decision already
taken keeps its effect (the tool ran once) and a pending approval stays answerable.
"""

from __future__ import annotations

import openai
import pytest

from agents.offline import phrases
from tests.server.helpers import only_pending, start
from tests.wire.conftest import WIRE_SERVER_RETRIES

APPROVE = {"decisions": [{"type": "approve"}]}
FAILURES = {
    "rate_limit": (openai.RateLimitError, "429"),
    "server_error": (openai.InternalServerError, "500"),
    "timeout": (openai.APITimeoutError, "timed out"),
}


@pytest.fixture(autouse=True)
def retries(monkeypatch):
    """MODEL_MAX_RETRIES=2 and MODEL_TIMEOUT_SECONDS=0.5 for the agents the tests build."""
    monkeypatch.setenv("MODEL_MAX_RETRIES", "2")
    monkeypatch.setenv("MODEL_TIMEOUT_SECONDS", "0.5")
    return 2


def arm(endpoint, fault: str, times: int) -> None:
    endpoint.arm(fault, times, stall_seconds=1.5 if fault == "timeout" else None)


@pytest.mark.parametrize("fault", ["rate_limit", "server_error"])
def test_as_many_failures_as_retries_are_absorbed(
    support_agent, services, new_order, retries, through_the_wire, fault
):
    """retries: with MODEL_MAX_RETRIES=2, two failures in a row are retried and the approval still appears."""
    arm(through_the_wire, fault, retries)
    chat = support_agent()
    result = chat.say(phrases.refund_amount(450, new_order(450)))
    assert result.interrupts[0].value["action_requests"][0]["name"] == "issue_refund"
    assert through_the_wire.served() == {"requests": retries + 1, fault: retries}


@pytest.mark.parametrize("fault", sorted(FAILURES))
def test_one_failure_more_than_the_retries_fails_the_run_saying_why(
    support_agent, services, new_order, retries, through_the_wire, fault
):
    """a failed run: 1 + MODEL_MAX_RETRIES attempts, then the provider's error: 429, 500 or the timeout."""
    error, says = FAILURES[fault]
    arm(through_the_wire, fault, retries + 1)
    order_id = new_order(450)
    with pytest.raises(error, match=says):
        support_agent().say(phrases.refund_amount(450, order_id))
    assert through_the_wire.served()[fault] == retries + 1
    assert services.payments.refunds_for(order_id) == []


@pytest.mark.parametrize("fault", sorted(FAILURES))
def test_a_decision_keeps_its_effect_when_the_next_model_call_fails(
    support_agent, services, new_order, retries, through_the_wire, fault
):
    """after an approve: the refund is written once though the model then fails; the thread goes on."""
    error, _ = FAILURES[fault]
    order_id = new_order(450)
    chat = support_agent()
    assert chat.say(phrases.refund_amount(450, order_id)).interrupts
    arm(through_the_wire, fault, retries + 1)

    with pytest.raises(error):
        chat.resume(APPROVE)

    assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [450.0]
    assert chat.graph.get_state(chat.config).next == ("model",)
    chat.graph.invoke(None, chat.config, version="v2")
    assert f"Refunded 450 on order {order_id}" in chat.last_words()
    assert len(services.payments.refunds_for(order_id)) == 1


def test_a_failure_inside_a_subagent_is_reported_by_the_parent(
    support_agent, services, new_order, retries, through_the_wire
):
    """subagent: the specialist's model fails after the approve; one refund, and the answer says why."""
    order_id = new_order(59)
    chat = support_agent()
    assert chat.say(phrases.via_specialist(phrases.refund_amount(59, order_id))).interrupts
    arm(through_the_wire, "server_error", retries + 1)

    chat.resume(APPROVE)

    assert len(services.payments.refunds_for(order_id)) == 1
    assert "500" in chat.last_words()
    assert "refund specialist" in chat.last_words()


def test_malformed_arguments_once_are_asked_again_and_the_refund_is_gated(
    support_agent, services, new_order, through_the_wire
):
    """malformed once: the model is asked again, and the refund waits for a person as usual."""
    order_id = new_order(450)
    chat = support_agent()
    through_the_wire.arm("malformed_arguments")

    (pending,) = chat.say(phrases.refund_amount(450, order_id)).interrupts

    assert pending.value["action_requests"][0]["args"]["amount"] == 450
    assert through_the_wire.served() == {"requests": 2, "malformed_arguments": 1}
    assert services.payments.refunds_for(order_id) == []
    chat.resume(APPROVE)
    assert len(services.payments.refunds_for(order_id)) == 1


def test_malformed_arguments_twice_run_nothing_and_the_answer_says_why(
    support_agent, services, new_order, through_the_wire
):
    """malformed twice: no tool runs, the answer names the call and the JSON error; asking again is gated."""
    order_id = new_order(450)
    chat = support_agent()
    through_the_wire.arm("malformed_arguments", times=2)

    assert chat.say(phrases.refund_amount(450, order_id)).interrupts == ()

    said = chat.last_words()
    assert "Nothing was run" in said
    assert "issue_refund" in said
    assert "not valid JSON" in said
    assert services.payments.refunds_for(order_id) == []
    (pending,) = chat.say(phrases.refund_amount(450, order_id)).interrupts
    assert pending.value["action_requests"][0]["name"] == "issue_refund"


@pytest.mark.server
async def test_malformed_arguments_on_the_server_end_the_run_saying_why(
    requester, server_order, server_services, through_the_wire
):
    """server: two malformed replies in a row; the run ends idle, its last message says why, nothing ran."""
    order_id = server_order(450)
    through_the_wire.arm("malformed_arguments", times=2)
    thread_id, thread = await start(requester, phrases.refund_amount(450, order_id))
    assert thread["status"] == "idle"
    state = await requester.threads.get_state(thread_id)
    assert "not valid JSON" in state["values"]["messages"][-1]["content"]
    assert server_services.payments.refunds_for(order_id) == []


@pytest.mark.server
async def test_a_paused_approval_stays_answerable_when_the_provider_fails(
    requester, supervisor, server_order, server_services, through_the_wire
):
    """server: while a refund waits, another run fails on 500s, saying so; the waiting one is approved."""
    waiting = server_order(450)
    thread_id, thread = await start(requester, phrases.refund_in_full(waiting))
    pending = only_pending(thread)

    arm(through_the_wire, "server_error", WIRE_SERVER_RETRIES + 1)
    failing = server_order(300)
    with pytest.raises(Exception, match="OpenAIAPIError"):
        await start(requester, phrases.refund_amount(300, failing))
    assert through_the_wire.served()["server_error"] == WIRE_SERVER_RETRIES + 1

    assert only_pending(await requester.threads.get(thread_id))["id"] == pending["id"]
    result = await supervisor.runs.wait(thread_id, "support", command={"resume": APPROVE})
    assert f"Refunded 450 on order {waiting}" in result["messages"][-1]["content"]
    assert [r["amount"] for r in server_services.payments.refunds_for(waiting)] == [450.0]
    assert server_services.payments.refunds_for(failing) == []


@pytest.mark.server
async def test_a_served_decision_survives_a_rate_limited_model(
    requester, supervisor, server_order, server_services, through_the_wire
):
    """server: the approve's run ends in error on 429s, naming them; the refund was written once."""
    order_id = server_order(450)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    arm(through_the_wire, "rate_limit", WIRE_SERVER_RETRIES + 1)

    with pytest.raises(Exception, match="OpenAIRateLimitError"):
        await supervisor.runs.wait(thread_id, "support", command={"resume": APPROVE})

    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [450.0]
    thread = await requester.threads.get(thread_id)
    assert thread["status"] == "error"
    assert not thread.get("interrupts")
