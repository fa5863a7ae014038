"""What a run may pass beside its input: `RunContext`, whose `policy` overrides the policy for the run.

The shapes only: which overrides fit an agent and which loosen its policy is
`hitl.policy.overrides`; the server admits them (`server.admission.overrides`).
"""

from __future__ import annotations

from typing import NotRequired

from langchain.agents.middleware.human_in_the_loop import (
    DecisionType,  # noqa: TC002  (pydantic reads the annotations at runtime)
)
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

__all__ = ["PolicyOverride", "RunContext", "ToolOverride"]


class ToolOverride(BaseModel):
    """How one run reviews one tool: gate it or not, and with which decisions."""

    model_config = ConfigDict(extra="forbid", strict=True)

    gated: bool | None = Field(
        default=None,
        description=(
            "true: pause on every call (conditions such as limits are dropped); false: never pause "
            "(loosening; always-review calls still pause); absent: as the policy says, or gated if "
            "the policy does not gate the tool."
        ),
    )
    allowed_decisions: list[DecisionType] | None = Field(
        default=None,
        min_length=1,
        description="What a reviewer may answer; adding a type the policy does not allow is loosening.",
    )
    auto_approve_limit: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description=(
            "For a tool whose gate lets calls up to a limit run without a person: this run's limit. "
            "Lower is tightening, higher is loosening."
        ),
    )


class PolicyOverride(BaseModel):
    """A policy override for one run, passed as `context={"policy": ...}`.

    Tightening (more gates, fewer decisions, a lower limit) is open to whoever may run the
    thread; loosening needs a supervisor. Both are audited. It holds for the run and its resumes.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    gate_all: bool = Field(
        default=False, description="Pause on every call of every tool the policy gates, whatever its args."
    )
    tools: dict[str, ToolOverride] = Field(
        default_factory=dict, description="Per-tool overrides, by tool name."
    )


class RunContext(TypedDict):
    """The agents' run context (`context_schema`): what a run may pass beside its input."""

    policy: NotRequired[PolicyOverride]
