"""An MCP server's question mid-call, asked as an interrupt and answered by the thread's owner (or a group).

The server's elicitation becomes an `McpElicitationRequest` (`hitl.contracts.interrupts`): its words
cleaned of control characters and bounded, a form's schema only in the flat shape MCP allows
(`hitl.mcp.elicitations`), a link only http(s). The answer comes back by position in the tool
call, whatever key the server gives the question on a retry (it may give a new one each time: the
call starts again from its first round after every pause); an answer stamped for another question
than the one asked now is not passed on: the person is asked again. Not for the call's rounds
(`hitl.mcp.calls`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import jsonschema_rs
from langgraph.types import interrupt
from pydantic_core import PydanticCustomError, ValidationError

from hitl.contracts.published_schema import ANSWER_SCHEMAS, REFERENCE_KEY
from hitl.mcp.connection import ElicitRequest, ElicitResult
from hitl.mcp.elicitations import (
    MAX_MESSAGE_CHARS,
    answer_schema,
    question_of,
    requested_schema_problem,
)
from hitl.mcp.listing import plain_text
from hitl.mcp.servers import ServerProblem

if TYPE_CHECKING:
    from langchain_core.messages import ToolCall

    from hitl.contracts.interrupts import McpElicitationRequest
    from hitl.mcp.listing import McpTool

MAX_URL_CHARS = 2_000
ANSWER_REFERENCE = {"title": "McpElicitationAnswer", REFERENCE_KEY: ANSWER_SCHEMAS}
"""What the interrupt publishes as its answer schema: where the server serves the full one."""


def question(
    tool: McpTool, call: ToolCall, agent: str, answered_by: str, request: object
) -> McpElicitationRequest:
    """The interrupt value asking `request` (one of a round's elicitations) of whoever answers it.

    Raises:
        ServerProblem: the server asked for something else than an elicitation (sampling, roots),
            or its question cannot be asked as it stands (a malformed schema, a link that is not http(s)).
    """
    where = f"{tool.policy_name} asked"
    if not isinstance(request, ElicitRequest):
        method = getattr(request, "method", type(request).__name__)
        msg = f"{where} for {method!s}, which this agent does not answer; the call was abandoned"
        raise ServerProblem(msg)
    params: Any = request.params
    mode = getattr(params, "mode", "form") or "form"
    message = plain_text(getattr(params, "message", ""), MAX_MESSAGE_CHARS)
    value: dict[str, Any] = {
        "type": "mcp_elicitation",
        "agent": agent,
        "tool_call_id": call["id"] or "",
        "name": call["name"],
        "args": dict(call["args"]),
        "mcp": tool.provenance,
        "mode": mode,
        "message": message,
    }
    if mode == "form":
        schema = getattr(params, "requested_schema", None)
        if (problem := requested_schema_problem(schema)) is not None:
            msg = f"{where} a question that cannot be asked: its schema {problem}; the call was abandoned"
            raise ServerProblem(msg)
        value["requested_schema"] = schema
    elif mode == "url":
        url = str(getattr(params, "url", ""))
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname or len(url) > MAX_URL_CHARS:
            msg = f"{where} the person to open a link that is no http(s) URL; the call was abandoned"
            raise ServerProblem(msg)
        value["url"] = url
    else:
        msg = f"{where} a question in mode {plain_text(mode, 40)!r}, which is neither form nor url"
        raise ServerProblem(msg)
    value["question"] = question_of(
        server=tool.server,
        tool=tool.name,
        mode=mode,
        message=message,
        requested_schema=value.get("requested_schema"),
        url=value.get("url"),
    )
    value["required_role"] = answered_by
    return cast("McpElicitationRequest", value)


def ask(value: McpElicitationRequest) -> ElicitResult:
    """Pause for the answer to `value`; the answer as the MCP server takes it.

    An answer the server stamped for another question (the MCP server asks something else on this
    run than when the person answered) is set aside and the question asked again, as a new interrupt.

    Raises:
        ValidationError: the answer does not fit the question (only a client that bypassed the
            server's check can send one; the interrupt stays answerable).
    """
    while True:
        answer = interrupt(value, response_schema=ANSWER_REFERENCE)
        stamped = answer.get("question") if isinstance(answer, dict) else None
        if stamped is None or stamped == value["question"]:
            break
    check(value, answer)
    action = answer["action"]
    content = answer.get("content") if action == "accept" and value["mode"] == "form" else None
    return ElicitResult(action=action, content=content)


def check(value: McpElicitationRequest, answer: object) -> None:
    """Refuse an answer that does not fit `value`'s answer schema, naming the field.

    Raises:
        ValidationError: as `ask`.
    """
    schema = answer_schema(cast("dict[str, Any]", value))
    if schema is None:  # pragma: no cover  (`question` only builds values with a schema)
        schema = {"not": {}}
    branch = next(
        (
            b
            for b in schema["oneOf"]
            if isinstance(answer, dict) and b["properties"]["action"]["const"] == answer.get("action")
        ),
        None,
    )
    if branch is None:
        _refuse(("action",), answer, "action must be one of accept, decline, cancel")
        return
    errors = list(jsonschema_rs.validator_for(branch).iter_errors(answer))
    if errors:
        first = errors[0]
        _refuse(tuple(str(p) for p in first.instance_path) or ("answer",), answer, first.message)


def _refuse(where: tuple[str, ...], answer: object, message: str) -> None:
    error = PydanticCustomError(
        "mcp_answer", "{where}: {message}", {"where": ".".join(where), "message": message}
    )
    raise ValidationError.from_exception_data(
        "McpElicitationAnswer", [{"type": error, "loc": where, "input": answer}]
    )
