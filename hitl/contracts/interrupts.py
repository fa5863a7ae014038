"""What the layer asks a person: the interrupt values of the gate and of tools, and who may answer them.

A batched request (every gated call of a model turn), a per-call request, a tool's own form or
sign-off, an MCP server's question mid-call (`McpElicitationRequest`). What a person answers is
`hitl.contracts.decisions`; what the server keeps of it,
`hitl.contracts.records`. Shapes only: the gate builds them (`hitl.gate.review_requests`).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from langchain.agents.middleware.human_in_the_loop import DecisionType, InterruptMode
from typing_extensions import TypedDict

__all__ = [
    "ActionRequest",
    "ApprovalRequest",
    "BatchedApprovalRequest",
    "Decider",
    "FormRequest",
    "InterruptMode",
    "McpElicitationRequest",
    "McpProvenance",
    "ReviewConfig",
    "ToolApprovalRequest",
]

Decider = str
"""Who may answer an interrupt: `owner` (the thread's owner) or a group (`reviewer`, `supervisor`, a team
such as `finance`; `hitl.policy.groups`)."""


class McpProvenance(TypedDict):
    """Where a tool of an MCP server comes from: the server, its own tool name, its input schema's digest.

    `crm` and `delete_contact` are what a policy names as `crm.delete_contact`; the call's `name` is
    the tool as the model sees it (`crm_delete_contact`). `input_schema_sha256` is the SHA-256 of the
    tool's input schema (canonical JSON) as listed when the call paused ('' for a tool the server did not
    list): the call runs only while the server lists the same schema.
    """

    server: str
    tool: str
    input_schema_sha256: str


class ActionRequest(TypedDict):
    """One gated tool call inside a batched approval request."""

    name: str
    args: dict[str, Any]
    description: str
    tool_call_id: str
    agent: str
    mcp: NotRequired[McpProvenance]
    """Present for a tool of an MCP server."""


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

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]
    agent: str
    requested_by: NotRequired[list[str]]
    """Who asked (the thread's owner and the run's caller): they may not approve, edit or answer
    the calls, unless a review config says `self_approval` (separation of duties)."""
    deadline: NotRequired[str]
    on_expiry: NotRequired[Literal["reject", "escalate"]]
    escalated_seconds: NotRequired[float | None]
    escalate_to: NotRequired[str]
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
    escalate_to: NotRequired[str]
    """Present when an escalation goes to a group other than `supervisor`."""
    mcp: NotRequired[McpProvenance]
    """Present for a tool of an MCP server."""


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


class ApprovalRequest(TypedDict):
    """A sign-off a tool asks for itself (e.g. before a deploy); answered with an `ApprovalAnswer`."""

    type: Literal["approval_request"]
    action: str
    message: str
    agent: str
    tool_call_id: str
    requested_by: NotRequired[list[str]]
    """Who asked; see `BatchedApprovalRequest.requested_by`."""
    deadline: NotRequired[str]
    on_expiry: NotRequired[Literal["reject", "escalate"]]
    escalated_seconds: NotRequired[float | None]
    escalate_to: NotRequired[str]
    """Present when an escalation goes to a group other than `supervisor`."""


class McpElicitationRequest(TypedDict):
    """An MCP server's question in the middle of a tool call (MCP elicitation), answered by interrupt id.

    `form` mode asks for `content` fitting `requested_schema` (flat: text, numbers, booleans, choices);
    `url` mode asks the person to open `url` and confirm. Answered with a `McpElicitationAnswer`:
    accept (with `content` in form mode), decline or cancel, each passed to the server as MCP says, and
    recorded as answered, declined or cancelled. `message`, `requested_schema` and `url` are the
    server's own words: clients show them as plain text, never as markup. `question` is the SHA-256 of
    what is asked (server, tool, mode, message, schema or URL); the server stamps it on the answer it
    accepts, so the tool passes an answer on only to the question it was given for.
    """

    type: Literal["mcp_elicitation"]
    agent: str
    tool_call_id: str
    name: str
    """The tool call's name, as the model called it."""
    args: dict[str, Any]
    """The tool call's arguments: what the question is about."""
    mcp: McpProvenance
    mode: Literal["form", "url"]
    message: str
    requested_schema: NotRequired[dict[str, Any]]
    """Form mode: the JSON Schema of the content asked for."""
    url: NotRequired[str]
    """Url mode: the address to open (http or https)."""
    question: str
    required_role: Decider
    """Who answers: `owner` (the thread's owner) unless the server's declaration names a group."""
