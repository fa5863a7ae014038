"""One call of an MCP tool, round after round until the server's result: what the model reads of it.

The arguments are checked against the tool's input schema before anything is sent. A round the server
answers with questions (`InputRequiredResult`) asks each one of a person (`hitl.mcp.questions`) and
calls again with the answers and the server's state, on a new connection: nothing is held open while
a person thinks, and a resumed run starts again from the first round (the server keeps no state between
rounds, MCP 2026-07-28). The result reaches the model as plain text of bounded length; a server's own
error as the tool's error. Who may run the call, and under which approval, is the gate's and the
toolbox's (`hitl.mcp.toolbox`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jsonschema_rs
from langchain_core.messages import ToolMessage

from hitl.mcp import questions
from hitl.mcp.connection import CallToolResult, call_round
from hitl.mcp.listing import plain_text
from hitl.mcp.servers import ServerProblem

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from langchain_core.messages import ToolCall

    from hitl.mcp.connection import ElicitResult, Tool
    from hitl.mcp.listing import McpTool
    from hitl.mcp.servers import Endpoint, Limits

MAX_ROUNDS = 10
"""The most rounds one call may take (questions, or the server's own "call me again")."""
MAX_ARG_ERRORS = 3


@dataclass(frozen=True)
class Call:
    """A call of `tool` as the model made it, for `agent`, on a server reached at `endpoint`."""

    tool: McpTool
    endpoint: Endpoint
    call: ToolCall
    agent: str
    limits: Limits
    max_chars: int
    meta: Mapping[str, Any]
    relist: Callable[[list[Tool]], bool] | None = None
    """Before the first round, on its connection: the server's tools listed now; False: not called."""


async def run(this: Call) -> ToolMessage | None:
    """Call the tool: its result for the model (an error result for what the server reports as one).

    None when `relist` said no: nothing was sent.

    Raises:
        ServerProblem: the server could not be reached, timed out, answered badly or asked what
            cannot be asked; the model and the trail read its words.
        ValidationError: an answer to a question that does not fit it (the question stays answerable).
    """
    tool, call = this.tool, this.call
    args = dict(call["args"])
    if problems := _arg_problems(tool, args):
        return _message(call, f"{tool.policy_name} was not called: {problems}", error=True)
    answers: dict[str, ElicitResult] | None = None
    state: str | None = None
    for round_number in range(MAX_ROUNDS):
        result = await call_round(
            this.endpoint,
            tool.name,
            args,
            limits=this.limits,
            meta=this.meta,
            answers=answers,
            request_state=state,
            relist=this.relist if round_number == 0 else None,
        )
        if result is None:
            return None
        if isinstance(result, CallToolResult):
            return _result(this, result)
        state = result.request_state
        answers = {}
        for key, request in (result.input_requests or {}).items():
            asked = questions.question(tool, call, this.agent, this.endpoint.server.answered_by, request)
            answers[key] = questions.ask(asked)
    msg = f"{tool.server} asked for more than {MAX_ROUNDS} rounds of {tool.name}; the call was abandoned"
    raise ServerProblem(msg)


def _arg_problems(tool: McpTool, args: dict[str, Any]) -> str:
    """What is wrong with `args` for `tool`'s input schema, in words naming each argument ('' if nothing)."""
    errors = list(jsonschema_rs.validator_for(tool.input_schema).iter_errors(args))
    shown = [f"{'/'.join(str(p) for p in e.instance_path) or 'arguments'}: {e.message}" for e in errors]
    return "; ".join(shown[:MAX_ARG_ERRORS])


def _result(this: Call, result: CallToolResult) -> ToolMessage:
    text = plain_text(_text_of(result), this.max_chars)
    if result.is_error:
        return _message(this.call, f"{this.tool.policy_name} reported an error: {text}", error=True)
    return _message(this.call, text or f"{this.tool.policy_name} returned nothing.")


def _text_of(result: CallToolResult) -> str:
    """What the model reads of a result: its text blocks, or its structured content as JSON."""
    parts = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(getattr(block, "text", "")))
        elif kind == "resource" and isinstance(text := getattr(block.resource, "text", None), str):  # type: ignore[union-attr]
            parts.append(text)
        else:
            mime = getattr(block, "mime_type", None) or getattr(block, "uri", None) or kind
            parts.append(f"[{kind} content ({mime}) not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, default=str))
    return "\n".join(parts)


def _message(call: ToolCall, text: str, *, error: bool = False) -> ToolMessage:
    return ToolMessage(
        content=text,
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error" if error else "success",
    )
