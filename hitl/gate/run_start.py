"""A run's start at the top agent's gate: who may run the agent, and the run's policy override, recorded.

The server refuses both earlier (`server.admission`); this is the graph's own wall. The override
a run passes as `context["policy"]` is checked against the agent's catalog and recorded in state
(`RUN_POLICY_KEY`), sealed and bound to the thread, so every gate of the run and of its resumes
applies the same one. The top gate does it in the model call that answers new input
(`starts_run`), not in a step of its own. Not for applying it to a call: the gate does that (`policy_for`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage

from hitl.gate.caller import current_caller
from hitl.gate.trusted_state import seal_run_policy, trusted_run_policy
from hitl.policy.overrides import parse

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langchain_core.messages import AnyMessage

    from hitl.policy.overrides import PolicyCatalog

RUN_POLICY_KEY = "run_policy"
"""The state key of the run's checked policy override (`trusted_state.seal_run_policy`)."""


def starts_run(messages: Sequence[AnyMessage]) -> bool:
    """Whether a model call with these messages in state answers a run's new input.

    Within a run, and in a resumed one, the model is called again only after the tools answered
    its calls (or the gate answered for them), so the last message is a tool's. Anything else is
    new input: a person's message (the only kind the server admits; a supervisor's may also be
    the agent's or the system's), or an ended thread run again. A caller in the same process
    who starts a run with a tool message as its input is taken as continuing the last run.
    """
    return not (messages and isinstance(messages[-1], ToolMessage))


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
