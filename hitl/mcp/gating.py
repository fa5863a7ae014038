"""The gate an MCP tool passes: failing closed, the policy the floor, the server's annotations only stricter.

A tool is let through without a person only when its server annotates it `readOnlyHint: true` (and
not destructive), it was listed when the agent started (a tool added later is not vetted), and no
policy names it. A tool a policy names is gated as the policy says, and when the server does not
vouch for it as read-only its calls always pause (a policy's `when` or `auto_approve_limit` cannot let
it through). Any other name of a declared server's tools, listed or not, is gated: approve or reject.
Not for which calls of a gated tool wait (`hitl.gate`), nor for listing (`hitl.mcp.toolbox`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hitl.policy.gates import ToolGate

if TYPE_CHECKING:
    from hitl.contracts.decisions import DecisionType
    from hitl.mcp.listing import McpTool
    from hitl.mcp.servers import McpServer

UNLISTED_DECISIONS: tuple[DecisionType, ...] = ("approve", "reject")
"""What a reviewer may answer for an MCP tool no policy names."""


def always(gate: ToolGate) -> ToolGate:
    """`gate`, pausing every call (no `when`, no auto-approve limit): what a policy names is never looser."""
    if gate.when is None and gate.auto_approve_limit is None:
        return gate
    return replace(gate, when=None, auto_approve_limit=None)


def unlisted_gate(describe: Callable[[str, Mapping[str, Any]], str]) -> ToolGate:
    """The gate of an MCP tool no policy names: a reviewer approves or rejects each call."""
    return ToolGate(allowed_decisions=UNLISTED_DECISIONS, description=describe)


def gate_of(
    tool: McpTool | None, named: ToolGate | None, *, vetted: bool, unlisted: ToolGate
) -> ToolGate | None:
    """The gate of one MCP tool's calls; None: it runs without a person.

    `tool` is as the server lists it now (None when it does not); `named` the policy's gate for it;
    `vetted` whether it was listed when the agent started.
    """
    trusted_read_only = tool is not None and tool.read_only and vetted
    if named is not None:
        return named if trusted_read_only else always(named)
    return None if trusted_read_only else unlisted


def describer(server: McpServer, prefix: str) -> Callable[[str, Mapping[str, Any]], str]:
    """What a reviewer reads for a call of an MCP tool no policy describes: who asks, the tool, its args."""

    def describe(name: str, args: Mapping[str, Any]) -> str:
        tool = name.removeprefix(f"{server.name}_")
        said = ", ".join(f"{key}={json.dumps(value, default=str)}" for key, value in args.items())
        return f"{prefix}: {server.policy_name(tool)} (MCP server {server.name}) {said}".rstrip()

    return describe


class WithMcpTools(Mapping[str, ToolGate]):
    """An agent's policy (a tool name to its gate) where a declared MCP server's tool names find their gate.

    Local tools read `policy` as it is; a name an MCP server owns reads `gate(name, policy.get(name))`,
    listed or not, so a call of a tool the server added a moment ago is gated too.
    """

    def __init__(
        self,
        policy: Mapping[str, ToolGate],
        owns: Callable[[str], bool],
        gate: Callable[[str, ToolGate | None], ToolGate | None],
        listed: Callable[[], list[str]],
    ) -> None:
        """`owns` tells an MCP tool's name; `gate` its gate; `listed` the MCP tool names listed now."""
        self.policy, self.owns, self.gate, self.listed = policy, owns, gate, listed

    def __getitem__(self, name: str) -> ToolGate:
        """The gate of `name`'s calls.

        Raises:
            KeyError: its calls run without a person.
        """
        if not self.owns(name):
            return self.policy[name]
        found = self.gate(name, self.policy.get(name))
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        """Every gated tool name known now: the policy's, and the listed MCP tools that are gated."""
        names = dict.fromkeys([*self.policy, *self.listed()])
        return (name for name in names if name in self)

    def __contains__(self, name: object) -> bool:
        """Whether calls of `name` are gated."""
        if not isinstance(name, str):
            return False
        try:
            self[name]
        except KeyError:
            return False
        return True

    def __len__(self) -> int:
        """How many tool names known now are gated."""
        return sum(1 for _ in self)
