"""The gate on an agent of its own (a `clerk` that pays and takes notes): what pauses, what an answer may be.

A gated call waits before it runs and runs once, as decided; a malformed answer is refused before
anything is saved, so the call stays answerable; the graph's own wall refuses what the asker or a
too-junior reviewer decides; "always allow" is offered only where a tool's gate opts in.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import pytest
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ValidationError

from hitl import Call, Rule, Script, ToolGate, create_deep_agent
from hitl.policy.allowances import covering
from tests.graphs.layer.threads import Conversation

APPROVE = {"decisions": [{"type": "approve"}]}
OFFLINE = Script(
    Rule(
        r"pay (?P<amount>\d+) to (?P<to>\w+)",
        calls=[Call("pay", {"to": "{to}", "amount": "{amount}"})],
        then="Paid {to}: {result}",
        refused="I did not pay {to}: {result}",
        example="Pay 50 to ana",
    ),
    Rule(
        r"note (?P<text>.+)",
        calls=[Call("note", {"text": "{text}"})],
        then="Noted: {result}",
        refused="Not noted: {result}",
    ),
)


def clerk(ledger: dict[str, tuple[str, float]], *, mode: str = "batched", may_allow: bool = False) -> Any:
    """A clerk: payments over 10 wait for a reviewer (over 100: a supervisor); every note waits."""

    @tool
    def pay(to: str, amount: float, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Pay `amount` to `to`."""
        ledger.setdefault(tool_call_id, (to, amount))
        return f"paid {amount:g}"

    @tool
    def note(text: str) -> str:
        """Write a note."""
        return f"wrote {text!r}"

    pay_gate = ToolGate(
        allowed_decisions=("approve", "edit", "reject"),
        auto_approve_limit=10,
        decider=lambda args: "supervisor" if float(args["amount"]) > 100 else "reviewer",
        may_allow=may_allow,
    )
    return create_deep_agent(
        None,
        [pay, note],
        system_prompt="You pay people and take notes.",
        interrupt_on={"pay": pay_gate, "note": True},
        interrupt_mode=mode,
        name="clerk",
        offline=OFFLINE,
        checkpointer=InMemorySaver(),
    )


def thread(graph: Any, owner: tuple[str, str] | None = None) -> Conversation:
    return Conversation(graph, str(uuid.uuid4()), owner)


def test_a_gated_call_waits_and_an_approve_runs_it_once():
    """pay 50: nothing paid while it waits; the interrupt names agent, tool and args; approve pays once."""
    ledger: dict[str, tuple[str, float]] = {}
    chat = thread(clerk(ledger))
    [pending] = chat.say("Pay 50 to ana").interrupts
    [action] = pending.value["action_requests"]
    [config] = pending.value["review_configs"]
    assert (pending.value["agent"], action["name"], action["args"]) == (
        "clerk",
        "pay",
        {"to": "ana", "amount": 50},
    )
    assert (config["allowed_decisions"], config["required_role"]) == (
        ["approve", "edit", "reject"],
        "reviewer",
    )
    assert ledger == {}
    chat.resume(APPROVE)
    chat.resume(APPROVE)
    assert list(ledger.values()) == [("ana", 50)]
    assert "Paid ana: paid 50" in chat.last_words()


def test_a_call_within_its_auto_approve_limit_runs_without_a_person():
    """pay 5 (the limit is 10): no pause, paid once."""
    ledger: dict[str, tuple[str, float]] = {}
    assert thread(clerk(ledger)).say("Pay 5 to ana").interrupts == ()
    assert list(ledger.values()) == [("ana", 5)]


def test_reject_runs_nothing_and_the_model_reads_the_reason():
    """reject with a message: nothing paid; the agent's answer carries the reviewer's words."""
    ledger: dict[str, tuple[str, float]] = {}
    chat = thread(clerk(ledger))
    chat.say("Pay 50 to ana")
    chat.resume({"decisions": [{"type": "reject", "message": "Ana was paid last week"}]})
    assert ledger == {}
    assert "Ana was paid last week" in chat.last_words()


def test_an_edit_runs_the_edited_args_and_bad_args_are_refused_before_anything_is_saved():
    """edit to 40: 40 paid; an edit to 'ten' or to another tool raises and the call stays pending."""
    ledger: dict[str, tuple[str, float]] = {}
    chat = thread(clerk(ledger))
    chat.say("Pay 50 to ana")
    for bad in (
        {"type": "edit", "edited_action": {"name": "pay", "args": {"to": "ana", "amount": "ten"}}},
        {"type": "edit", "edited_action": {"name": "note", "args": {"text": "hi"}}},
    ):
        with pytest.raises(ValidationError):
            chat.resume({"decisions": [bad]})
        assert len(chat.pending()) == 1
    chat.resume(
        {
            "decisions": [
                {"type": "edit", "edited_action": {"name": "pay", "args": {"to": "ana", "amount": 40}}}
            ]
        }
    )
    assert list(ledger.values()) == [("ana", 40)]


def test_a_malformed_answer_is_refused_before_it_is_saved_and_the_call_stays_answerable():
    """no decisions, two for one call, a decision the gate does not allow: each raises, nothing runs."""
    ledger: dict[str, tuple[str, float]] = {}
    chat = thread(clerk(ledger))
    chat.say("Pay 50 to ana")
    for bad in (
        {"decisions": []},
        {"decisions": [{"type": "approve"}, {"type": "approve"}]},
        {"decisions": [{"type": "respond", "message": "paid by hand"}]},
        {"approve": True},
    ):
        with pytest.raises(ValidationError):
            chat.resume(bad)
        assert ledger == {}
        assert len(chat.pending()) == 1
    chat.resume(APPROVE)
    assert list(ledger.values()) == [("ana", 50)]


def test_respond_answers_in_the_tools_place():
    """note (gated with True: every decision): respond's message is the tool's result; the tool never ran."""
    chat = thread(clerk({}))
    [pending] = chat.say("Note the meeting moved").interrupts
    # a gate with no description of its own: one line, the agent's prefix, the tool and its args
    described = pending.value["action_requests"][0]["description"]
    assert described == 'clerk asks before acting: note text="the meeting moved"'
    chat.resume({"decisions": [{"type": "respond", "message": "already on the board"}]})
    assert "Noted: already on the board" in chat.last_words()


def test_per_call_mode_asks_once_per_call_answered_by_interrupt_id():
    """interrupt_mode="per_call": a tool_approval naming the call, answered `{interrupt_id: decision}`."""
    ledger: dict[str, tuple[str, float]] = {}
    chat = thread(clerk(ledger, mode="per_call"))
    [pending] = chat.say("Pay 50 to ana").interrupts
    assert (pending.value["type"], pending.value["name"], pending.value["agent"]) == (
        "tool_approval",
        "pay",
        "clerk",
    )
    with pytest.raises(ValidationError):
        chat.resume({pending.id: {"type": "respond", "message": "no"}})
    chat.resume({pending.id: {"type": "approve"}})
    assert list(ledger.values()) == [("ana", 50)]


def test_the_asker_may_not_approve_their_own_call_in_the_graph_either():
    """four eyes: the owner's own approve is answered 'Not run ... separation of duties'; nothing is paid."""
    ledger: dict[str, tuple[str, float]] = {}
    chat = thread(clerk(ledger), owner=("ana", "requester")).as_person("ana", "requester")
    [pending] = chat.say("Pay 50 to bo").interrupts
    assert pending.value["requested_by"] == ["ana"]
    chat.resume(APPROVE)
    assert ledger == {}
    assert "separation of duties" in chat.last_words()


def test_a_call_for_a_supervisor_is_not_run_on_a_reviewers_approve():
    """pay 500 needs a supervisor: a reviewer's approve is answered 'Not run ... it needs a supervisor'."""
    ledger: dict[str, tuple[str, float]] = {}
    chat = thread(clerk(ledger), owner=("ana", "requester")).as_person("ana", "requester")
    [pending] = chat.say("Pay 500 to bo").interrupts
    assert pending.value["review_configs"][0]["required_role"] == "supervisor"
    chat.as_person("rita", "reviewer").resume(APPROVE)
    assert ledger == {}
    assert "it needs a supervisor" in chat.last_words()


def test_in_a_server_run_a_decided_call_runs_only_under_the_servers_signed_receipt():
    """a supervisor's approve that no server receipted (sent past it): 'Not run ... no signed receipt'."""
    ledger: dict[str, tuple[str, float]] = {}
    chat = thread(clerk(ledger), owner=("ana", "requester")).as_person("ana", "requester")
    chat.say("Pay 500 to bo")
    chat.as_person("sam", "supervisor").resume(APPROVE)
    assert ledger == {}
    assert "no signed receipt" in chat.last_words()


def test_always_allow_is_offered_only_where_the_tools_gate_opts_in():
    """may_allow is off by default: the interrupt offers no `allow`; opted in, it does."""
    [pending] = thread(clerk({})).say("Pay 50 to ana").interrupts
    assert "may_allow" not in pending.value["review_configs"][0]
    [offered] = thread(clerk({}, may_allow=True)).say("Pay 50 to ana").interrupts
    assert offered.value["review_configs"][0]["may_allow"] is True


@pytest.mark.parametrize("may_allow", [False, True])
def test_an_allowance_covers_a_later_call_only_where_the_gate_opts_in(may_allow):
    """a reviewer's allowance in the thread (amount up to 100) lets pay 80 through if the gate opts in."""
    gate = ToolGate(allowed_decisions=("approve", "reject"), may_allow=may_allow)
    allowance = {
        "id": "a-1",
        "thread_id": "t-1",
        "agent": "clerk",
        "tool": "pay",
        "bounds": {"amount": {"max": 100}},
        "granted_by": "rita",
        "granted_role": "reviewer",
        "granted_at": "2026-12-01T00:00:00+00:00",
        "tool_call_ids": ["earlier"],
    }
    call = {"name": "pay", "args": {"to": "bo", "amount": 80}, "id": "later", "type": "tool_call"}
    found = covering({"a-1": allowance}, thread_id="t-1", agent="clerk", gate=gate, call=call)
    assert (found is not None) is may_allow
