"""A declarative subagent (the dict Deep Agents takes) made ready for our gate, and what would gate beside it.

`declared_subagent` checks a dict's keys and gives it its tools and its policy (its own
`interrupt_on`, or the parent's for the tools it has); `refuse_stock_gates` refuses, for an agent
as for its subagents, what would pause beside our gate; a compiled or remote subagent is gated in
its own graph. Not for building the agent or its gates: `hitl.deep_agent` does that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from deepagents.middleware.subagents import SubAgent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import BaseTool, tool

from hitl.policy.interrupt_on import inherited, read_interrupt_on

if TYPE_CHECKING:
    from collections.abc import Sequence

    from deepagents import FilesystemPermission
    from langchain.agents.middleware.types import AgentMiddleware

    from hitl.policy.gates import Policy

AnyTool = BaseTool | Callable[..., Any] | dict[str, Any]
"""A tool as Deep Agents takes it: a tool, a plain function, or a provider-side tool (a dict)."""
SUBAGENT_KEYS = (*SubAgent.__annotations__, "description_prefix", "mcp_servers")
"""What a declarative subagent dict may hold: Deep Agents' `SubAgent` keys, and our `description_prefix`
and `mcp_servers`."""


def as_tools(tools: Sequence[AnyTool] | None) -> list[BaseTool]:
    """The tools our gate checks and runs; a plain function becomes a tool as Deep Agents would make it.

    Provider-side tools (dicts) run at the provider, never through a gate: they are passed on apart.
    """
    return [t if isinstance(t, BaseTool) else tool(t) for t in tools or () if not isinstance(t, dict)]


def declared_subagent(
    spec: Mapping[str, Any], parent_tools: list[BaseTool], parent_policy: Policy
) -> tuple[list[BaseTool], Policy, dict[str, Any]]:
    """A declarative subagent's tools, its policy (its own or the parent's) and the dict Deep Agents gets.

    Raises:
        ValueError: a key Deep Agents' `SubAgent` does not have (nor our `description_prefix`, `mcp_servers`).
    """
    name = spec.get("name", "?")
    unknown = sorted(str(k) for k in spec if k not in SUBAGENT_KEYS)
    if unknown:
        msg = (
            f"subagent {name!r} has unknown key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))}; accepted keys are {', '.join(SUBAGENT_KEYS)}"
        )
        raise ValueError(msg)
    refuse_stock_gates(name, spec.get("middleware", ()), spec.get("permissions"))
    tools = as_tools(spec["tools"]) if "tools" in spec else parent_tools
    if "interrupt_on" in spec:
        policy = read_interrupt_on(spec["interrupt_on"], agent=name)
    else:
        policy = inherited(parent_policy, (t.name for t in tools))
    processed = {k: v for k, v in spec.items() if k not in {"interrupt_on", "description_prefix"}}
    processed["tools"] = [*tools, *(t for t in spec.get("tools", ()) if isinstance(t, dict))]
    return tools, policy, processed


def own_prefix(spec: Mapping[str, Any]) -> str | None:
    """A subagent dict's own `description_prefix`, if any.

    Raises:
        ValueError: it is not a string.
    """
    prefix = spec.get("description_prefix")
    if prefix is None or isinstance(prefix, str):
        return prefix
    msg = f"subagent {spec.get('name', '?')!r}: description_prefix must be a string (got {prefix!r})"
    raise ValueError(msg)


def refuse_stock_gates(
    agent: str,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]],
    permissions: Sequence[FilesystemPermission] | None,
) -> None:
    """Refuse what would pause calls beside our gate: stock HITL middleware, interrupting permissions.

    Raises:
        ValueError: naming the agent and what to declare instead.
    """
    if any(isinstance(m, HumanInTheLoopMiddleware) for m in middleware):
        msg = (
            f"{agent!r}: a HumanInTheLoopMiddleware in middleware= would gate beside hitl's own gate; "
            "declare its tools in interrupt_on instead"
        )
        raise ValueError(msg)
    if any(p.mode == "interrupt" for p in permissions or ()):
        msg = (
            f"{agent!r}: filesystem permissions with mode='interrupt' would pause through LangChain's "
            "stock middleware; gate those file tools in interrupt_on instead"
        )
        raise ValueError(msg)


def refuse_gate_on_compiled(spec: Mapping[str, Any]) -> None:
    """A compiled or remote subagent is gated inside its own graph; an `interrupt_on` here would do nothing.

    Raises:
        ValueError: the spec carries an `interrupt_on`.
    """
    if "interrupt_on" in spec:
        msg = (
            f"subagent {spec.get('name', '?')!r} is compiled or remote: its interrupt_on would not be "
            "applied here; gate its tools inside its own graph"
        )
        raise ValueError(msg)
