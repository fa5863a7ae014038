"""A run's start at the top agent's gate: who may run the agent, and the run's policy override, recorded.

The server refuses both earlier (`server.admission`); this is the graph's own wall. The override
a run passes as `context["policy"]` is checked against the agent's catalog and recorded in state
(`RUN_POLICY_KEY`), sealed and bound to the thread, so every gate of the run and of its resumes
applies the same one. Not for applying it to a call: the gate does that (`policy_for`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hitl.gate.caller import current_caller
from hitl.gate.trusted_state import seal_run_policy, trusted_run_policy
from hitl.policy.overrides import parse

if TYPE_CHECKING:
    from hitl.policy.overrides import PolicyCatalog

RUN_POLICY_KEY = "run_policy"
"""The state key of the run's checked policy override (`trusted_state.seal_run_policy`)."""


def start(  # noqa: PLR0913  (the agent, who may run it, and what the run brings)
    agent: str,
    *,
    run_by: frozenset[str] | None,
    catalog: PolicyCatalog,
    context: object,
    recorded: object,
    thread_id: str | None,
) -> dict[str, Any] | None:
    """The state update a run starts with: its override recorded, cleared or (None) left as it is.

    Raises:
        PermissionError: the caller's role may not run this agent (the server refuses it earlier).
        OverrideError: the override does not fit this agent (the server refuses it earlier).
    """
    caller = current_caller()
    if caller is not None and run_by is not None and not (run_by & caller.roles):
        msg = (
            f"{caller.identity} ({caller.role}) may not run {agent}: it is for {' or '.join(sorted(run_by))}."
        )
        raise PermissionError(msg)
    raw = context.get("policy") if isinstance(context, Mapping) else None
    override = None if raw is None else parse(raw, catalog)
    if (override is None and not recorded) or (
        override is not None and trusted_run_policy(recorded, thread_id) == override
    ):
        return None
    return {RUN_POLICY_KEY: seal_run_policy(override, thread_id)}
