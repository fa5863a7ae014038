"""Who is running the graph right now, as the server's custom auth put it in the run's config.

The LangGraph server writes the authenticated user into every run's `configurable`
(`langgraph_auth_user_id`, `langgraph_auth_permissions`, which our auth fills with the
user's roles); clients cannot set those keys. This module is the one place that reads them.
Not for deciding who may run what: the server does that; the graph uses it as a second wall.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.config import get_config

STAFF_ROLES = frozenset({"reviewer", "supervisor"})


@dataclass(frozen=True)
class Caller:
    """The person a run acts for: their name and roles (a supervisor is a reviewer too)."""

    identity: str
    roles: frozenset[str]

    @property
    def is_staff(self) -> bool:
        """Reviewers and supervisors work on every customer's records."""
        return bool(self.roles & STAFF_ROLES)

    @property
    def role(self) -> str:
        """The highest role held."""
        for role in ("supervisor", "reviewer", "requester"):
            if role in self.roles:
                return role
        return "requester"


def current_caller(config: dict[str, Any] | None = None) -> Caller | None:
    """The authenticated caller of the running graph, or None outside the server.

    None means the graph runs in-process without the server (scripts, tests, benchmarks):
    there is no caller to check, and every wall that needs one is the server's.
    """
    if config is None:
        try:
            config = dict(get_config())
        except RuntimeError:  # outside a runnable context
            return None
    configurable = config.get("configurable") or {}
    identity = configurable.get("langgraph_auth_user_id")
    if not identity:
        return None
    permissions = configurable.get("langgraph_auth_permissions") or []
    return Caller(identity=str(identity), roles=frozenset(str(p) for p in permissions))
