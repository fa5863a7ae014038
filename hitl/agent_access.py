"""Which roles may run which agent: policy, read by the server (at run creation) and the graph.

An agent not named here is open to every signed-in role. The server refuses a run of an agent
the caller's role may not use (403); the agent's gate refuses it again when the run starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

AGENT_ROLES: dict[str, frozenset[str]] = {
    "ops": frozenset({"reviewer", "supervisor"}),
}
"""Agents for staff only: `ops` reads and changes the shop's data and files."""


def may_run(agent: str, roles: Iterable[str]) -> bool:
    """Whether someone with `roles` may run `agent`."""
    allowed = AGENT_ROLES.get(agent)
    return allowed is None or bool(allowed & set(roles))


def who_may_run(agent: str) -> str:
    """The roles that may run `agent`, in words."""
    allowed = AGENT_ROLES.get(agent)
    return "everyone" if allowed is None else " or ".join(sorted(allowed))
