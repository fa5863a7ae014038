"""What the layer asks a person: the interrupt values of the gate and of tools, and who may answer them.

A batched request (every gated call of a model turn), a per-call request, a tool's own form or
sign-off, an MCP server's question mid-call (`McpElicitationRequest`), each by kind in `InterruptShapes`
(and `catalogue`, what the shapes say of each kind). What a person answers is `hitl.contracts.decisions`;
what the server keeps of it, `hitl.contracts.records`; how a client reads these, `hitl.contracts.asks`.
Shapes only: the gate builds them (`hitl.gate.review_requests`). Loads no agent code, so any client may
import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, NotRequired, get_args, get_type_hints

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

__all__ = [
    "ActionRequest",
    "ApprovalRequest",
    "BatchedApprovalRequest",
    "Catalogue",
    "Decider",
    "DecisionType",
    "FirstLineNote",
    "FormRequest",
    "InterruptMode",
    "InterruptShapes",
    "McpElicitationRequest",
    "McpProvenance",
    "ReviewConfig",
    "Role",
    "ToolApprovalRequest",
    "catalogue",
]

DecisionType = Literal["approve", "edit", "reject", "respond"]
"""LangChain's decision vocabulary (`langchain.agents.middleware.human_in_the_loop.DecisionType`), written
here so that reading a shape loads no agent code; a unit test holds the two equal."""
InterruptMode = Literal["batched", "per_call"]
"""LangChain's interrupt modes (its `InterruptMode`), likewise."""

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


class FirstLineNote(TypedDict):
    """What the first-line reviewer (a model, `hitl.policy.first_line`) said of a call it left to people."""

    reviewer: str
    """Who looked first: `model:<name>`, never a person."""
    model: str
    """The model it ran: `scripted:<name>` or a `provider:model` spec."""
    reason: str
    """Its reason, or why it gave none (a timeout, an error, its circuit breaker)."""
    cause: Literal["model", "not_allowed", "timeout", "error", "unparseable", "unbuildable", "breaker"]
    """`model`: its own judgement; `not_allowed`: it answered what its policy does not let it; the rest:
    it failed (or its breaker is open), so a person decides."""


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
    first_line: NotRequired[FirstLineNote]
    """Present when a first-line reviewer looked at the call first and left it to people."""
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
    first_line: NotRequired[FirstLineNote]
    """Present when a first-line reviewer looked at the call first and left it to people."""
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


class InterruptShapes(TypedDict):
    """Every interrupt the layer sends, by kind (`hitl.contracts.asks.InterruptKind`): clients handle each.

    Adding a shape is one entry here and in `InterruptKind`; `make schemas` publishes it (with its
    examples), and every client that does not handle it fails its type check or its tests.
    """

    batched: BatchedApprovalRequest
    tool_approval: ToolApprovalRequest
    form: FormRequest
    approval_request: ApprovalRequest
    mcp_elicitation: McpElicitationRequest


@dataclass(frozen=True)
class Catalogue:
    """What the published shapes say of each kind, read from `InterruptShapes` once."""

    shapes: dict[str, type]
    adapters: dict[str, TypeAdapter[Any]]
    tags: dict[str, str | None]
    """Each kind's `type` tag; None for the batched request, which has none (LangChain's shape)."""
    own_keys: dict[str, frozenset[str]]
    """The keys only one kind has (`action_requests`, `review_configs`): how an untagged value is told."""
    default_deciders: dict[str, Decider]
    """Who answers a kind whose value names nobody: its shape's published default (a form: the owner)."""
    unnamed: Decider
    """Who answers what names nobody and has no default: a stock LangChain request, a value of no kind."""
    escalates_to: Decider
    """Where an overdue approval goes when its value names no group."""


@cache
def catalogue() -> Catalogue:
    """What `InterruptShapes` says of each kind, built once on first use (`hitl.contracts.asks` reads it)."""
    found = get_type_hints(InterruptShapes)
    adapters = {kind: TypeAdapter(shape) for kind, shape in found.items()}
    hints = {kind: get_type_hints(shape) for kind, shape in found.items()}
    defaults = {
        kind: adapter.json_schema()["properties"].get("required_role", {}).get("default")
        for kind, adapter in adapters.items()
    }
    return Catalogue(
        shapes=found,
        adapters=adapters,
        tags={kind: next(iter(get_args(h.get("type", type(None)))), None) for kind, h in hints.items()},
        own_keys={
            kind: frozenset(h).difference(*(other for name, other in hints.items() if name != kind))
            for kind, h in hints.items()
        },
        default_deciders={kind: d for kind, d in defaults.items() if isinstance(d, str)},
        unnamed=SIGN_OFF_DECIDER,
        escalates_to=ESCALATES_TO,
    )
