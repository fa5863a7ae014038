"""Deep Agents whose every agent and subagent is gated by its own `ApprovalGate`.

`create_deep_agent` is a drop-in for Deep Agents' own: same call, but the `interrupt_on` of
the agent and of each subagent (`hitl.policy.interrupt_on`) goes to our gate instead of the stock
middleware, and the general-purpose subagent gets the parent's gate explicitly, because a
custom gate is not inherited by it on its own. The MCP servers an agent or subagent declares
(`mcp_servers`) give it their tools behind the same gate (`hitl.mcp`). `build_deep_agent` builds
agents from `SubagentSpec`s through it. Not for policies: each agent declares its own beside it.
One concept, however long: an agent built with every gate it needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from deepagents import AsyncSubAgent, CompiledSubAgent
from deepagents import create_deep_agent as stock_create_deep_agent
from deepagents.middleware.subagents import GENERAL_PURPOSE_SUBAGENT, SubAgent

from hitl.contracts.run_context import RunContext
from hitl.gate.gate import ApprovalGate
from hitl.gate.run_start import RunStartGate
from hitl.mcp.servers import check_names, mcp_policy
from hitl.model.factory import make_model
from hitl.model.malformed_calls import MalformedCallRetry
from hitl.model.scripted.chat import declare
from hitl.policy.deadlines import Deadline
from hitl.policy.interrupt_on import read_interrupt_on
from hitl.policy.overrides import PolicyCatalog
from hitl.policy.served import AgentCard, file_card, run_by_roles
from hitl.policy.subagents import (
    AnyTool,
    as_tools,
    declared_subagent,
    own_prefix,
    refuse_gate_on_compiled,
    refuse_stock_gates,
)
from hitl.settings import get_settings

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from deepagents import DeepAgentState, FilesystemPermission
    from deepagents.backends.protocol import BackendProtocol
    from langchain.agents.middleware.types import AgentMiddleware
    from langchain.agents.structured_output import ResponseFormat
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import SystemMessage
    from langchain_core.tools import BaseTool
    from langgraph.cache.base import BaseCache
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.store.base import BaseStore
    from langgraph.types import Checkpointer

    from hitl.contracts.interrupts import InterruptMode
    from hitl.mcp.servers import McpServer
    from hitl.mcp.toolbox import McpToolbox
    from hitl.model.scripted.script import ScriptFn
    from hitl.policy.gates import Policy
    from hitl.policy.interrupt_on import InterruptOn
    from hitl.settings import Settings

DEFAULT_AGENT_NAME = "agent"
"""What interrupts call an agent built without a `name`."""

AnySubagent = SubAgent | CompiledSubAgent | AsyncSubAgent | Mapping[str, Any]


@dataclass(frozen=True)
class SubagentSpec:
    """A subagent: its tools and its own `interrupt_on` (which replaces the parent's)."""

    name: str
    description: str
    system_prompt: str
    tools: Sequence[BaseTool]
    interrupt_on: InterruptOn
    description_prefix: str | None = None
    """What a reviewer reads first for a gated call without its own description."""
    mcp_servers: Sequence[McpServer] = ()
    """The MCP servers whose tools it has, behind its gate (`interrupt_on` names them `server.tool`)."""

    def as_subagent(self) -> dict[str, Any]:
        """The spec as the subagent dict `create_deep_agent` takes."""
        spec: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "system_prompt": self.system_prompt,
            "tools": list(self.tools),
            "interrupt_on": self.interrupt_on,
        }
        if self.description_prefix:
            spec["description_prefix"] = self.description_prefix
        if self.mcp_servers:
            spec["mcp_servers"] = list(self.mcp_servers)
        return spec


def asks_before_acting(agent: str) -> str:
    """The default description prefix of `agent`'s gate."""
    return f"{agent} asks before acting"


def build_deep_agent(  # noqa: PLR0913  (the parts of an agent, named)
    name: str,
    *,
    settings: Settings,
    model: BaseChatModel | None = None,
    system_prompt: str,
    tools: Sequence[BaseTool],
    interrupt_on: InterruptOn,
    subagents: Sequence[SubagentSpec] = (),
    interrupt_mode: InterruptMode = "batched",
    checkpointer: Checkpointer | None = None,
    backend: BackendProtocol | None = None,
    description_prefix: str | None = None,
    run_by: Iterable[str] | None = None,
    offline: ScriptFn | None = None,
    mcp_servers: Sequence[McpServer] = (),
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A Deep Agent named `name` whose tools and subagents are all gated by their `interrupt_on`.

    `backend` is where the built-in file tools of the agent and every subagent work
    (Deep Agents' in-state files when None). `settings` supply the model when none is given
    (`MODEL`) and the deadline of every gated call whose policy names none
    (`APPROVAL_DEADLINE_SECONDS`). `description_prefix` heads what a reviewer reads for a gated
    call without its own description (default: "<name> asks before acting"). `run_by`,
    `offline` and `mcp_servers` are `create_deep_agent`'s. A run may pass a policy override as
    `context={"policy": ...}` (`RunContext`).
    """
    return create_deep_agent(
        model,
        list(tools),
        system_prompt=system_prompt,
        subagents=[spec.as_subagent() for spec in subagents],
        interrupt_on=interrupt_on,
        context_schema=RunContext,
        checkpointer=checkpointer,
        backend=backend,
        name=name,
        interrupt_mode=interrupt_mode,
        description_prefix=description_prefix,
        settings=settings,
        run_by=run_by,
        offline=offline,
        mcp_servers=mcp_servers,
    )


def declare_offline(offline: ScriptFn | None, catalog: PolicyCatalog) -> None:
    """Declare the agent's offline script and its first-line reviewers' rules (for the endpoint too)."""
    if offline is not None:
        declare(offline)
    for gates_of_tool in catalog.gates.values():
        for each in gates_of_tool:
            if each.first_line is not None and each.first_line.offline is not None:
                declare(each.first_line.offline.script(each.first_line.name))


def create_deep_agent(  # noqa: PLR0913  (Deep Agents' own parameters, and ours after them)
    model: str | BaseChatModel | None = None,
    tools: Sequence[AnyTool] | None = None,
    *,
    system_prompt: str | SystemMessage | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    subagents: Sequence[AnySubagent] | None = None,
    skills: list[str] | None = None,
    memory: list[str] | None = None,
    permissions: list[FilesystemPermission] | None = None,
    backend: BackendProtocol | None = None,
    interrupt_on: InterruptOn | None = None,
    response_format: ResponseFormat[Any] | type[Any] | dict[str, Any] | None = None,
    state_schema: type[DeepAgentState] | None = None,
    context_schema: type[Any] | None = None,
    checkpointer: Checkpointer | None = None,
    store: BaseStore | None = None,
    debug: bool = False,
    name: str | None = None,
    cache: BaseCache | None = None,
    interrupt_mode: InterruptMode = "batched",
    description_prefix: str | None = None,
    settings: Settings | None = None,
    run_by: Iterable[str] | None = None,
    offline: ScriptFn | None = None,
    mcp_servers: Sequence[McpServer] = (),
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Deep Agents' `create_deep_agent`, with `interrupt_on` enforced by `ApprovalGate`s.

    Every parameter Deep Agents has means what it means there, except that `interrupt_on`
    (here and in each declarative subagent dict) also takes our keys or a `ToolGate` per tool
    (`hitl.policy.interrupt_on`), and names only tools the agent has. As in Deep Agents, a subagent
    without its own `interrupt_on` inherits the parent's (for the tools it has). Ours, after
    them: `interrupt_mode` ("batched" or "per_call", for every gate), `description_prefix`
    (what a reviewer reads first for a call without its own description; default "<name> asks
    before acting"; a subagent dict may carry its own) and `settings` (the model when none is
    given, and the deadline of gated calls whose policy names none; default: the environment),
    `run_by` (the roles or groups that may run the agent, e.g. `("reviewer", "supervisor")` or
    `("sre",)`; default: everyone) and `offline` (its offline script,
    `hitl.model.scripted.rules.Script`: what the scripted model does with no key, `MODEL=scripted`),
    and `mcp_servers` (`hitl.mcp.McpServer`s whose tools it gets, behind its gate; `interrupt_on`
    names them `server.tool`; a subagent dict takes its own `mcp_servers`, the general-purpose
    subagent gets the agent's). A run may pass a policy override as
    `context={"policy": ...}` (`RunContext` is the default `context_schema`). The server finds
    all of this from the graph (`hitl.policy.served`), by no name.

    Raises:
        ValueError: an `interrupt_on` entry or subagent key we do not know, a tool an agent does
            not have, a `HumanInTheLoopMiddleware` in `middleware` (it would gate beside ours),
            a filesystem permission with `mode="interrupt"` (gate those tools in `interrupt_on`),
            or an MCP server declared with a setting the settings do not have.
    """
    settings = settings or get_settings()
    agent = name or DEFAULT_AGENT_NAME
    roles = run_by_roles(run_by)
    own_tools = as_tools(tools)
    check_names(agent, mcp_servers, (t.name for t in own_tools))
    policy = mcp_policy(read_interrupt_on(interrupt_on, agent=agent), mcp_servers, agent=agent)
    refuse_stock_gates(agent, middleware, permissions)
    toolboxes: list[McpToolbox] = []

    def gate(  # noqa: PLR0913, PLR0917  (one gate's parts, named)
        of: str,
        gated_tools: Sequence[BaseTool],
        gates: Policy,
        prefix: str | None = None,
        catalog: PolicyCatalog | None = None,
        servers: Sequence[McpServer] = (),
    ) -> list[Any]:
        """The gate of agent `of`, then (inside it) the toolbox of its MCP servers, if it has any."""
        prefix = prefix or asks_before_acting(of)
        toolbox = None
        if servers:
            from hitl.mcp.toolbox import McpToolbox  # noqa: PLC0415  (the MCP SDK loads only for agents that use it)

            toolbox = McpToolbox(of, servers, settings, prefix)
        parts: dict[str, Any] = {
            "interrupt_mode": interrupt_mode,
            "default_deadline": Deadline(settings.approval_deadline_seconds),
            "description_prefix": prefix,
            "toolbox": toolbox,
        }
        if toolbox is not None:
            toolboxes.append(toolbox)
        if catalog is None:
            built = ApprovalGate(of, gates, gated_tools, **parts)
        else:
            built = RunStartGate(
                of,
                gates,
                gated_tools,
                run_policy_catalog=catalog,
                run_by=roles,
                retry=MalformedCallRetry(),
                **parts,
            )
        return [built] if toolbox is None else [built, toolbox]

    declared: list[tuple[Sequence[BaseTool], Policy]] = [(own_tools, policy)]
    specs: list[Any] = []
    for spec in subagents or ():
        if "graph_id" in spec or "runnable" in spec:
            refuse_gate_on_compiled(spec)
            specs.append(spec)
            continue
        sub_tools, sub_policy, processed = declared_subagent(spec, own_tools, policy)
        servers = list(processed.pop("mcp_servers", ()))
        check_names(spec["name"], servers, (t.name for t in sub_tools))
        sub_policy = mcp_policy(sub_policy, servers, agent=spec["name"])
        processed["middleware"] = [
            *processed.get("middleware", ()),
            *gate(spec["name"], sub_tools, sub_policy, own_prefix(spec), servers=servers),
            MalformedCallRetry(),
        ]
        declared.append((sub_tools, sub_policy))
        specs.append(processed)
    if not any(s["name"] == GENERAL_PURPOSE_SUBAGENT["name"] for s in specs):
        general = GENERAL_PURPOSE_SUBAGENT["name"]
        specs.insert(
            0,
            SubAgent(
                name=general,
                description=GENERAL_PURPOSE_SUBAGENT["description"],
                system_prompt=GENERAL_PURPOSE_SUBAGENT["system_prompt"],
                tools=own_tools,
                middleware=[*gate(general, own_tools, policy, servers=mcp_servers), MalformedCallRetry()],
            ),
        )
    catalog = PolicyCatalog.of(agent, [([*(t.name for t in ts), *p], p) for ts, p in declared])
    top = gate(agent, own_tools, policy, description_prefix, catalog, servers=mcp_servers)
    declare_offline(offline, catalog)
    graph = cast(
        "CompiledStateGraph[Any, Any, Any, Any]",
        stock_create_deep_agent(
            model or make_model(settings, scripts=(offline,) if offline else ()),
            [*own_tools, *(t for t in tools or () if isinstance(t, dict))],
            system_prompt=system_prompt,
            middleware=[*middleware, *top],  # the top gate runs its MalformedCallRetry in its own hook
            subagents=specs,
            skills=skills,
            memory=memory,
            permissions=permissions,
            backend=backend,
            response_format=response_format,
            state_schema=state_schema,
            context_schema=context_schema or RunContext,
            checkpointer=checkpointer,
            store=store,
            debug=debug,
            name=name,
            cache=cache,
        ),
    )
    file_card(
        graph,
        AgentCard(name=agent, catalog=catalog, run_by=roles, offline=offline, toolboxes=tuple(toolboxes)),
    )
    return graph
