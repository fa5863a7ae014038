"""`interrupt_on` as Deep Agents and LangChain spell it, read into the `ToolGate`s our gate enforces.

A stock value (`True`, `False`, `{"allowed_decisions": [...], "description": ...}`) means here
what it means to LangChain's `HumanInTheLoopMiddleware`; our additions (who decides, deadline,
limits, quorum...) are further keys of the same dict, or a `ToolGate` as the value. Only known
keys are read: anything else is refused, so a typo can never turn a gate off. Building the
agent is `hitl.deep_agent`'s job, not this module's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolCall
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolRuntime
from langgraph.runtime import get_runtime

from hitl.policy.deadlines import Deadline
from hitl.policy.first_line import FirstLineReviewer
from hitl.policy.gates import BUILTIN_TOOLS, ToolGate
from hitl.policy.groups import check_decider

if TYPE_CHECKING:
    from collections.abc import Iterable

    from hitl.contracts.decisions import DecisionType
    from hitl.policy.gates import ArgsPredicate, Describer, Policy

InterruptOnValue = bool | Mapping[str, Any] | ToolGate
"""One tool's entry: `True` (every decision), `False` (not gated), a config dict, or a `ToolGate`."""
InterruptOn = Mapping[str, InterruptOnValue]
"""Tool name to its entry, as `create_deep_agent(interrupt_on=...)` takes it."""

EVERY_DECISION: tuple[DecisionType, ...] = ("approve", "edit", "reject", "respond")
"""What stock `True` allows."""
STOCK_KEYS = ("allowed_decisions", "description", "args_schema", "when")
"""`InterruptOnConfig`'s keys; they mean what they mean to LangChain (`args_schema` is unused there too)."""


def read_interrupt_on(interrupt_on: InterruptOn | None, *, agent: str) -> Policy:
    """`agent`'s policy from its `interrupt_on`: one `ToolGate` per gated tool; `False` entries drop out.

    Raises:
        ValueError: an entry that is not `True`, `False`, a dict or a `ToolGate`; a dict with an
            unknown key (the message names it and the accepted ones) or a value of the wrong kind.
    """
    if interrupt_on is None:
        return {}
    if not isinstance(interrupt_on, Mapping):
        msg = f"interrupt_on of {agent!r} must map tool names to entries (got {type(interrupt_on).__name__})"
        raise ValueError(msg)  # noqa: TRY004  (a wrong configuration, reported as such)
    policy: dict[str, ToolGate] = {}
    for tool, entry in interrupt_on.items():
        gate = tool_gate(tool, entry, agent=agent)
        if gate is not None:
            policy[tool] = gate
    return policy


def tool_gate(tool: str, entry: object, *, agent: str) -> ToolGate | None:
    """The gate of one `interrupt_on` entry, None for `False`.

    Raises:
        ValueError: as `read_interrupt_on`.
    """
    where = f"interrupt_on[{tool!r}] of {agent!r}"
    if not isinstance(tool, str) or not tool:
        msg = f"{where}: a tool name must be a non-empty string"
        raise ValueError(msg)
    if entry is True:
        return ToolGate(allowed_decisions=EVERY_DECISION)
    if entry is False:
        return None
    if isinstance(entry, ToolGate):
        return entry
    if not isinstance(entry, Mapping):
        msg = f"{where} must be True, False, a dict or a ToolGate (got {entry!r})"
        raise ValueError(msg)  # noqa: TRY004  (a wrong configuration, reported as such)
    unknown = sorted(str(k) for k in entry if k not in ACCEPTED_KEYS)
    if unknown:
        msg = (
            f"{where} has unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"accepted keys are {', '.join(ACCEPTED_KEYS)}"
        )
        raise ValueError(msg)
    try:
        return ToolGate(**_gate_fields(tool, entry))
    except ValueError as error:
        msg = f"{where}: {error}"
        raise ValueError(msg) from error


def inherited(policy: Policy, tool_names: Iterable[str]) -> Policy:
    """The part of a parent's policy a subagent without its own `interrupt_on` inherits (its tools')."""
    available = set(tool_names) | BUILTIN_TOOLS
    return {name: gate for name, gate in policy.items() if name in available}


def _gate_fields(tool: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """`ToolGate` arguments from a config dict, each value checked for its kind."""
    if "allowed_decisions" not in entry:
        msg = "allowed_decisions is required (e.g. ['approve', 'reject']); use True for every decision"
        raise ValueError(msg)
    built: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "args_schema":  # shown to nobody by LangChain either: checked, then left out
            _mapping(key, value)
        elif key == "when":
            built[key] = None if value is None else _stock_when(tool, _callable(key, value))
        else:
            built[key] = _READERS[key](key, value)
    return built


def _names(key: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        msg = f"{key} must be a list of names (got {value!r})"
        raise ValueError(msg)  # noqa: TRY004  (a wrong configuration, reported as such)
    return tuple(value)


def _callable(key: str, value: object) -> Callable[..., Any]:
    if not callable(value):
        msg = f"{key} must be a function (got {value!r})"
        raise ValueError(msg)  # noqa: TRY004  (a wrong configuration, reported as such)
    return cast("Callable[..., Any]", value)


def _decider(key: str, value: object) -> object:
    return value if callable(value) else check_decider(key, value)


def _deadline(key: str, value: object) -> Deadline | None:
    if value is None or isinstance(value, Deadline):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Deadline(float(value))
    msg = f"{key} must be a Deadline or a number of seconds (got {value!r})"
    raise ValueError(msg)


def _limit(key: str, value: object) -> float | None:
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    msg = f"{key} must be a number or None (got {value!r})"
    raise ValueError(msg)


def _text(key: str, value: object) -> str:
    if isinstance(value, str) and value:
        return value
    msg = f"{key} must be a non-empty string (got {value!r})"
    raise ValueError(msg)


def _flag(key: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    msg = f"{key} must be True or False (got {value!r})"
    raise ValueError(msg)


def _description(value: object) -> str | Describer | None:
    """A stock description: a string or a function of `(tool_call, state, runtime)`; None: the gate's text."""
    if value is None or isinstance(value, str):
        return value
    describe = _callable("description", value)

    def describer(name: str, args: Mapping[str, Any]) -> str:
        """The stock function's text; the gate falls back to its own text if it fails."""
        call = ToolCall(name=name, args=dict(args), id=None, type="tool_call")
        try:
            return str(describe(call, {}, _runtime()))
        except Exception as error:  # any failure: the gate's own text instead
            raise ValueError(str(error)) from error

    return describer


def _stock_when(tool: str, when: Callable[[ToolCallRequest], object]) -> ArgsPredicate:
    """A stock `when(request)` as a predicate of the call's args; if it fails, the call pauses."""

    def pauses(args: Mapping[str, Any]) -> bool:
        call = ToolCall(name=tool, args=dict(args), id=None, type="tool_call")
        request = ToolCallRequest(tool_call=call, tool=None, state={}, runtime=cast("Any", _tool_runtime()))
        try:
            return bool(when(request))
        except Exception:  # noqa: BLE001  (an unreadable predicate never lets a call through)
            return True

    return pauses


def _tool_runtime() -> ToolRuntime | None:
    """What a stock `when` reads as `request.runtime`: the run's context, store and config (no state)."""
    runtime = _runtime()
    if runtime is None:
        return None
    try:
        config = get_config()
    except RuntimeError:
        config = {}
    return ToolRuntime(
        state={},
        context=runtime.context,
        config=config,
        stream_writer=runtime.stream_writer,
        tool_call_id=None,
        store=runtime.store,
        execution_info=runtime.execution_info,
        server_info=runtime.server_info,
    )


def _runtime() -> Any:  # noqa: ANN401  (LangGraph's Runtime, or None outside a graph)
    try:
        return get_runtime()
    except RuntimeError:
        return None


def _mapping(key: str, value: object) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    msg = f"{key} must be a dict (got {value!r})"
    raise ValueError(msg)


def _optional_callable(key: str, value: object) -> Callable[..., Any] | None:
    return None if value is None else _callable(key, value)


def _first_line(key: str, value: object) -> FirstLineReviewer | None:
    if value is None or isinstance(value, FirstLineReviewer):
        return value
    msg = f"{key} must be a FirstLineReviewer or None (got {value!r})"
    raise ValueError(msg)


def _as_is(_key: str, value: object) -> object:
    """A value `ToolGate` checks itself (`approvals_required`)."""
    return value


_READERS: dict[str, Callable[[str, Any], object]] = {
    "allowed_decisions": _names,
    "description": lambda _key, value: _description(value),
    "decider": _decider,
    "deadline": _deadline,
    "auto_approve_limit": _limit,
    "limit_arg": _text,
    "always_review": _optional_callable,
    "fixed_on_edit": _names,
    "self_approval": _flag,
    "approvals_required": _as_is,
    "check_args": _optional_callable,
    "may_allow": _flag,
    "first_line": _first_line,
}
ACCEPTED_KEYS = (*STOCK_KEYS, *(key for key in _READERS if key not in STOCK_KEYS))
"""Every key a config dict may have: LangChain's, then `ToolGate`'s own (those take the call's args)."""
