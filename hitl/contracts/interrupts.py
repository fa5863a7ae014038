"""What the layer asks a person: the interrupt values of the gate and of tools, and who may answer them.

A batched request (every gated call of a model turn), a per-call request, a tool's own form or
sign-off. What a person answers is `hitl.contracts.decisions`; what the server keeps of it,
`hitl.contracts.records`. Shapes only: the gate builds them (`hitl.gate.review_requests`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from langchain.agents.middleware.human_in_the_loop import DecisionType, InterruptMode
from pydantic import Field
from typing_extensions import TypedDict

__all__ = [
    "ActionRequest",
    "ApprovalRequest",
    "BatchedApprovalRequest",
    "Decider",
    "FormRequest",
    "InterruptMode",
    "ReviewConfig",
    "Role",
    "ToolApprovalRequest",
]

Role = Literal["requester", "reviewer", "supervisor"]
"""A person's role; each role is a group of its own, and a supervisor is in `reviewer` too."""
Owner = Literal["owner"]
"""The decider that is no group: the thread's owner, who answers their own questions."""
OWNER: Owner = "owner"
MAX_GROUP_CHARS = 64
GROUP_PATTERN = rf"^[a-z0-9._-]{{1,{MAX_GROUP_CHARS}}}$"
"""A group's name: lowercase letters, digits, `-`, `_`, `.` (`owner` is written so too, and is no group)."""
Decider = Annotated[str, Field(pattern=GROUP_PATTERN)]
"""Who may answer an interrupt: `owner` (the thread's owner) or a group (a `Role`, or a team such as
`finance`; `hitl.policy.groups`)."""
SIGN_OFF_DECIDER: Decider = "reviewer"
"""Who answers a sign-off (`ApprovalRequest`) that names nobody, and a stock LangChain request's calls."""
ESCALATES_TO: Decider = "supervisor"
"""Where an overdue approval goes when its value names no `escalate_to`."""
EscalateTo = Annotated[
    Decider,
    Field(
        default=ESCALATES_TO,
        description="The group an overdue approval escalates to (a supervisor if absent).",
    ),
]


class ActionRequest(TypedDict):
    """One gated tool call inside a batched approval request."""

    name: str
    args: dict[str, Any]
    description: str
    tool_call_id: str
    agent: str


class ReviewConfig(TypedDict):
    """What a reviewer may do with the action request at the same position."""

    action_name: str
    allowed_decisions: list[DecisionType]
    required_role: Decider
    may_allow: NotRequired[bool]
    """Present and true when an approve may carry `allow` (see `ApproveAndAllowDecision`)."""
    self_approval: NotRequired[bool]
    """Present and true when the people in `requested_by` may decide this call themselves."""
    approvals_required: NotRequired[int]
    """Present when more than one person must approve: how many distinct people (a quorum)."""
    approved_by: NotRequired[list[str]]
    """With `approvals_required`: who has approved these args so far ("1 of 2")."""


class BatchedApprovalRequest(TypedDict):
    """Batched mode: every gated call of one model turn, answered with `{"decisions": [...]}`."""

    action_requests: Annotated[list[ActionRequest], Field(min_length=1)]
    review_configs: Annotated[list[ReviewConfig], Field(min_length=1)]
    agent: str
    requested_by: NotRequired[list[str]]
    """Who asked (the thread's owner and the run's caller): they may not approve, edit or answer
    the calls, unless a review config says `self_approval` (separation of duties)."""
    deadline: NotRequired[str]
    on_expiry: NotRequired[Literal["reject", "escalate"]]
    escalated_seconds: NotRequired[float | None]
    escalate_to: NotRequired[EscalateTo]
    """Present when an escalation goes to a group other than `supervisor`."""


class ToolApprovalRequest(TypedDict):
    """Per-call mode: one gated call, answered by interrupt id with one decision."""

    type: Literal["tool_approval"]
    tool_call_id: str
    name: str
    args: dict[str, Any]
    description: str
    agent: str
    required_role: Decider
    allowed_decisions: NotRequired[list[DecisionType]]
    may_allow: NotRequired[bool]
    """Present and true when an approve may carry `allow` (see `ApproveAndAllowDecision`)."""
    requested_by: NotRequired[list[str]]
    """Who asked; see `BatchedApprovalRequest.requested_by`."""
    self_approval: NotRequired[bool]
    """Present and true when the people in `requested_by` may decide this call themselves."""
    approvals_required: NotRequired[int]
    """Present when more than one person must approve; see `ReviewConfig.approvals_required`."""
    approved_by: NotRequired[list[str]]
    """With `approvals_required`: who has approved these args so far."""
    deadline: NotRequired[str]
    on_expiry: NotRequired[Literal["reject", "escalate"]]
    escalated_seconds: NotRequired[float | None]
    escalate_to: NotRequired[EscalateTo]
    """Present when an escalation goes to a group other than `supervisor`."""


class FormRequest(TypedDict):
    """A form a tool raises itself, answered by interrupt id with the form's own answer (`forms`).

    `form` names it; the answer model registered under that name (`hitl.contracts.forms.register_form`)
    is what the server checks an answer against. A client without a card of its own for the
    form renders `context` and a form generated from the interrupt's `response_schema`.
    """

    type: Literal["form"]
    form: str
    title: str
    context: dict[str, Any]
    agent: str
    tool_call_id: str
    required_role: NotRequired[
        Annotated[Decider, Field(default=OWNER, description="Who answers: the thread's owner if absent.")]
    ]


class ApprovalRequest(TypedDict):
    """A sign-off a tool asks for itself (e.g. before a deploy); answered with an `ApprovalAnswer`."""

    type: Literal["approval_request"]
    action: str
    message: str
    agent: str
    tool_call_id: str
    required_role: NotRequired[
        Annotated[
            Decider, Field(default=SIGN_OFF_DECIDER, description="Who signs off: a reviewer if absent.")
        ]
    ]
    requested_by: NotRequired[list[str]]
    """Who asked; see `BatchedApprovalRequest.requested_by`."""
    deadline: NotRequired[str]
    on_expiry: NotRequired[Literal["reject", "escalate"]]
    escalated_seconds: NotRequired[float | None]
    escalate_to: NotRequired[EscalateTo]
    """Present when an escalation goes to a group other than `supervisor`."""
