"""Who is running the graph right now, as the server's custom auth put it in the run's config.

The LangGraph server writes the authenticated user into every run's `configurable`
(`langgraph_auth_user_id`, `langgraph_auth_permissions`, which our auth fills with the
user's roles); clients cannot set those keys. This module is the one place that reads them.
Not for deciding who may run what: the server does that; the graph uses it as a second wall.
`acting_for()` is the person whose records a run works on: the thread's owner, which the
server writes into every run it admits (`hitl_acting_for`), so a reviewer's approval runs a
tool for the customer who asked, never with the reviewer's wider view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.config import get_config

STAFF_ROLES = frozenset({"reviewer", "supervisor"})
ACTING_FOR_KEY = "hitl_acting_for"
"""The run's `configurable` key the server sets to the thread owner's identity and roles."""
REQUESTED_BY_KEY = "hitl_requested_by"
"""The run's `configurable` key the server sets to who asked for what the run does: the owner and
the caller of a run with new input; for a resume, the people who asked for what it answers."""


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


def acting_for(config: dict[str, Any] | None = None) -> Caller | None:
    """The person a run works for (the thread's owner), or None outside the server.

    Falls back to the caller for runs the server admitted without the key (none today).
    """
    if config is None:
        try:
            config = dict(get_config())
        except RuntimeError:
            return None
    return thread_owner(config) or current_caller(config)


def thread_owner(config: dict[str, Any] | None = None) -> Caller | None:
    """The thread's owner as the server wrote it into the run (`hitl_acting_for`); None without it."""
    if config is None:
        try:
            config = dict(get_config())
        except RuntimeError:
            return None
    person = (config.get("configurable") or {}).get(ACTING_FOR_KEY)
    if isinstance(person, dict) and isinstance(person.get("identity"), str) and person["identity"]:
        roles = person.get("roles")
        return Caller(
            identity=person["identity"],
            roles=frozenset(str(r) for r in roles) if isinstance(roles, list) else frozenset({"requester"}),
        )
    return None


def requested_by(config: dict[str, Any] | None = None) -> dict[str, list[str]]:
    """`{"requested_by": [...]}` for an approval request; empty outside the server.

    Who asked may not approve it (separation of duties, checked by the server and the gate).
    The server names them in every run it admits (`REQUESTED_BY_KEY`): a reviewer's resume
    carries on the requester's request, so calls the model makes in it are still the requester's.
    Without the key (the server's own runs), the owner and the run's caller.
    """
    if config is None:
        try:
            config = dict(get_config())
        except RuntimeError:
            return {}
    named = (config.get("configurable") or {}).get(REQUESTED_BY_KEY)
    if isinstance(named, list) and named and all(isinstance(p, str) and p for p in named):
        return {"requested_by": sorted(set(named))}
    people = {p.identity for p in (acting_for(config), current_caller(config)) if p is not None}
    return {"requested_by": sorted(people)} if people else {}
