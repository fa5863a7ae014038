"""Your own agent offline: rules from what a person says to tool calls and answers (the scripted model)."""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import hitl
from hitl.model.scripted import Call, Rule, Script
from hitl.model.scripted.chat import ScriptedChatModel, help_text, scripted_reply
from hitl.model.scripted.conversation import Conversation

SENT: list[tuple[str, str, float]] = []


@tool
def send_invoice(invoice_id: str, to: str, amount: float) -> str:
    """Send an invoice to a customer."""
    SENT.append((invoice_id, to, amount))
    return f"invoice {invoice_id} sent to {to}"


INVOICES = Script(
    Rule(
        r"send invoice (?P<invoice>INV-\d+) for (?P<amount>[\d.]+) to (?P<to>\S+@\S+)",
        calls=[Call("send_invoice", {"invoice_id": "{invoice}", "to": "{to}", "amount": "{amount}"})],
        then="Sent {invoice} to {to}.",
        refused="I did not send {invoice}: {result}",
        example="Send invoice INV-7 for 120.50 to ana@example.com",
    )
)
SCHEMAS = {"send_invoice": send_invoice.tool_call_schema.model_json_schema()}


def chat(*messages) -> Conversation:
    return Conversation.of(list(messages), frozenset(SCHEMAS), SCHEMAS)


def test_a_rule_calls_its_tool_with_typed_args_then_answers():
    """the request's groups fill the call (120.50 as the number the tool takes); the result, the answer."""
    request = HumanMessage("Please send invoice INV-7 for 120.50 to ana@example.com, thanks")
    [call] = INVOICES(chat(request))
    assert (call.name, call.args) == (
        "send_invoice",
        {"invoice_id": "INV-7", "to": "ana@example.com", "amount": 120.5},
    )
    asked = AIMessage("", tool_calls=[{"name": "send_invoice", "args": call.args, "id": "c1"}])
    done = ToolMessage("invoice INV-7 sent", tool_call_id="c1", name="send_invoice")
    assert INVOICES(chat(request, asked, done)) == "Sent INV-7 to ana@example.com."
    rejected = ToolMessage("Not now", tool_call_id="c1", name="send_invoice", status="error")
    assert INVOICES(chat(request, asked, rejected)) == "I did not send INV-7: Not now"


def test_a_request_no_rule_knows_gets_the_examples():
    """no match: None from the script, and the model's help names the rules' examples."""
    assert INVOICES(chat(HumanMessage("What is the weather?"))) is None
    said = scripted_reply(chat(HumanMessage("What is the weather?")), [INVOICES])
    assert said == help_text([INVOICES])
    assert "Send invoice INV-7 for 120.50 to ana@example.com" in said
    assert "no offline script" in help_text([])


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        (lambda: Rule(r"send (?P<x>\d+)", calls=[Call("t", {"a": "{y}"})]), "y in '{y}'"),
        (lambda: Rule(r"send (?P<x>\d+)", calls=[], then="{z}"), "z in '{z}'"),
        (lambda: Rule(r"send (?P<x>\d+)", calls=[], example="receive 3"), "does not match"),
    ],
)
def test_a_rule_that_cannot_work_fails_when_written(rule, says):
    """a template naming no group of the pattern, or an example it does not match: ValueError at once."""
    with pytest.raises(ValueError, match=says):
        rule()


def test_a_new_agent_runs_offline_pauses_and_runs_its_tool_once_when_approved():
    """create_deep_agent(offline=...): no key, the gated call pauses, an approve sends it once."""
    SENT.clear()
    agent = hitl.create_deep_agent(
        tools=[send_invoice],
        interrupt_on={"send_invoice": True},
        name="invoices",
        offline=INVOICES,
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    paused = agent.invoke(
        {"messages": [{"role": "user", "content": INVOICES.examples[0]}]}, config, version="v2"
    )
    [interrupt] = paused.interrupts
    assert [a["name"] for a in interrupt.value["action_requests"]] == ["send_invoice"]
    assert SENT == []
    agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config, version="v2")
    assert SENT == [("INV-7", "ana@example.com", 120.5)]
    assert agent.get_state(config).values["messages"][-1].text == "Sent INV-7 to ana@example.com."


def test_an_agent_without_a_script_says_how_to_give_it_one():
    """no offline script: the scripted model answers with how to add one, and calls nothing."""
    agent = hitl.create_deep_agent(tools=[send_invoice], interrupt_on={"send_invoice": True}, name="bare")
    said = agent.invoke({"messages": [{"role": "user", "content": "Send invoice INV-7"}]})
    assert "offline=Script(Rule(...))" in said["messages"][-1].text


def test_the_model_uses_only_the_scripts_it_is_given():
    """ScriptedChatModel(scripts=...): its own scripts only; another agent's request gets its help."""
    model = ScriptedChatModel(scripts=(INVOICES,)).bind_tools([send_invoice])
    reply = model.invoke([HumanMessage(INVOICES.examples[0])])
    assert [c["name"] for c in reply.tool_calls] == ["send_invoice"]
    other = model.invoke([HumanMessage("Order A1024 arrived broken, please refund it in full.")])
    assert other.tool_calls == []
