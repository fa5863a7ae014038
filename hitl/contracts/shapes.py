"""The interrupt and decision contracts, defined once and published as JSON Schema.

Every client (SDK helpers, CLI, web app) reads these shapes; the web app's TypeScript
types are generated from `hitl/contracts/schemas/contracts.json` and, for the forms the served agents
register (`hitl.contracts.forms`), `web/src/contracts/forms.json` (both written by `python -m
hitl.contracts.shapes`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal, NotRequired

from langchain.agents.middleware.human_in_the_loop import (
    ApproveDecision,
    Decision,
    DecisionType,
    EditDecision,
    InterruptMode,
    RejectDecision,
    RespondDecision,
)
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict

from hitl.contracts.forms import registered

Decider = Literal["owner", "reviewer", "supervisor"]
"""Who may answer an interrupt: the thread's owner, a reviewer, or only a supervisor."""

__all__ = [
    "ActionRequest",
    "AllowInThread",
    "Allowance",
    "ApprovalAnswer",
    "ApprovalReceipt",
    "ApprovalRequest",
    "Approvals",
    "ApproveAndAllowDecision",
    "ApproveDecision",
    "ArgBound",
    "AuditHead",
    "AuditLog",
    "AuditRecord",
    "AuditVerification",
    "BatchedApprovalRequest",
    "Decider",
    "Decision",
    "DecisionType",
    "EditDecision",
    "FormRequest",
    "InboxItem",
    "InboxPage",
    "InterruptMode",
    "PolicyOverride",
    "ReceiptVerdict",
    "RejectDecision",
    "RespondDecision",
    "ReviewConfig",
    "RunContext",
    "ToolApprovalRequest",
    "ToolOverride",
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

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]
    agent: str
    requested_by: NotRequired[list[str]]
    """Who asked (the thread's owner and the run's caller): they may not approve, edit or answer
    the calls, unless a review config says `self_approval` (separation of duties)."""
    deadline: NotRequired[str]
    on_expiry: NotRequired[Literal["reject", "escalate"]]
    escalated_seconds: NotRequired[float | None]


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


class Approvals(TypedDict):
    """A quorum's progress after one approve: complete when `approved_by` has `required` people."""

    required: int
    approved_by: list[str]


class ApprovalReceipt(TypedDict):
    """A decision the server accepted, kept in the thread's state (`approval_receipts`).

    Not a chat message: the model never reads it; clients show resolved cards from it.
    """

    interrupt_id: str
    tool_call_id: str
    agent: str
    tool: str
    requested_args: dict[str, Any]
    decision: str
    final_args: dict[str, Any] | None
    message: str | None
    reviewer: str
    roles: list[str]
    decided_at: str
    approvals: NotRequired[Approvals]
    """On an approve or edit of a call that needs several approvers: the count so far (partial
    while `approved_by` is shorter than `required`)."""
    signed: NotRequired[str]
    """The server's signature of this decision: a compact JWS (EdDSA) whose claims bind every field
    here (args as SHA-256 digests), the policy revision and the audit chain's head; its keys are at
    GET /.well-known/jwks.json (`hitl.proof.signed_receipts`). Absent on a tool's `failed` outcome."""


class AuditRecord(ApprovalReceipt):
    """One line of a thread's audit trail: an accepted decision or a refused attempt."""

    thread_id: str
    outcome: Literal["accepted", "refused", "failed"]
    refusal: NotRequired[str]
    prev_hash: NotRequired[str]
    """SHA-256 of the thread's record before this one ('' for its first): the chain

    (`hitl.proof.audit_chain`).
    """
    hash: NotRequired[str]
    """SHA-256 of this record's canonical JSON, `prev_hash` included."""


class InboxItem(TypedDict):
    """One row of `GET /inbox`: one action a person may decide, in one pending interrupt."""

    thread_id: str
    interrupt_id: str
    action_index: int
    """The action's position in a batched interrupt (0 otherwise)."""
    kind: str
    """"batched", "tool_approval", "form", "approval_request", ..."""
    agent: str | None
    graph_id: str | None
    tool: str | None
    tool_call_id: str | None
    args: dict[str, Any]
    description: str
    allowed_decisions: list[str]
    required_role: Decider
    owner: str | None
    created_at: str
    deadline: str | None
    escalated: bool
    approvals: NotRequired[Approvals]
    """Present when several people must approve: how many, and who has so far."""
    age_seconds: float


class InboxPage(TypedDict):
    """The body of `GET /inbox`: a page of rows, the cursor of the next one, and how many wait in all."""

    items: list[InboxItem]
    next_cursor: str | None
    total: int


class AuditHead(TypedDict):
    """The last record of a thread's audit chain, as the server keeps it ('' before the first)."""

    key: str
    hash: str


class AuditLog(TypedDict):
    """The body of `GET /audit/{thread_id}`: the thread's records, oldest first, and the chain's head."""

    records: list[AuditRecord]
    head: NotRequired[AuditHead]


class ReceiptVerdict(TypedDict):
    """One signed receipt's verdict (`hitl.proof.verification`): `verified` when `problems` is empty."""

    interrupt_id: str
    tool_call_id: str
    tool: str
    decision: str
    decided_at: str
    verified: bool
    problems: list[str]


class AuditVerification(TypedDict):
    """The body of `GET /audit/{thread_id}/verification`: each receipt's verdict, the chain's problems."""

    thread_id: str
    ok: bool
    receipts: list[ReceiptVerdict]
    trail_problems: list[str]
    notes: list[str]


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


class ApprovalAnswer(BaseModel):
    """The answer to an `ApprovalRequest`: yes or no, and why."""

    model_config = ConfigDict(extra="forbid")

    approved: bool = Field(strict=True, description="Whether the action may go ahead.")
    reason: str = Field(default="", description="Why; the agent reports it.")


class MaxBound(TypedDict):
    """The argument is a number of at most `max`."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    max: float


class EqualsBound(TypedDict):
    """The argument equals `equals` exactly."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    equals: str | int | float | bool


ArgBound = MaxBound | EqualsBound
"""A limit on one argument of the calls an allowance covers."""


class AllowInThread(TypedDict):
    """Approve, and don't ask again in this thread for this tool (optionally within argument bounds)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    scope: Literal["thread"]
    bounds: NotRequired[dict[str, ArgBound]]
    """Argument name to its bound; calls outside any bound (or missing the argument) still pause."""


class ApproveAndAllowDecision(TypedDict):
    """An approve that may also allow later calls of the same tool in this thread.

    Accepted only where the request says `may_allow`; policy's always-review calls never do.
    """

    type: Literal["approve"]
    allow: NotRequired[AllowInThread]


class Allowance(TypedDict):
    """A standing approval in a thread's state (`approval_allowances`, keyed by `id`).

    Written by the server from an approve's `allow`; the gate lets a later call of `tool` by
    `agent` in `thread_id` run without a pause when it is within `bounds`, is not always-review,
    is one the granter could decide, and was not already waiting (`tool_call_ids`) at the grant.
    """

    id: str
    thread_id: str
    agent: str
    tool: str
    bounds: dict[str, ArgBound]
    granted_by: str
    granted_role: Decider
    granted_at: str
    interrupt_id: str
    tool_call_ids: list[str]
    revoked_by: NotRequired[str]
    revoked_at: NotRequired[str]


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


class BatchedResponse(TypedDict):
    """The answer to a `BatchedApprovalRequest`: one decision per action, in order."""

    decisions: list[Decision]


PUBLISHED: dict[str, Any] = {
    "BatchedApprovalRequest": BatchedApprovalRequest,
    "BatchedResponse": BatchedResponse,
    "ToolApprovalRequest": ToolApprovalRequest,
    "Decision": Decision,
    "FormRequest": FormRequest,
    "ApprovalRequest": ApprovalRequest,
    "ApprovalAnswer": ApprovalAnswer,
    "ApprovalReceipt": ApprovalReceipt,
    "AuditRecord": AuditRecord,
    "AuditLog": AuditLog,
    "AuditVerification": AuditVerification,
    "InboxItem": InboxItem,
    "InboxPage": InboxPage,
    "ApproveAndAllowDecision": ApproveAndAllowDecision,
    "Allowance": Allowance,
    "PolicyOverride": PolicyOverride,
    "RunContext": RunContext,
}
SCHEMA_PATH = Path(__file__).parent / "schemas" / "contracts.json"
FORMS_PATH = Path("web") / "src" / "contracts" / "forms.json"
"""Where `main` publishes the served agents' forms: the web app generates its types from both files."""


def contracts_schema() -> dict[str, Any]:
    """One JSON Schema document whose `$defs` hold every published contract of the layer."""
    return _document("HitlContracts", PUBLISHED)


def forms_schema() -> dict[str, Any]:
    """The same for the forms the agents registered (`hitl.contracts.forms`): each form's value and answer."""
    shapes: dict[str, Any] = {}
    for form in registered():
        if form.request is not None:
            shapes[form.request.__name__] = form.request
        shapes[form.answer.__name__] = form.answer
    return _document("HitlForms", shapes)


def _document(title: str, shapes: dict[str, Any]) -> dict[str, Any]:
    definitions: dict[str, Any] = {}
    for name, shape in shapes.items():
        schema = TypeAdapter(shape).json_schema(ref_template="#/$defs/{model}")
        definitions.update(schema.pop("$defs", {}))
        definitions[name] = schema
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "type": "object",
        "properties": {name: {"$ref": f"#/$defs/{name}"} for name in shapes},
        "$defs": definitions,
    }


def main() -> None:
    """Publish the layer's contracts next to this module, and the served agents' forms for the web app.

    Run by `make schemas` where `langgraph.json` is: its graphs are loaded as the server loads
    them, so the forms their tools register are published too (`FORMS_PATH`).
    """
    from hitl.policy.served import load_graphs  # noqa: PLC0415  (loads the agents: only for publishing)

    SCHEMA_PATH.parent.mkdir(exist_ok=True)
    SCHEMA_PATH.write_text(json.dumps(contracts_schema(), indent=2, sort_keys=True) + "\n")
    sys.stdout.write(f"wrote {SCHEMA_PATH}\n")
    load_graphs(Path("langgraph.json"))
    FORMS_PATH.write_text(json.dumps(forms_schema(), indent=2, sort_keys=True) + "\n")
    sys.stdout.write(f"wrote {FORMS_PATH}\n")


if __name__ == "__main__":
    main()
