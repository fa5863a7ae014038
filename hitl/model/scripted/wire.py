"""The scripted model in OpenAI's chat-completions wire format: a request in, a completion or chunks out.

Pure translation, no HTTP (`hitl.model.scripted.endpoint` serves it): the decisions are the in-process
model's (`scripted_reply`), only the envelope is OpenAI's. Tool call ids are random, as a
provider's are, so the path through the wire never leans on the in-process model's stable ids.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, convert_to_messages
from langchain_core.messages.tool import invalid_tool_call, tool_call

from hitl.model.scripted.chat import scripted_reply
from hitl.model.scripted.conversation import Conversation

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from hitl.model.scripted.script import ScriptFn

ARGUMENT_PIECE = 7
"""Characters of tool-call arguments per streamed delta: every call arrives in several pieces."""


class WireRequestError(ValueError):
    """A chat-completions request the endpoint cannot read (answered with HTTP 400)."""


@dataclass(frozen=True)
class WireCall:
    """One tool call as OpenAI sends it: the arguments are JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class WireAnswer:
    """The scripted model's answer to one request, ready to be wrapped."""

    model: str
    text: str
    calls: tuple[WireCall, ...]
    prompt_tokens: int

    @property
    def finish_reason(self) -> str:
        """'tool_calls' when the model calls tools, else 'stop'."""
        return "tool_calls" if self.calls else "stop"

    def malformed(self) -> WireAnswer:
        """The same answer with every call's arguments cut in half (no longer valid JSON)."""
        calls = tuple(WireCall(c.id, c.name, c.arguments[: len(c.arguments) // 2]) for c in self.calls)
        return WireAnswer(self.model, self.text, calls, self.prompt_tokens)


def answer(body: object, scripts: Sequence[ScriptFn] | None = None) -> WireAnswer:
    """What the scripted model says to a chat-completions request body (with `scripts`, as `scripted_reply`).

    Raises:
        WireRequestError: when the body is not a chat-completions request.
    """
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
        raise WireRequestError("the body must be a JSON object with a non-empty 'messages' list")
    try:
        messages = convert_to_messages([_with_invalid_calls(m) for m in body["messages"]])
    except (ValueError, TypeError, KeyError) as error:
        msg = f"'messages' cannot be read: {error}"
        raise WireRequestError(msg) from error
    schemas = dict(_tool_schemas(body.get("tools") or []))
    reply = scripted_reply(Conversation.of(messages, frozenset(schemas), schemas), scripts)
    model = str(body.get("model") or "scripted")
    prompt_tokens = sum(len(str(m.content).split()) for m in messages)
    if isinstance(reply, str):
        return WireAnswer(model, reply, (), prompt_tokens)
    calls = tuple(WireCall(f"call_{uuid.uuid4().hex[:24]}", c.name, json.dumps(c.args)) for c in reply)
    return WireAnswer(model, "", calls, prompt_tokens)


def _with_invalid_calls(message: Any) -> Any:  # noqa: ANN401  (one message of the body, as sent)
    """An assistant message whose call arguments are not all JSON, read as langchain-openai reads a reply."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return message
    calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    if all(_is_json(c.get("function", {}).get("arguments")) for c in calls):
        return message
    valid, invalid = [], []
    for call in calls:
        function = call.get("function", {})
        if _is_json(function.get("arguments")):
            args = json.loads(function.get("arguments") or "{}")
            valid.append(tool_call(name=function.get("name"), args=args, id=call.get("id")))
        else:
            error = "arguments are not valid JSON"
            invalid.append(
                invalid_tool_call(
                    name=function.get("name"), args=function.get("arguments"), id=call.get("id"), error=error
                )
            )
    return AIMessage(content=message.get("content") or "", tool_calls=valid, invalid_tool_calls=invalid)


def _is_json(text: object) -> bool:
    if not isinstance(text, str):
        return text is None
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _tool_schemas(tools: object) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, JSON schema of the arguments) of each tool the request offers."""
    if not isinstance(tools, list):
        raise WireRequestError("'tools' must be a list")
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            msg = f"each tool needs function.name (got {tool!r})"
            raise WireRequestError(msg)
        parameters = function.get("parameters")
        yield function["name"], parameters if isinstance(parameters, dict) else {}


def completion(reply: WireAnswer) -> dict[str, Any]:
    """The whole answer as one `chat.completion` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.calls
        ]
    return {
        **_envelope(reply, "chat.completion"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}],
        "usage": _usage(reply),
    }


def chunks(reply: WireAnswer, *, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The answer as `chat.completion.chunk` objects, as OpenAI streams them.

    The role first, then the text word by word, then each tool call: its id and name, then
    its arguments in several pieces; a last chunk with the finish reason (and the usage when
    `stream_options.include_usage` asked for it).
    """
    envelope = _envelope(reply, "chat.completion.chunk")

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**envelope, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    yield chunk({"role": "assistant", "content": ""})
    for i, word in enumerate(reply.text.split(" ") if reply.text else []):
        yield chunk({"content": word if i == 0 else f" {word}"})
    for index, call in enumerate(reply.calls):
        head = {"index": index, "id": call.id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        for start in range(0, len(call.arguments), ARGUMENT_PIECE):
            piece = call.arguments[start : start + ARGUMENT_PIECE]
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, reply.finish_reason)
    if include_usage:
        yield {**envelope, "choices": [], "usage": _usage(reply)}


def _envelope(reply: WireAnswer, kind: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": kind,
        "created": int(time.time()),
        "model": reply.model,
        "system_fingerprint": "scripted",
    }


def _usage(reply: WireAnswer) -> dict[str, int]:
    completion_tokens = len(reply.text.split()) + sum(len(c.arguments) // 4 + 1 for c in reply.calls)
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": reply.prompt_tokens + completion_tokens,
    }
