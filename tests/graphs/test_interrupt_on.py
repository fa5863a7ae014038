"""A stock Deep Agents project moved over by one import: `from hitl import create_deep_agent`.

The project below is written as Deep Agents' docs write one (`interrupt_on` with `True`, `False`
and `{"allowed_decisions", "description"}`, subagent dicts with their own `interrupt_on`); it
runs in-process on the scripted model, and its calls pause at our `ApprovalGate`.
"""

from __future__ import annotations

import inspect
import uuid
from dataclasses import fields
from typing import Any

import deepagents
import pytest
from deepagents import FilesystemPermission
from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ValidationError

import hitl
from agents.offline import DEMO, phrases
from hitl.gate.gate import ApprovalGate
from hitl.model.scripted.chat import ScriptedChatModel
from hitl.policy.deadlines import Deadline
from hitl.policy.gates import ToolGate
from hitl.policy.interrupt_on import ACCEPTED_KEYS, STOCK_KEYS
from tests.graphs.conftest import Conversation
from tests.graphs.test_policy_matrix import agents_in
from tools.support import build_support_tools

EVERY = ["approve", "edit", "reject", "respond"]
REFUND_TOOLS = ("get_order", "get_refund_policy", "issue_refund")
APPROVE = {"decisions": [{"type": "approve"}]}


def stock_project(services: Any, **changes: Any) -> Any:
    """The project as its Deep Agents version had it, with `hitl.create_deep_agent` in its place."""
    tools = build_support_tools(lambda: services)
    options: dict[str, Any] = {
        "system_prompt": "You are a customer-service agent for an online shop.",
        "interrupt_on": {
            "issue_refund": True,
            "send_email": {
                "allowed_decisions": ["approve", "reject"],
                "description": "An e-mail to a customer",
            },
        },
        "subagents": [
            {
                "name": "refund_specialist",
                "description": "Handles refunds; a supervisor approves each.",
                "system_prompt": "You issue refunds.",
                "tools": [t for t in tools if t.name in REFUND_TOOLS],
                "interrupt_on": {
                    "issue_refund": {"allowed_decisions": ["approve", "reject"], "decider": "supervisor"}
                },
            }
        ],
        "checkpointer": InMemorySaver(),
        "name": "shop",
    }
    return hitl.create_deep_agent(ScriptedChatModel(scripts=DEMO), tools, **(options | changes))


def chat(graph: Any) -> Conversation:
    return Conversation(graph, str(uuid.uuid4()))


def only_interrupt(result: Any) -> Any:
    assert len(result.interrupts) == 1
    return result.interrupts[0]


def test_true_pauses_with_our_value_and_an_approve_refunds_once(services):
    """True: every decision, our value (agent, tool_call_id, required_role); approve writes one refund."""
    conversation = chat(stock_project(services))
    pending = only_interrupt(conversation.say(phrases.REFUND_IN_FULL))
    action, config = pending.value["action_requests"][0], pending.value["review_configs"][0]
    assert (pending.value["agent"], action["agent"], action["name"]) == ("shop", "shop", "issue_refund")
    assert action["args"]["amount"] == 899.0
    assert action["description"].startswith("shop asks before acting")
    assert (config["allowed_decisions"], config["required_role"]) == (EVERY, "reviewer")
    assert "deadline" in pending.value  # the settings' default deadline
    assert services.payments.refunds_for("A1024") == []

    conversation.resume(APPROVE)

    refunds = services.payments.refunds_for("A1024")
    assert [(r["amount"], r["tool_call_id"]) for r in refunds] == [(899.0, action["tool_call_id"])]
    assert "Refunded 899 on order A1024" in conversation.last_words()


def test_per_call_mode_asks_once_per_call_with_our_value(services):
    """interrupt_mode="per_call" (ours, after Deep Agents' parameters): one tool_approval, answered by id."""
    conversation = chat(stock_project(services, interrupt_mode="per_call"))
    pending = only_interrupt(conversation.say(phrases.REFUND_IN_FULL))
    value = pending.value
    assert (value["type"], value["agent"], value["name"]) == ("tool_approval", "shop", "issue_refund")
    assert (value["allowed_decisions"], value["required_role"]) == (EVERY, "reviewer")
    conversation.resume({pending.id: {"type": "approve"}})
    assert [r["amount"] for r in services.payments.refunds_for("A1024")] == [899.0]


def test_a_bad_answer_is_refused_before_it_is_saved(services):
    """Wrong count, a disallowed decision, a bad edit: each raises, nothing runs, the thread still answers."""
    conversation = chat(stock_project(services))
    conversation.say(phrases.refund_and_email("A1024"))
    bad_answers = [
        {"decisions": []},
        APPROVE,
        {"decisions": [{"type": "approve"}, {"type": "respond", "message": "sent"}]},
        {
            "decisions": [
                {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"amount": "ten"}}},
                {"type": "approve"},
            ]
        },
    ]
    for bad in bad_answers:
        with pytest.raises(ValidationError):
            conversation.resume(bad)
        assert services.payments.count() == 0
    pending = conversation.pending()[0].value
    assert [a["description"] for a in pending["action_requests"]][1] == "An e-mail to a customer"

    conversation.resume({"decisions": [{"type": "approve"}, {"type": "reject", "message": "Not yet"}]})
    assert [r["amount"] for r in services.payments.refunds_for("A1024")] == [899.0]
    assert services.outbox.sent_to("mara.lind@example.com") == []


def test_false_is_not_gated(services):
    """False: the refund runs at once, and no gate lists the tool."""
    graph = stock_project(services, interrupt_on={"issue_refund": False, "send_email": True})
    result = chat(graph).say(phrases.REFUND_IN_FULL)
    assert result.interrupts == ()
    assert [r["amount"] for r in services.payments.refunds_for("A1024")] == [899.0]
    gate, _ = agents_in(graph, "shop")["shop"]
    assert "issue_refund" not in gate.interrupt_on
    assert "send_email" in gate.interrupt_on


def test_each_subagent_pauses_at_its_own_gate(services):
    """A subagent's own interrupt_on (with our `decider`): its value names it and a supervisor."""
    conversation = chat(stock_project(services))
    pending = only_interrupt(conversation.say(phrases.REFUND_VIA_SPECIALIST))
    config = pending.value["review_configs"][0]
    assert pending.value["agent"] == "refund_specialist"
    assert (config["allowed_decisions"], config["required_role"]) == (["approve", "reject"], "supervisor")
    conversation.resume(APPROVE)
    assert [r["amount"] for r in services.payments.refunds_for("A2048")] == [59.0]


def test_a_subagent_without_interrupt_on_inherits_the_parents(services):
    """As in Deep Agents: no interrupt_on of its own, the parent's for the tools it has."""
    subagent = {
        "name": "refund_specialist",
        "description": "Handles refunds.",
        "system_prompt": "You issue refunds.",
        "tools": [t for t in build_support_tools(lambda: services) if t.name in REFUND_TOOLS],
    }
    graph = stock_project(services, subagents=[subagent])
    pending = only_interrupt(chat(graph).say(phrases.REFUND_VIA_SPECIALIST))
    assert pending.value["agent"] == "refund_specialist"
    assert pending.value["review_configs"][0]["allowed_decisions"] == EVERY
    gates = agents_in(graph, "shop")
    assert set(gates["refund_specialist"][0].interrupt_on) == {"issue_refund"}  # send_email: not its tool


def test_the_general_purpose_subagent_gets_the_parents_gate(services):
    """general-purpose: its own ApprovalGate with the parent's interrupt_on, in the parent's mode."""
    gates = agents_in(stock_project(services, interrupt_mode="per_call"), "shop")
    parent, general = gates["shop"][0], gates["general-purpose"][0]
    assert isinstance(general, ApprovalGate)
    assert general is not parent
    assert (general.agent, general.interrupt_mode) == ("general-purpose", "per_call")
    assert general.policy == parent.policy
    assert set(gates) == {"shop", "general-purpose", "refund_specialist"}


def test_a_callable_stock_description_and_when(services):
    """description(tool_call, state, runtime) is what the reviewer reads; when(request) decides the pause.

    Both see the call and the run's runtime (context, store, config), not its state.
    """

    def describe(tool_call, state, runtime):
        assert runtime is not None
        return f"Refund {tool_call['args']['amount']:g} to {tool_call['args']['order_id']} ({len(state)})"

    graph = stock_project(
        services,
        interrupt_on={
            "issue_refund": {
                "allowed_decisions": ["approve", "edit", "reject"],
                "description": describe,
                "when": lambda request: (
                    "thread_id" in request.runtime.config["configurable"]
                    and request.tool_call["args"]["amount"] > 100
                ),
            }
        },
    )
    assert chat(graph).say(phrases.REFUND_PARTIAL).interrupts == ()
    assert [r["amount"] for r in services.payments.refunds_for("A2048")] == [59.0]
    pending = only_interrupt(chat(graph).say(phrases.REFUND_IN_FULL))
    assert pending.value["action_requests"][0]["description"] == "Refund 899 to A1024 (0)"


def test_our_keys_and_a_tool_gate_sit_beside_the_stock_ones(services):
    """decider, deadline (seconds) and approvals_required as keys; a ToolGate as a value."""
    graph = stock_project(
        services,
        interrupt_on={
            "issue_refund": {
                "allowed_decisions": ["approve", "reject"],
                "decider": "supervisor",
                "deadline": 60,
                "approvals_required": 2,
                "args_schema": {"type": "object"},
            },
            "send_email": ToolGate(allowed_decisions=("approve",), deadline=Deadline(30)),
        },
    )
    pending = only_interrupt(chat(graph).say(phrases.REFUND_IN_FULL))
    config = pending.value["review_configs"][0]
    assert (config["required_role"], config["approvals_required"]) == ("supervisor", 2)
    assert pending.value["on_expiry"] == "reject"


@pytest.mark.parametrize(
    ("interrupt_on", "named"),
    [
        ({"issue_refund": {"allowed_decisions": ["approve"], "approvals_requird": 2}}, "'approvals_requird'"),
        ({"issue_refund": {"allowed_decision": ["approve"]}}, "'allowed_decision'"),
        ({"issue_refund": {"allowed_decisions": ["approve"], "self_approval": "no"}}, "self_approval"),
        ({"issue_refund": {"allowed_decisions": []}}, "allowed_decisions"),
        ({"issue_refund": {"allowed_decisions": ["aprove"]}}, "allowed_decisions"),
        ({"issue_refund": {"description": "no decisions"}}, "allowed_decisions is required"),
        ({"issue_refund": "yes"}, "must be True, False, a dict or a ToolGate"),
        ({"issue_refnd": True}, "issue_refnd"),
    ],
)
def test_an_unknown_key_or_value_is_refused_loudly(services, interrupt_on, named):
    """A typo never turns a gate off: building the agent fails with a message naming what is wrong."""
    with pytest.raises(ValueError, match=named) as refused:
        stock_project(services, interrupt_on=interrupt_on)
    if "'" in named:
        assert "accepted keys are allowed_decisions, description, args_schema, when, decider" in str(
            refused.value
        )


def test_a_subagent_with_an_unknown_key_is_refused(services):
    """`interupt_on` in a subagent dict would leave it the parent's gate: refused, naming the key."""
    subagent = {
        "name": "refund_specialist",
        "description": "Handles refunds.",
        "interupt_on": {"issue_refund": True},
    }
    with pytest.raises(ValueError, match="'interupt_on'"):
        stock_project(services, subagents=[subagent])


def test_the_call_is_deep_agents_call():
    """Every parameter of Deep Agents' create_deep_agent is ours too, of the same kind and default."""
    stock = inspect.signature(deepagents.create_deep_agent).parameters
    ours = inspect.signature(hitl.create_deep_agent).parameters
    assert [(n, p.kind, p.default) for n, p in stock.items()] == [
        (n, p.kind, p.default) for n, p in list(ours.items())[: len(stock)]
    ]
    extra = list(ours.values())[len(stock) :]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in extra)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"middleware": [HumanInTheLoopMiddleware({"send_email": True})]}, "HumanInTheLoopMiddleware"),
        (
            {"permissions": [FilesystemPermission(operations=["write"], paths=["/**"], mode="interrupt")]},
            "mode='interrupt'",
        ),
        (
            {"subagents": [{"name": "remote", "description": "x", "graph_id": "g", "interrupt_on": {}}]},
            "compiled or remote",
        ),
    ],
)
def test_what_would_pause_beside_our_gate_is_refused(services, changes, named):
    """A stock HITL middleware, an interrupting permission, a gate on a remote subagent: refused."""
    with pytest.raises(ValueError, match=named):
        stock_project(services, **changes)


def test_the_keys_follow_langchain_and_tool_gate():
    """An upgrade that adds a stock key, or a ToolGate field no dict can set, fails here first."""
    assert set(STOCK_KEYS) == set(InterruptOnConfig.__annotations__)
    assert set(ACCEPTED_KEYS) - {"args_schema"} == {f.name for f in fields(ToolGate)}
