"""The scripted endpoint speaks OpenAI's chat-completions protocol and decides as the in-process model."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

from agents.offline import DEMO, phrases
from hitl.model.scripted.chat import scripted_reply
from hitl.model.scripted.conversation import Conversation
from server.http.outgoing import tls
from server.runtime.replicas import free_port, stop

ROOT = Path(__file__).resolve().parents[2]

SUPPORT_TOOLS = ("get_order", "get_refund_policy", "issue_refund", "send_email", "ask_user", "task")
ORDER = {
    "order_id": "A1024",
    "customer_name": "Ada Lovelace",
    "customer_email": "ada@example.com",
    "item": "Teapot",
    "amount": 89.0,
    "status": "delivered",
    "delivered_on": "2026-11-20",
}


def tools(*names: str) -> list[dict]:
    return [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
        for n in names
    ]


def after_get_order() -> list[dict]:
    """A refund-and-email request after its get_order: the next answer is two calls at once."""
    call = {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": "{}"}}
    return [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": phrases.refund_and_email("A1024")},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(ORDER)},
    ]


def completions(endpoint, body: dict) -> httpx.Response:
    return httpx.post(f"{endpoint.base_url}/chat/completions", json=body, timeout=10, verify=tls())


def sse_chunks(response: httpx.Response) -> list[dict | str]:
    """The `data:` payloads of an event stream: JSON chunks, then the literal [DONE]."""
    payloads = [
        line.removeprefix("data:").strip() for line in response.text.splitlines() if line.startswith("data:")
    ]
    return [p if p == "[DONE]" else json.loads(p) for p in payloads]


def test_models_lists_the_scripted_model(through_the_wire):
    """GET /v1/models: one model, 'scripted', in OpenAI's list shape."""
    listed = httpx.get(f"{through_the_wire.base_url}/models", timeout=5, verify=tls()).json()
    assert listed["object"] == "list"
    assert [m["id"] for m in listed["data"]] == ["scripted"]


def test_one_message_carries_several_tool_calls(through_the_wire):
    """non-streamed: issue_refund and send_email in one assistant message, arguments as JSON text."""
    body = completions(
        through_the_wire, {"model": "scripted", "messages": after_get_order(), "tools": tools(*SUPPORT_TOOLS)}
    )
    assert body.status_code == 200
    choice = body.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    calls = choice["message"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["issue_refund", "send_email"]
    assert json.loads(calls[0]["function"]["arguments"]) == {
        "order_id": "A1024",
        "amount": 89.0,
        "reason": "Customer request",
    }
    assert len({c["id"] for c in calls}) == 2
    assert body.json()["usage"]["total_tokens"] > 0


def test_streamed_arguments_come_in_pieces_and_end_with_done(through_the_wire):
    """stream: role first, each call's id and name once, its arguments over several deltas, then [DONE]."""
    body = {
        "model": "scripted",
        "messages": after_get_order(),
        "tools": tools(*SUPPORT_TOOLS),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    response = completions(through_the_wire, body)
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = sse_chunks(response)
    assert chunks[-1] == "[DONE]"
    assert chunks[-2]["choices"] == []
    assert chunks[-2]["usage"]["total_tokens"] > 0
    deltas = [c["choices"][0] for c in chunks[:-2]]
    assert deltas[0]["delta"]["role"] == "assistant"
    assert deltas[-1]["finish_reason"] == "tool_calls"
    assert len({c["id"] for c in chunks[:-1]}) == 1
    pieces: dict[int, list[str]] = {}
    for delta in deltas:
        for call in delta["delta"].get("tool_calls", []):
            pieces.setdefault(call["index"], []).append(call["function"].get("arguments", ""))
    assert sorted(pieces) == [0, 1]
    for index, parts in pieces.items():
        assert len([p for p in parts if p]) > 2, index
        json.loads("".join(parts))


@pytest.mark.parametrize(
    "messages",
    [
        [HumanMessage(phrases.REFUND_PARTIAL)],
        [HumanMessage("hello")],
        [
            HumanMessage(phrases.refund_and_email("A1024")),
            AIMessage("", tool_calls=[{"name": "get_order", "args": {"order_id": "A1024"}, "id": "c1"}]),
            ToolMessage(json.dumps(ORDER), tool_call_id="c1"),
        ],
    ],
    ids=["one-call", "words", "two-calls"],
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_langchain_openai_hears_what_the_in_process_model_decides(through_the_wire, messages, stream):
    """ChatOpenAI, streamed or not: the same words or the same calls (name, args) as `scripted_reply`."""
    model = ChatOpenAI(model="scripted", base_url=through_the_wire.base_url, api_key="dummy", max_retries=0)
    bound = model.bind_tools(tools(*SUPPORT_TOOLS))
    if stream:
        merged = None
        for chunk in bound.stream(messages):
            merged = chunk if merged is None else merged + chunk
        reply = merged
    else:
        reply = bound.invoke(messages)
    expected = scripted_reply(Conversation.of(messages, frozenset(SUPPORT_TOOLS)), DEMO)
    if isinstance(expected, str):
        assert (reply.text, reply.tool_calls) == (expected, [])
    else:
        assert [(c["name"], c["args"]) for c in reply.tool_calls] == [(c.name, c.args) for c in expected]
        assert all(c["id"].startswith("call_") for c in reply.tool_calls)
        assert reply.invalid_tool_calls == []


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"model": "scripted"}, "non-empty 'messages'"),
        ({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]}, "function.name"),
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "cannot be read"),
    ],
)
def test_a_request_it_cannot_read_gets_400_saying_why(through_the_wire, body, says):
    """400 in OpenAI's error shape (error.message, error.type), never a 500."""
    response = completions(through_the_wire, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert says in error["message"]


def test_the_cli_serves_the_endpoint_on_the_port_asked_for(tmp_path):
    """`hitl openai-scripted --port P`: /v1/models and a completion answer on 127.0.0.1:P."""
    port = free_port()
    log = tmp_path / "endpoint.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "hitl"), "openai-scripted", "--port", str(port)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log.read_text()
            try:
                models = httpx.get(f"{url}/models", timeout=1, verify=tls())
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        assert models.json()["data"][0]["id"] == "scripted"
        reply = ChatOpenAI(model="scripted", base_url=url, api_key="dummy").invoke("hello")
        assert "scripted model" in reply.text
    finally:
        stop(process)


def test_a_fault_header_fails_one_request_and_arms_nothing(through_the_wire):
    """X-Scripted-Fault: that request gets a 429 with Retry-After; the next one is answered."""
    model = ChatOpenAI(
        model="scripted",
        base_url=through_the_wire.base_url,
        api_key="dummy",
        max_retries=0,
        default_headers={"X-Scripted-Fault": "rate_limit"},
    )
    with pytest.raises(openai.RateLimitError, match="429"):
        model.invoke("hello")
    response = httpx.post(
        f"{through_the_wire.base_url}/chat/completions",
        json={"messages": [{"role": "user", "content": "hello"}]},
        headers={"X-Scripted-Fault": "server_error"},
        timeout=5,
        verify=tls(),
    )
    assert (response.status_code, response.headers["retry-after-ms"]) == (500, "20")
    assert through_the_wire.faults.armed == []
    assert (
        "scripted model"
        in ChatOpenAI(model="scripted", base_url=through_the_wire.base_url, api_key="d").invoke("hi").text
    )


@pytest.mark.parametrize(
    "body",
    [
        {"fault": "meteor"},
        {"fault": "timeout", "times": 0},
        {"fault": "rate_limit", "times": "2"},
        ["rate_limit"],
    ],
)
def test_arming_an_unknown_fault_is_refused(through_the_wire, body):
    """POST /faults: 400 naming what is allowed; nothing is armed."""
    response = httpx.post(f"{through_the_wire.url}/faults", json=body, timeout=5, verify=tls())
    assert response.status_code == 400
    assert "fault" in response.json()["error"]["message"] or "times" in response.json()["error"]["message"]
    assert httpx.get(f"{through_the_wire.url}/faults", timeout=5, verify=tls()).json()["armed"] == []
