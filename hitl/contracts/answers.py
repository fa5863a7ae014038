"""The answer an interrupt accepts, derived from the interrupt's value alone.

The gate builds the `response_schema` it passes to `interrupt()` here, from the value it
sends; the server derives the same contract from a pending value to check an answer before
it is saved, on any engine, whether or not the engine reports `response_schema`. The shapes
themselves live in `hitl.contracts.interrupts`, `hitl.contracts.decisions` and `hitl.contracts.edits`;
this module only chooses among them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from deepagents.middleware.filesystem import FilesystemMiddleware
from pydantic import TypeAdapter, create_model

from hitl.contracts.decisions import ApprovalAnswer, ApproveAndAllowDecision
from hitl.contracts.edits import decision_schema
from hitl.contracts.forms import answer_of
from hitl.contracts.published_schema import PublishedSchema, answered_as_sent
from hitl.mcp.elicitations import answer_schema
from hitl.policy.gates import DECISION_TYPES
from hitl.recently_used import RecentlyUsed

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from langchain_core.tools import BaseTool

    from hitl.contracts.decisions import DecisionType

SHAPES_KEPT = 4096
"""Decision and response types (and their JSON Schemas) remembered, most recently used first."""

_tools: dict[str, dict[str, BaseTool]] = {}
_decision_types: RecentlyUsed[tuple[object, ...], tuple[BaseTool | None, type]] = RecentlyUsed(SHAPES_KEPT)
_batched_types: RecentlyUsed[tuple[type, ...], type] = RecentlyUsed(SHAPES_KEPT)
_per_call_answers: RecentlyUsed[type, type] = RecentlyUsed(SHAPES_KEPT)
_schemas: RecentlyUsed[int, tuple[type, str]] = RecentlyUsed(SHAPES_KEPT)
_lock = threading.Lock()
"""Guards `_tools`."""


def register(agent: str, tools: Iterable[BaseTool]) -> None:
    """Make `agent`'s tools known, so an edit of one is checked against the tool's own schema.

    Every `ApprovalGate` registers its agent's tools when it is built. Agents of one name in
    several graphs (Deep Agents' "general-purpose" in each) share one entry: their tools are
    merged by name, the latest registered winning.
    """
    with _lock:
        _tools.setdefault(agent, {}).update({t.name: t for t in tools})


def tool_of(agent: str, name: str) -> BaseTool | None:
    """The tool an edit of `name` by `agent` must fit: the agent's own, else Deep Agents' file tool."""
    return _tools.get(agent, {}).get(name) or builtin_tools().get(name)


@cache
def builtin_tools() -> dict[str, BaseTool]:
    """Deep Agents' own file tools, for the schema of an edit to one of them."""
    return {t.name: t for t in FilesystemMiddleware().tools}


def decision_type(
    name: str, allowed_decisions: Sequence[DecisionType], *, may_allow: bool, tool: BaseTool | None
) -> type:
    """One call's decision schema; its approve may carry `allow` when `may_allow`.

    Edit args follow `tool`'s schema exactly. Built once per shape and reused.
    """
    key = (name, tuple(allowed_decisions), may_allow, id(tool))
    found = _decision_types.get(key)
    if found is not None and found[0] is tool:  # the same tool, not another at a reused address
        return found[1]
    allowed = list(allowed_decisions)
    built = (
        decision_schema(allowed, name, tool, approve=ApproveAndAllowDecision)
        if may_allow
        else decision_schema(allowed, name, tool)
    )
    _decision_types.put(key, (tool, built))
    return built


def batched_type(per_call_types: Sequence[type]) -> type:
    """`{"decisions": [...]}` with exactly one decision of each type, in order.

    Built once per shape and reused, its JSON Schema too (`hitl.contracts.published_schema`): building
    either is the costliest part of a pause.
    """
    key = tuple(per_call_types)
    found = _batched_types.get(key)
    if found is not None:
        return found
    built = answered_as_sent(
        "BatchedResponse",
        create_model("BatchedResponse", decisions=(tuple[key], ...)),  # type: ignore[valid-type]
    )
    _batched_types.put(key, built)
    return built


def per_call_answer(decision: type) -> type:
    """A per-call approval's answer: one decision of `decision`'s type, as a response model of its own."""
    found = _per_call_answers.get(decision)
    if found is not None:
        return found
    built = answered_as_sent("DecisionAnswer", decision)
    _per_call_answers.put(decision, built)
    return built


STOCK_AGENT = ""
"""The agent of a batched request without one: a stock `create_deep_agent(interrupt_on=...)` graph
served beside ours. Its decisions are checked by type; its edits' args by the tool when it runs."""


def response_type(value: object) -> type | None:
    """The type an answer to the interrupt `value` must have; None for a value this package never raises.

    Batched tool approvals, per-call tool approvals, sign-off requests (`approval_request`) and the forms
    registered with `hitl.contracts.forms`; a tool approval from an agent whose tools were never
    registered, or
    with a malformed field, has none.
    """
    if not isinstance(value, Mapping):
        return None
    if "action_requests" in value:
        return _batched(value)
    kind = value.get("type")
    if kind == "tool_approval":
        decision = _per_call(value)
        return None if decision is None else per_call_answer(decision)
    if kind == "approval_request":
        return ApprovalAnswer
    if kind == "form":
        return answer_of(value.get("form"))
    return None


def response_schema(value: object) -> dict[str, Any] | None:
    """The full JSON Schema of an answer to the interrupt `value` (a fresh copy), or None.

    What the graph publishes with the interrupt is a reference to this (`published_schema`); the
    server serves this one (`GET /threads/{thread_id}/answer-schemas`) and checks answers with it.
    An MCP server's question (`mcp_elicitation`) has its schema built from the question itself
    (`hitl.mcp.elicitations`).
    """
    if isinstance(value, Mapping) and value.get("type") == "mcp_elicitation":
        return answer_schema(dict(value))
    found = response_type(value)
    if found is None:
        return None
    cached = _schemas.get(id(found))
    if cached is None or cached[0] is not found:
        published = found.published_json if issubclass(found, PublishedSchema) else None
        cached = (found, published or json.dumps(TypeAdapter(found).json_schema()))
        _schemas.put(id(found), cached)
    return cast("dict[str, Any]", json.loads(cached[1]))


def _batched(value: Mapping[str, Any]) -> type | None:
    actions, configs, agent = value.get("action_requests"), value.get("review_configs"), value.get("agent")
    if "agent" not in value:  # a stock Deep Agent's HumanInTheLoopMiddleware: its tools are not ours to know
        agent = STOCK_AGENT
    if not (
        isinstance(actions, list)
        and isinstance(configs, list)
        and actions
        and len(actions) == len(configs)
        and isinstance(agent, str)
        and (agent in _tools or agent == STOCK_AGENT)
    ):
        return None
    per_call = []
    for action, config in zip(actions, configs, strict=True):
        if not isinstance(action, Mapping) or not isinstance(config, Mapping):
            return None
        name = action.get("name")
        if config.get("action_name", name) != name:
            return None
        found = _per_call({**config, "name": name, "agent": agent})
        if found is None:
            return None
        per_call.append(found)
    return batched_type(per_call)


def _per_call(value: Mapping[str, Any]) -> type | None:
    name, agent, allowed = value.get("name"), value.get("agent"), value.get("allowed_decisions")
    may_allow = value.get("may_allow", False)
    if not (
        isinstance(name, str)
        and isinstance(agent, str)
        and (agent in _tools or agent == STOCK_AGENT)
        and isinstance(allowed, list)
        and allowed
        and all(isinstance(d, str) and d in DECISION_TYPES for d in allowed)
        and isinstance(may_allow, bool)
    ):
        return None
    return decision_type(
        name, cast("list[DecisionType]", allowed), may_allow=may_allow, tool=tool_of(agent, name)
    )
