"""A model turn whose gated calls are for different people: each part answered by its own, in any order.

Issue 47: in `support` a turn asking for `issue_refund` (a reviewer decides) and `ask_user` (the
thread's owner answers) was one batched interrupt nobody could answer. Now the gate never puts
calls of different deciders in one batch: each is asked where it runs, on its own, and the turn
goes on once every call has its answer. The property test throws random mixes of the support
agent's gated calls (and its refund specialist's) into one turn: every pending interrupt has one
decider, and answering each as its decider would ends the turn with each effect once.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from agents import support
from agents.offline import phrases
from agents.settings import DemoSettings
from hitl.model.scripted.chat import ScriptedChatModel
from hitl.model.scripted.script import Call
from services.registry import Services
from tests.conftest import add_order
from tests.graphs.conftest import Conversation

ANSWER = "Store credit is fine."


def deciders_of(interrupt: Any) -> set[str]:
    """Who must answer an interrupt: a per-call value's role, or every role of a batch."""
    value = interrupt.value
    if "action_requests" in value:
        return {c["required_role"] for c in value["review_configs"]}
    return {value.get("required_role", "owner")}


def answer_for(interrupt: Any) -> Any:
    """What its decider answers: approve where allowed, else the owner's words."""
    value = interrupt.value

    def one(allowed: list[str]) -> dict[str, Any]:
        return {"type": "approve"} if "approve" in allowed else {"type": "respond", "message": ANSWER}

    if "action_requests" in value:
        return {"decisions": [one(c["allowed_decisions"]) for c in value["review_configs"]]}
    return one(value.get("allowed_decisions") or [])


@pytest.mark.parametrize("owner_first", [True, False])
def test_a_refund_and_a_question_are_answered_apart_in_either_order(support_agent, services, owner_first):
    """refund + ask_user: a reviewer's interrupt and the owner's; either first; one refund, answer read."""
    chat = support_agent()
    order_id = add_order(services, 300)
    asked = {i.value["name"]: i for i in chat.say(phrases.refund_and_ask(order_id)).interrupts}
    assert {name: deciders_of(i) for name, i in asked.items()} == {
        "issue_refund": {"reviewer"},
        "ask_user": {"owner"},
    }
    order = ["ask_user", "issue_refund"] if owner_first else ["issue_refund", "ask_user"]
    first = chat.resume({asked[order[0]].id: answer_for(asked[order[0]])})
    assert [i.id for i in first.interrupts] == [asked[order[1]].id]
    made = [r["amount"] for r in services.payments.refunds_for(order_id)]
    assert made == ([] if owner_first else [300.0])  # an approved call runs at once, its turn still open
    chat.resume({asked[order[1]].id: answer_for(asked[order[1]])})
    assert chat.pending() == ()
    assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [300.0]
    assert f"Refunded 300 on order {order_id}" in chat.last_words()
    assert f"You answered: {ANSWER}" in chat.last_words()


def test_an_email_and_a_question_are_asked_apart(support_agent, services):
    """e-mail + ask_user: two interrupts (a reviewer's, the owner's); answered at once, one e-mail."""
    chat = support_agent()
    order_id = add_order(services, 300)
    result = chat.say(phrases.email_and_ask(order_id))
    assert sorted((i.value["name"], *deciders_of(i)) for i in result.interrupts) == [
        ("ask_user", "owner"),
        ("send_email", "reviewer"),
    ]
    chat.resume({i.id: answer_for(i) for i in result.interrupts})
    assert chat.pending() == ()
    assert len(services.outbox.sent_to(f"{order_id.lower()}@example.com")) == 1


def test_one_deciders_calls_stay_one_batch(support_agent, services):
    """refund 300 + e-mail (both a reviewer's): still one batched interrupt, answered at once."""
    chat = support_agent()
    (batch,) = chat.say(phrases.refund_and_email(add_order(services, 300))).interrupts
    assert [a["name"] for a in batch.value["action_requests"]] == ["issue_refund", "send_email"]


GATED = st.sampled_from(
    ["refund 150", "refund 300", "refund 600", "refund 2400", "email", "ask", "specialist 300"]
)


def planned_turn(services: Services, picks: list[str]) -> tuple[list[Call], list[Call], dict[str, float]]:
    """The top agent's one turn and the specialist's, from `picks`; the refunds they should make."""
    top: list[Call] = []
    specialist: list[Call] = []
    refunds: dict[str, float] = {}
    for pick in picks:
        kind, _, amount = pick.partition(" ")
        if kind in {"refund", "specialist"}:
            order_id = add_order(services, float(amount))
            refunds[order_id] = float(amount)
            call = Call("issue_refund", {"order_id": order_id, "amount": float(amount), "reason": "mix"})
            if kind == "refund":
                top.append(call)
            elif not specialist:  # one task call hands the specialist its refund
                specialist.append(call)
                top.append(
                    Call(
                        "task",
                        {
                            "description": f"refund {amount} on order {order_id}",
                            "subagent_type": "refund_specialist",
                        },
                    )
                )
            else:
                refunds.pop(order_id)
        elif kind == "email":
            top.append(
                Call("send_email", {"to": f"mix-{len(top)}@example.com", "subject": "Mix", "body": "Hello"})
            )
        else:
            top.append(Call("ask_user", {"question": f"Question {len(top)}?"}))
    return top, specialist, refunds


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(GATED, min_size=1, max_size=4), order=st.randoms(use_true_random=False))
def test_any_mix_of_gated_calls_in_one_turn_is_answerable_and_ends_once(tmp_path_factory, picks, order):
    """property: each interrupt has one decider; answered in a random order, the turn ends; effects once."""
    services = Services.open(f"sqlite:///{tmp_path_factory.mktemp('mix') / 'business.db'}")
    top, specialist, refunds = planned_turn(services, picks)

    def script(chat: Any) -> Any:
        plan = top if "task" in chat.tools else specialist
        return plan if not chat.results else "Done."

    graph = support.make_graph(
        model=ScriptedChatModel(scripts=(script,)),
        checkpointer=InMemorySaver(),
        services=services,
        settings=DemoSettings(),
    )
    chat = Conversation(graph, str(uuid.uuid4()))
    result = chat.say("Do it all.")
    rounds = 0
    while pending := list(result.interrupts):
        rounds += 1
        assert rounds <= 12, pending
        for interrupt in pending:
            assert len(deciders_of(interrupt)) == 1, interrupt.value
            assert deciders_of(interrupt) <= {"owner", "reviewer", "supervisor"}
        chosen = order.choice(pending)
        result = chat.resume({chosen.id: answer_for(chosen)})
    assert chat.pending() == ()
    for order_id, amount in refunds.items():
        assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [amount], picks
    emails = [c for c in top if c.name == "send_email"]
    for call in emails:
        assert len(services.outbox.sent_to(call.args["to"])) == 1, picks
    services.engine.dispose()
