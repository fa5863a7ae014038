"""An agent's MCP servers as middleware: their tools offered to its model, their calls run behind its gate.

The toolbox lists each declared server (again after `MCP_LIST_SECONDS`), offers the tools the listing
allows (`hitl.mcp.listing`) to every model call, and runs their calls when the gate lets them through:
it sits inside the agent's `ApprovalGate`, so no MCP call passes a gate of its own. A call a person
approved runs only against the schema they saw (a fresh listing, checked against the digest their
signed receipt names), else it is refused with nothing run. The first listing (the server's start-up
calls `start`) is what the agent vets: a tool a server lists later is gated until a policy names it
(or the next start), and reported. A server down, slow or lying fails the call in words; nothing
wedges. Which calls pause is `hitl.mcp.gating`'s; a call's rounds `hitl.mcp.calls`'. One concept,
however long: the middleware that stands for an agent's MCP servers.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import logging
import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage

from hitl.contracts import answers
from hitl.gate.caller import acting_for
from hitl.mcp import gating
from hitl.mcp.listing import Listing, McpTool, described, read_listing
from hitl.mcp.receipts import approved_schema, refusal_record
from hitl.mcp.servers import Limits, ServerProblem, endpoint_of
from hitl.proof import audit_chain
from hitl.recently_used import RecentlyUsed

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence

    from langchain.agents.middleware.types import ModelRequest, ModelResponse, ToolCallRequest
    from langchain_core.messages import ToolCall
    from langchain_core.tools import StructuredTool
    from langgraph.types import Command

    from hitl.mcp.servers import McpServer
    from hitl.policy.gates import ToolGate
    from hitl.settings import Settings

logger = logging.getLogger(__name__)
T = TypeVar("T")
ASKED_KEPT = 4096
"""The schema digest each paused call was asked with, remembered per call (runs without a server)."""
RETRY_SECONDS = 5.0
"""How soon a server whose last listing failed is listed again (at most `MCP_LIST_SECONDS`)."""
SDK_ADAPTER = "hitl.mcp.calls"
"""The layer's rounds of a call, and under them the `mcp` SDK (`hitl.mcp.connection`): loaded at first use."""


async def _sdk_loaded() -> None:
    """Import `SDK_ADAPTER` off the event loop at a first listing or call: no server URL, no SDK loaded."""
    if SDK_ADAPTER not in sys.modules:
        await asyncio.to_thread(importlib.import_module, SDK_ADAPTER)


@dataclass
class ServerState:
    """What this process knows of one server: its last listing, when, and what it listed at start."""

    listing: Listing = field(default_factory=lambda: Listing({}, []))
    listed_at: float = float("-inf")
    problem: str | None = None
    vetted: frozenset[str] | None = None
    """The tools (model names) listed when the agent started; None before the first listing."""
    reported: set[str] = field(default_factory=set)


class McpToolbox(AgentMiddleware[Any, Any, Any]):
    """The tools of one agent's (or subagent's) MCP servers, behind its gate."""

    def __init__(self, agent: str, servers: Sequence[McpServer], settings: Settings, prefix: str) -> None:
        """Read each server's URL and headers from `settings`; `prefix` heads what a reviewer reads.

        Raises:
            ValueError: a declaration names a setting the settings class does not have, or a bad URL.
        """
        super().__init__()
        self.agent = agent
        self.servers = {s.name: s for s in servers}
        self.endpoints = {s.name: endpoint_of(s, settings) for s in servers}
        self.limits = {
            s.name: Limits(s.timeout_seconds or settings.mcp_timeout_seconds, settings.mcp_max_response_bytes)
            for s in servers
        }
        self.list_seconds = settings.mcp_list_seconds
        self.max_chars = settings.mcp_max_result_chars
        self.unlisted = {s.name: gating.unlisted_gate(gating.describer(s, prefix)) for s in servers}
        self.states = {s.name: ServerState() for s in servers}
        self.named: dict[str, ToolGate] = {}
        """The agent's policy for these tools (by model name): its gate sets it, reports read it."""
        self._lock = threading.Lock()
        self._asked: RecentlyUsed[str, str] = RecentlyUsed(ASKED_KEPT)
        _TOOLBOXES.add(self)

    @property
    def name(self) -> str:
        """One toolbox per agent, named after it."""
        return f"McpToolbox[{self.agent}]"

    def owner(self, tool_name: str) -> McpServer | None:
        """The declared server whose tool the model calls `tool_name`, if any."""
        return next((s for s in self.servers.values() if s.owns(tool_name)), None)

    def tool(self, tool_name: str) -> McpTool | None:
        """The tool as its server listed it last; None when it does not (or is not one of theirs)."""
        server = self.owner(tool_name)
        return None if server is None else self.states[server.name].listing.tools.get(tool_name)

    def listed(self) -> list[str]:
        """Every MCP tool name listed now."""
        return [name for state in self.states.values() for name in state.listing.tools]

    def gates(self, policy: Mapping[str, ToolGate]) -> gating.WithMcpTools:
        """`policy` with this toolbox's tools gated as `hitl.mcp.gating` says."""
        return gating.WithMcpTools(policy, lambda n: self.owner(n) is not None, self.gate_of, self.listed)

    def gate_of(self, tool_name: str, named: ToolGate | None) -> ToolGate | None:
        """The gate of an MCP tool's calls (`named`: the policy's, if any); None: no person needed."""
        server = self.owner(tool_name)
        if server is None:
            return named
        state = self.states[server.name]
        vetted = state.vetted is not None and tool_name in state.vetted
        return gating.gate_of(self.tool(tool_name), named, vetted=vetted, unlisted=self.unlisted[server.name])

    def provenance(self, call: ToolCall) -> dict[str, str] | None:
        """`McpProvenance` of a call about to be asked about (remembered per call), None for a local tool."""
        server = self.owner(call["name"])
        if server is None:
            return None
        tool = self.tool(call["name"])
        digest = tool.input_schema_sha256 if tool else ""
        if call["id"] and self._asked.get(call["id"]) is None:
            self._asked.put(call["id"], digest)
        name = tool.name if tool else call["name"].removeprefix(f"{server.name}_")
        return {"server": server.name, "tool": name, "input_schema_sha256": digest}

    async def start(self) -> list[str]:
        """List every server now and vet what it lists; a line per server saying what its tools are."""
        await self.refresh(force=True)
        return self.report()

    def report(self) -> list[str]:
        """One line per server: reached or not, each tool offered and if it is gated, what was left out."""
        lines = []
        for name, state in self.states.items():
            endpoint = self.endpoints[name]
            where = f"MCP {name} for {self.agent}"
            if not endpoint.configured:
                lines.append(f"{where}: not configured ({self.servers[name].url_setting.upper()} is empty)")
                continue
            tools = [f"{tool.policy_name} ({self._gating(tool)})" for tool in state.listing.tools.values()]
            said = f"{endpoint.url}: {', '.join(tools) or 'no tools'}"
            if state.problem:
                said = f"{endpoint.url}: {state.problem}; its tools are gated until a restart lists them"
            left = f"; left out: {'; '.join(state.listing.left_out)}" if state.listing.left_out else ""
            lines.append(f"{where} at {said}{left}")
        return lines

    def _gating(self, tool: McpTool) -> str:
        named = self.named.get(tool.tool_name)
        if self.gate_of(tool.tool_name, named) is None:
            return "read-only, ungated"
        if named is not None:
            return "gated: policy"
        return "gated: read-only" if tool.read_only else "gated: not read-only"

    def due(self, *, force: bool = False, only: str | None = None) -> list[str]:
        """The servers to list now: older than `MCP_LIST_SECONDS` (5 s after a failure), or all, or `only`."""
        return [
            name
            for name, state in self.states.items()
            if self.endpoints[name].configured
            and (only is None or name == only)
            and (force or time.monotonic() - state.listed_at >= self._every(state))
        ]

    async def refresh(self, *, force: bool = False, only: str | None = None) -> None:
        """List each server that is `due`."""
        if due := self.due(force=force, only=only):
            await asyncio.gather(*(self._list(name) for name in due))

    def _every(self, state: ServerState) -> float:
        """How long a listing of `state`'s server is reused: less after a failure (the server may be back)."""
        return min(self.list_seconds, RETRY_SECONDS) if state.problem else self.list_seconds

    async def _list(self, name: str) -> None:
        await _sdk_loaded()
        from hitl.mcp.connection import list_tools  # noqa: PLC0415  (loaded by `_sdk_loaded`)

        server, state = self.servers[name], self.states[name]
        try:
            listing = read_listing(server, await list_tools(self.endpoints[name], self.limits[name]))
        except ServerProblem as problem:
            with self._lock:
                state.problem, state.listed_at = str(problem), time.monotonic()
                if state.vetted is None:
                    state.vetted = frozenset()
            logger.warning("%s", problem)
            return
        self._took(name, listing)

    def _took(self, name: str, listing: Listing) -> None:
        """Keep what `name` lists now (the first listing is what the agent vets); report what it added."""
        state = self.states[name]
        with self._lock:
            first = state.vetted is None
            state.listing, state.listed_at, state.problem = listing, time.monotonic(), None
            if first:
                state.vetted = frozenset(listing.tools)
            added = [t for t in listing.tools.values() if t.tool_name not in (state.vetted or ())]
            news = [t for t in added if t.policy_name not in state.reported]
            state.reported.update(t.policy_name for t in news)
        answers.register(self.agent, [described(t) for t in listing.tools.values()])
        for tool in news:
            logger.warning(
                "MCP %s lists %s, which it did not list when %s started: its calls are gated until a policy "
                "names it or a restart lists it",
                name,
                tool.policy_name,
                self.agent,
            )
        for reason in listing.left_out if first else ():
            logger.warning("MCP %s: %s is not offered", name, reason)

    def added_after_start(self) -> list[str]:
        """Policy names of the tools listed now that were not listed when the agent started."""
        return sorted(
            tool.policy_name
            for state in self.states.values()
            for tool in state.listing.tools.values()
            if state.vetted is not None and tool.tool_name not in state.vetted
        )

    def offered(self) -> list[StructuredTool]:
        """What the model is offered: every tool listed now, by its model name and schema."""
        return [described(tool) for state in self.states.values() for tool in state.listing.tools.values()]

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        """Offer the servers' tools to this model call (listing them first when due)."""
        if self.due():
            _blocking(self.refresh())
        return handler(request.override(tools=[*request.tools, *self.offered()]))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """`wrap_model_call` for async runs."""
        await self.refresh()
        return await handler(request.override(tools=[*request.tools, *self.offered()]))

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        """Run an MCP tool's call; any other call goes on to its own tool."""
        if self.owner(request.tool_call["name"]) is None:
            return handler(request)
        return _blocking(self.run(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """`wrap_tool_call` for async runs."""
        if self.owner(request.tool_call["name"]) is None:
            return await handler(request)
        return await self.run(request)

    async def run(self, request: ToolCallRequest) -> ToolMessage:
        """Call the MCP tool the model named, as the gate let it through.

        Raises:
            ServerProblem: the server is not configured, not reachable, does not list the tool, or
                answered badly (the gate records it as the call's failure, in these words).
        """
        call = request.tool_call
        server = self.owner(call["name"])
        assert server is not None  # noqa: S101  (only called for a name a server owns)
        endpoint = self.endpoints[server.name]
        if not endpoint.configured:
            setting = server.url_setting.upper()
            msg = f"{server.name} is not configured here ({setting} is empty); nothing was run"
            raise ServerProblem(msg)
        approved = approved_schema(call, self._asked.get(call["id"] or ""))
        if self.tool(call["name"]) is None:  # not in the last listing: one more look before giving up
            await self.refresh(force=True, only=server.name)
            if (problem := self.states[server.name].problem) is not None:
                msg = f"{problem}; nothing was run"
                raise ServerProblem(msg)
        tool = self.tool(call["name"])
        if tool is None:
            asked = call["name"].removeprefix(f"{server.name}_")
            msg = f"{server.name} does not list {asked} now; nothing was run"
            raise ServerProblem(msg)
        seen: dict[str, McpTool | None] = {}

        def as_approved(listed: list[Any]) -> bool:
            """The server's tools as listed on the call's own connection: run only the schema approved."""
            self._took(server.name, read_listing(server, listed))
            seen["now"] = now = self.tool(call["name"])
            return now is not None and now.input_schema_sha256 == approved

        owner = acting_for()
        meta = {
            "hitl/tool_call_id": call["id"] or "",
            "hitl/agent": self.agent,
            **(
                {"hitl/acting_for": {"identity": owner.identity, "roles": sorted(owner.roles)}}
                if owner
                else {}
            ),
        }
        await _sdk_loaded()
        from hitl.mcp import calls  # noqa: PLC0415  (loaded by `_sdk_loaded`)

        done = await calls.run(
            calls.Call(
                tool,
                endpoint,
                call,
                self.agent,
                self.limits[server.name],
                self.max_chars,
                meta,
                relist=None if approved is None else as_approved,
            )
        )
        return (
            done if done is not None else await self._refused(request, tool, approved or "", seen.get("now"))
        )

    async def _refused(
        self, request: ToolCallRequest, tool: McpTool, approved: str, now: McpTool | None
    ) -> ToolMessage:
        call = request.tool_call
        listed = f"listed now {now.input_schema_sha256[:12]}…" if now else "not listed now"
        why = (
            f"{tool.policy_name} changed its input schema since the call was approved (approved "
            f"{approved[:12] or 'none'}…, {listed})"
        )
        store = getattr(request.runtime, "store", None)
        record = refusal_record(call, self.agent, why)
        if store is not None and record is not None:
            await audit_chain.aput(store, record["thread_id"], f"{time.time_ns():020d}-902", record)
        return ToolMessage(
            content=f"Not run: {why}. Nothing was sent to {tool.server}; ask for the call again.",
            tool_call_id=call["id"] or "",
            name=call["name"],
            status="error",
        )


_TOOLBOXES: weakref.WeakSet[McpToolbox] = weakref.WeakSet()


def toolboxes() -> list[McpToolbox]:
    """Every toolbox built in this process (a server: those of the agents it serves)."""
    return list(_TOOLBOXES)


_worker = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mcp")


def _blocking(work: Coroutine[Any, Any, T]) -> T:
    """Run `work` to its end from sync code, on a loop of its own, in this run's context (for interrupts)."""
    context = contextvars.copy_context()
    return _worker.submit(context.run, asyncio.run, work).result()
