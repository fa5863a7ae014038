"""Build a Deep Agent whose every agent and subagent is gated by its own `ApprovalGate`.

`create_deep_agent(interrupt_on=...)` would add the stock middleware; we pass our gate in
`middleware=` instead, and give the general-purpose subagent the parent's gate explicitly,
because a custom gate is not inherited by it on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deepagents import SubAgent, create_deep_agent
from deepagents.middleware.subagents import GENERAL_PURPOSE_SUBAGENT

from hitl.contracts import RunContext
from hitl.deadlines import Deadline
from hitl.gate import ApprovalGate
from hitl.malformed_calls import MalformedCallRetry
from hitl.models import make_model
from hitl.overrides import PolicyCatalog

if TYPE_CHECKING:
    from collections.abc import Sequence

    from deepagents.backends.protocol import BackendProtocol
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Checkpointer

    from hitl.contracts import InterruptMode
    from hitl.policy import Policy
    from hitl.settings import Settings


@dataclass(frozen=True)
class SubagentSpec:
    """A subagent: its tools and its own policy (which replaces the parent's)."""

    name: str
    description: str
    system_prompt: str
    tools: Sequence[BaseTool]
    policy: Policy
    description_prefix: str | None = None
    """What a reviewer reads first for a gated call without its own description."""


def asks_before_acting(agent: str) -> str:
    """The default description prefix of `agent`'s gate."""
    return f"{agent} asks before acting"


def policy_catalog(
    name: str, *, tools: Sequence[BaseTool], policy: Policy, subagents: Sequence[SubagentSpec] = ()
) -> PolicyCatalog:
    """What a run's policy override may name for this agent (it reaches every subagent too)."""
    return PolicyCatalog.of(
        name,
        [((t.name for t in tools), policy), *(((t.name for t in s.tools), s.policy) for s in subagents)],
    )


def build_deep_agent(  # noqa: PLR0913  (the parts of an agent, named)
    name: str,
    *,
    settings: Settings,
    model: BaseChatModel | None = None,
    system_prompt: str,
    tools: Sequence[BaseTool],
    policy: Policy,
    subagents: Sequence[SubagentSpec] = (),
    interrupt_mode: InterruptMode = "batched",
    checkpointer: Checkpointer | None = None,
    backend: BackendProtocol | None = None,
    description_prefix: str | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A Deep Agent named `name` whose tools and subagents all follow their policies.

    `backend` is where the built-in file tools of the agent and every subagent work
    (Deep Agents' in-state files when None). `settings` supply the model when none is given
    (`MODEL`) and the deadline of every gated call whose policy names none
    (`APPROVAL_DEADLINE_SECONDS`). `description_prefix` heads what a reviewer reads for a gated
    call without its own description (default: "<name> asks before acting"). A run may pass
    a policy override as `context={"policy": ...}` (`RunContext`).
    """
    model = model or make_model(settings)
    default_deadline = Deadline(settings.approval_deadline_seconds)

    def gate(
        agent: str,
        agent_tools: Sequence[BaseTool],
        agent_policy: Policy,
        prefix: str | None = None,
        catalog: PolicyCatalog | None = None,
    ) -> ApprovalGate:
        return ApprovalGate(
            agent,
            agent_policy,
            agent_tools,
            interrupt_mode=interrupt_mode,
            default_deadline=default_deadline,
            description_prefix=prefix or asks_before_acting(agent),
            run_policy_catalog=catalog,
        )

    general_purpose: SubAgent = {
        "name": GENERAL_PURPOSE_SUBAGENT["name"],
        "description": GENERAL_PURPOSE_SUBAGENT["description"],
        "system_prompt": GENERAL_PURPOSE_SUBAGENT["system_prompt"],
        "tools": list(tools),
        "middleware": [gate(GENERAL_PURPOSE_SUBAGENT["name"], tools, policy), MalformedCallRetry()],
    }
    specs: list[SubAgent] = [
        general_purpose,
        *(
            SubAgent(
                name=spec.name,
                description=spec.description,
                system_prompt=spec.system_prompt,
                tools=list(spec.tools),
                middleware=[
                    gate(spec.name, spec.tools, spec.policy, spec.description_prefix),
                    MalformedCallRetry(),
                ],
            )
            for spec in subagents
        ),
    ]
    return create_deep_agent(
        model,
        list(tools),
        system_prompt=system_prompt,
        middleware=[
            gate(
                name,
                tools,
                policy,
                description_prefix,
                policy_catalog(name, tools=tools, policy=policy, subagents=subagents),
            ),
            MalformedCallRetry(),
        ],
        subagents=specs,
        context_schema=RunContext,
        checkpointer=checkpointer,
        backend=backend,
        name=name,
    )
