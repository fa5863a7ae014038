"""The scripted model: natural variants, purity, and tool calls that survive streaming."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agents.offline import DEMO, phrases
from agents.offline.support import SupportRequest
from hitl.model.scripted.chat import ScriptedChatModel

SUPPORT_TOOLS = ["get_order", "get_refund_policy", "issue_refund", "send_email", "ask_user", "task"]


def model():
    return ScriptedChatModel(scripts=DEMO).bind_tools(
        [{"type": "function", "function": {"name": n}} for n in SUPPORT_TOOLS]
    )


@pytest.mark.parametrize(
    ("text", "order_id", "refund", "amount", "emails"),
    [
        (phrases.REFUND_IN_FULL, "A1024", True, None, False),
        ("A1024 came damaged. I want a full refund please", "A1024", True, None, False),
        (phrases.REFUND_PARTIAL, "A2048", True, 59.0, False),
        ("please refund $59 for order A2048", "A2048", True, 59.0, False),
        ("Could you refund 12.50 on A3072?", "A3072", True, 12.5, False),
        (phrases.EMAIL_CUSTOMER, "A1024", False, None, True),
        ("e-mail the customer of order A2048 that we shipped a replacement", "A2048", False, None, True),
        (phrases.REFUND_WITHOUT_ORDER, None, True, None, False),
        (phrases.REFUND_AND_EMAIL, "A1024", True, None, True),
    ],
)
def test_support_requests_are_read_from_natural_variants(text, order_id, refund, amount, emails):
    """parsing: order id, refund, amount and e-mail intent come from the words."""
    request = SupportRequest.read(text)
    assert (request.order_id, request.refund, request.amount, request.email_news is not None) == (
        order_id,
        refund,
        amount,
        emails,
    )


def test_the_reply_is_a_pure_function_of_the_conversation():
    """purity: the same conversation gets the same calls and ids; a different one other ids."""
    first = model().invoke([HumanMessage(phrases.REFUND_PARTIAL)])
    again = model().invoke([HumanMessage(phrases.REFUND_PARTIAL)])
    other = model().invoke([HumanMessage(phrases.refund_amount(59, "A3072"))])
    assert first.tool_calls == again.tool_calls
    assert first.tool_calls[0]["name"] == "issue_refund"
    assert first.tool_calls[0]["id"] != other.tool_calls[0]["id"]


def test_streamed_tool_calls_add_up_to_the_same_message():
    """streaming: chunks merge into exactly the tool calls of the unstreamed reply."""
    messages = [HumanMessage(phrases.refund_and_email("A1024"))]
    whole = model().invoke(messages)
    chunks = list(model().stream(messages))
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk
    assert [(c["name"], c["args"], c["id"]) for c in merged.tool_calls] == [
        (c["name"], c["args"], c["id"]) for c in whole.tool_calls
    ]


def test_after_a_rejection_the_answer_carries_the_reason():
    """After a tool result: the final words reflect it, the reviewer's reason included."""
    call = {"name": "issue_refund", "args": {"order_id": "A2048", "amount": 59}, "id": "c1"}
    reply = model().invoke(
        [
            HumanMessage(phrases.REFUND_PARTIAL),
            AIMessage("", tool_calls=[call]),
            ToolMessage(
                "User rejected the tool call for `issue_refund` with reason: duplicate",
                tool_call_id="c1",
                status="error",
            ),
        ]
    )
    assert reply.tool_calls == []
    assert "duplicate" in reply.text


def test_a_missing_order_id_makes_it_ask_the_user():
    """ask_user: no order id means a question, not a guess."""
    reply = model().invoke([HumanMessage(phrases.REFUND_WITHOUT_ORDER)])
    assert [c["name"] for c in reply.tool_calls] == ["ask_user"]
