"""What the approval layer knows of each agent it builds, found from the graph itself: no agent is named.

`create_deep_agent` files an `AgentCard` for the graph it returns: the gates a run's policy
override may name (its catalog), who may run it, and its offline script. The server reads the card
of the graph it serves under a graph id; `hitl openai-scripted` and `hitl new` read the graphs a
`langgraph.json` serves. Not for policies or gates themselves (`hitl.policy.gates`, `hitl.gate.gate`).
"""

from __future__ import annotations

import importlib
import json
import sys
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hitl.policy.groups import is_group_name

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from hitl.mcp.toolbox import McpToolbox
    from hitl.model.scripted.script import ScriptFn
    from hitl.policy.overrides import PolicyCatalog

ROLES = ("requester", "reviewer", "supervisor")
"""The roles a person can have (the server's users and the identity provider map onto these)."""


@dataclass(frozen=True)
class AgentCard:
    """One agent as the approval layer built it."""

    name: str
    catalog: PolicyCatalog
    run_by: frozenset[str] | None = None
    """The roles or groups that may run it; None: everyone signed in."""
    offline: ScriptFn | None = None
    """Its offline script (`hitl.model.scripted.rules`), if it has one."""
    toolboxes: tuple[McpToolbox, ...] = ()
    """The toolboxes of the MCP servers it and its subagents declare (`hitl.mcp.toolbox`)."""

    @property
    def answerers(self) -> frozenset[str]:
        """Who answers its MCP servers' questions: `owner` or the groups their declarations name."""
        return frozenset(s.answered_by for box in self.toolboxes for s in box.servers.values())

    def may_run(self, roles: Iterable[str]) -> bool:
        """Whether someone holding `roles` (their roles and groups: `User.memberships`) may run this agent."""
        return self.run_by is None or bool(self.run_by & set(roles))

    @property
    def who_may_run(self) -> str:
        """The roles that may run it, in words."""
        return "everyone" if self.run_by is None else " or ".join(sorted(self.run_by))


def run_by_roles(run_by: Iterable[str] | None) -> frozenset[str] | None:
    """`create_deep_agent`'s `run_by`, checked: None (everyone) or groups (a role is a group).

    Who is in a group is the server's to check at start-up (`server.identity.answerers`).

    Raises:
        ValueError: a malformed group name (or `owner`, `system`, `unknown`), or none at all.
    """
    if run_by is None:
        return None
    roles = frozenset([run_by] if isinstance(run_by, str) else run_by)
    if not roles or (unknown := sorted(g for g in roles if not is_group_name(g))):
        shown = ", ".join(map(repr, unknown)) if roles else "no role or group"
        msg = (
            f"run_by names {shown}; name roles ({', '.join(ROLES)}) or groups (lowercase letters, "
            "digits, '-', '_', '.'; at most 64 characters; not owner, system or unknown)"
        )
        raise ValueError(msg)
    return roles


_CARDS: weakref.WeakKeyDictionary[Any, AgentCard] = weakref.WeakKeyDictionary()


def file_card(graph: object, card: AgentCard) -> None:
    """Remember `card` for `graph` (what `create_deep_agent` returns)."""
    _CARDS[graph] = card


def filed_cards() -> tuple[AgentCard, ...]:
    """The cards of every graph `create_deep_agent` built in this process (a server: the served ones)."""
    return tuple(_CARDS.values())


def card_of(graph: object) -> AgentCard | None:
    """The card of a graph `create_deep_agent` built; None for any other graph."""
    try:
        return _CARDS.get(graph)
    except TypeError:  # an object that cannot be weakly referenced was never filed
        return None


def graphs_of(config: Path) -> dict[str, str]:
    """The graphs a `langgraph.json` serves: graph id -> `module.path:attribute`.

    Raises:
        ValueError: the file has no `graphs` object of such paths.
    """
    graphs = json.loads(config.read_text()).get("graphs")
    if not isinstance(graphs, dict) or not all(isinstance(v, str) and ":" in v for v in graphs.values()):
        msg = f"{config} needs a 'graphs' object of graph id -> 'module.path:attribute'"
        raise ValueError(msg)
    return dict(graphs)


def load_graphs(config: Path) -> dict[str, object]:
    """Import each graph a `langgraph.json` serves (as the server does), so their cards are filed."""
    root = str(config.resolve().parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    loaded = {}
    for graph_id, spec in graphs_of(config).items():
        module, _, attribute = spec.partition(":")
        module = module.removeprefix("./")
        if module.endswith(".py"):  # langgraph.json also takes a file path: ./agents/support.py:graph
            module = module.removesuffix(".py").replace("/", ".")
        loaded[graph_id] = getattr(importlib.import_module(module), attribute)
    return loaded
