"""MalformedCallRetry: a reply whose calls all have unreadable arguments is asked again, then explained."""

from __future__ import annotations

from langchain.agents.middleware import ModelResponse
from langchain_core.messages import AIMessage
from langchain_core.messages.tool import invalid_tool_call

from hitl.model.malformed_calls import MalformedCallRetry

GOOD = AIMessage("", tool_calls=[{"name": "issue_refund", "args": {"amount": 5}, "id": "c2"}])
ERROR = (
    'Function issue_refund arguments:\n\n{"amount":\n\n'
    "are not valid JSON. Received JSONDecodeError Expecting value"
)
BAD = AIMessage(
    "", invalid_tool_calls=[invalid_tool_call(name="issue_refund", args='{"amount":', id="c1", error=ERROR)]
)


def replies(*messages: AIMessage):
    queue = list(messages)
    seen: list[object] = []

    def handler(request: object) -> ModelResponse:
        seen.append(request)
        return ModelResponse(result=[queue.pop(0)])

    return handler, seen


def test_a_good_reply_after_a_malformed_one_is_used():
    """retry: the same request is sent again once, and the readable reply is the turn's answer."""
    handler, seen = replies(BAD, GOOD)
    response = MalformedCallRetry().wrap_model_call("request", handler)  # type: ignore[arg-type]
    assert response.result == [GOOD]
    assert seen == ["request", "request"]


def test_malformed_every_time_ends_with_words_saying_why():
    """give up: after the last attempt the reply is kept and a sentence names the call and the JSON error."""
    handler, seen = replies(BAD, BAD, BAD)
    response = MalformedCallRetry(attempts=3).wrap_model_call("request", handler)  # type: ignore[arg-type]
    assert len(seen) == 3
    assert response.result[0] is BAD
    assert response.result[-1].text == (
        "Nothing was run: the model sent arguments for issue_refund that are not valid JSON "
        "(Expecting value), 3 times in a row. Please ask again."
    )


def test_a_reply_with_words_or_good_calls_is_left_alone():
    """no retry: text, or a reply with at least one readable call, goes through unchanged."""
    for message in (AIMessage("Refunded."), GOOD):
        handler, seen = replies(message)
        assert MalformedCallRetry().wrap_model_call("request", handler).result == [message]  # type: ignore[arg-type]
        assert len(seen) == 1
