"""Who is running the graph and whose records it works on, as the server put it in the run's config.

The LangGraph server writes the authenticated user into every run's `configurable`
(`langgraph_auth_user_id`, `langgraph_auth_permissions`, which our auth fills with the
user's roles); clients cannot set those keys. This module is the one place that reads them.
Not for deciding who may run what: the server does that; the graph uses it as a second wall.
`acting_for()` is the person whose records a run works on: the thread's owner, which the
server writes into every run it admits or starts (`hitl_acting_for`), so a reviewer's approval
runs a tool for the customer who asked, never with the reviewer's wider view. A run that names
nobody works on nothing (`NobodyNamedError`): inside the server (`in_server`) always; outside it
unless its config says it runs in-process (`in_process`), where there is no one to name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.tools import ToolException
from langgraph.config import get_config

STAFF_ROLES = frozenset({"reviewer", "supervisor"})
ACTING_FOR_KEY = "hitl_acting_for"
"""The run's `configurable` key the server sets to the thread owner's identity and roles."""
REQUESTED_BY_KEY = "hitl_requested_by"
"""The run's `configurable` key the server sets to who asked for what the run does: the owner and
the caller of a run with new input; for a resume, the people who asked for what it answers."""
IN_PROCESS_KEY = "hitl_in_process"
"""The run's `configurable` key that says "in-process, no server": its tools work on every record.

Set by scripts, tests and benchmarks that run a graph in their own process (`in_process`); a
client of the server cannot send it (every `hitl_*` key is the server's), and inside the server
(`in_server`) it is ignored."""
SERVER_RUN_KEYS = ("run_id", "assistant_id", "graph_id")
"""What the Agent Server's run store writes into the `configurable` of every run it creates, after
the client's config (so a client can neither set nor drop them): langgraph-api's in-memory runtime
(`langgraph dev`) and langgraph-runtime-pg alike. A graph invoked in-process has none of them."""


class NobodyNamedError(ToolException):
    """A tool that reads or writes owned records ran in a run that names nobody it works for.

    A `ToolException`: a tool with `handle_tool_error` hands it to the model as an error result.
    """


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
    """The authenticated caller of the running graph, or None when no person's request started it.

    None means the graph runs in-process without the server (scripts, tests, benchmarks), or in
    a run the server started itself (a withdrawal's, the watcher's): there is no caller to check,
    and every wall that needs one is the server's. Whose records a run works on is `acting_for`.
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


def in_server(config: dict[str, Any] | None = None) -> bool:
    """Whether the Agent Server started this run (its run store's keys are in `configurable`)."""
    if config is None:
        try:
            config = dict(get_config())
        except RuntimeError:  # outside a runnable context
            return False
    configurable = config.get("configurable") or {}
    return all(isinstance(configurable.get(key), str) and configurable[key] for key in SERVER_RUN_KEYS)


def in_process(thread_id: str | None = None, **configurable: Any) -> dict[str, Any]:  # noqa: ANN401  (any configurable value)
    """A run config for a graph run in-process, without the server (scripts, tests, benchmarks).

    It says so explicitly (`IN_PROCESS_KEY`): there is nobody to name, so tools work on every
    record, as the server's walls are not there. `thread_id` and `configurable` go in beside it.
    Inside the server the key is ignored.
    """
    named = {"thread_id": thread_id} if thread_id is not None else {}
    return {"configurable": {**named, **configurable, IN_PROCESS_KEY: True}}


def acting_for(config: dict[str, Any] | None = None) -> Caller | None:
    """The person a run works for (the thread's owner); None only for a run that says it is in-process.

    Inside the server only the server's word counts (`hitl_acting_for`); outside it a run may
    name its caller instead (as a test does), or say it runs in-process (`in_process`).

    Raises:
        NobodyNamedError: the run names nobody: inside the server (fail closed, never "everyone"),
            or outside it without saying it runs in-process.
    """
    if config is None:
        try:
            config = dict(get_config())
        except RuntimeError:  # outside a runnable context: nothing says who or where
            config = {}
    if (owner := thread_owner(config)) is not None:
        return owner
    if in_server(config):
        msg = (
            "Refused: this run inside the server does not name whose records it works on "
            f"({ACTING_FOR_KEY}, which the server writes into every run it admits or starts); "
            "nothing was read or written."
        )
        raise NobodyNamedError(msg)
    if (caller := current_caller(config)) is not None:
        return caller
    if (config.get("configurable") or {}).get(IN_PROCESS_KEY) is True:
        return None
    msg = (
        "Refused: this run names nobody whose records it works on. Run the graph through the server, "
        "or, in-process, pass hitl.gate.caller.in_process() as its config; nothing was read or written."
    )
    raise NobodyNamedError(msg)


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
    The server names them in every run it admits or starts (`REQUESTED_BY_KEY`): a reviewer's
    resume carries on the requester's request, so calls the model makes in it are still the
    requester's. Without the key (in-process), the owner and the run's caller it names, if any.
    """
    if config is None:
        try:
            config = dict(get_config())
        except RuntimeError:
            return {}
    named = (config.get("configurable") or {}).get(REQUESTED_BY_KEY)
    if isinstance(named, list) and named and all(isinstance(p, str) and p for p in named):
        return {"requested_by": sorted(set(named))}
    people = {p.identity for p in (thread_owner(config), current_caller(config)) if p is not None}
    return {"requested_by": sorted(people)} if people else {}
