"""What the server keeps of decisions and serves: receipts, the audit trail, the inbox, allowances.

A receipt is a decision the server accepted (kept in the thread's state and signed); an audit
record one line of a thread's trail; an inbox item one action a person may decide; an allowance
a standing approval an approve granted. The bodies of `GET /inbox`, `GET /audit/...` and `GET /me` too.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, get_args

from typing_extensions import TypedDict

from hitl.contracts.decisions import ArgBound  # noqa: TC001  (pydantic reads the annotations at runtime)
from hitl.contracts.interrupts import Decider, McpProvenance, Role  # noqa: TC001  (as above)

__all__ = [
    "PERSON_DECISIONS",
    "Allowance",
    "ApprovalReceipt",
    "Approvals",
    "AuditHead",
    "AuditLog",
    "AuditRecord",
    "AuditVerification",
    "FirstLineReview",
    "FirstLineStamp",
    "InboxItem",
    "InboxPage",
    "Me",
    "ReceiptVerdict",
    "RecordedDecision",
    "Waiting",
]


RecordedDecision = Literal[
    "approve", "edit", "reject", "respond", "answered", "cancel", "declined", "cancelled", "withdrawn"
]
"""What an accepted decision is recorded, signed and counted as, everywhere (receipts, the trail,
`hitl verify`, metrics, analytics): a gated call's approve, edit, reject or respond; a form's answer
(`answered`, or `approve`/`cancel` for a form whose answer model declares `decision`); a sign-off's
approve or reject; an MCP server's question answered, `declined` or `cancelled`; a request taken
back by its asker or a supervisor (`withdrawn`)."""
PERSON_DECISIONS: tuple[str, ...] = get_args(RecordedDecision)


class Approvals(TypedDict):
    """A quorum's progress after one approve: complete when `approved_by` has `required` people."""

    required: int
    approved_by: list[str]


class FirstLineStamp(TypedDict):
    """What a first-line reviewer's receipt or trail record adds: the model, the rules, how long it took."""

    model: str
    """The model it ran: `scripted:<name>` or a `provider:model` spec."""
    policy_revision: str
    """The revision of the policy that handed it the call (`hitl.proof.policy_revision`)."""
    stood_for: Decider
    """The decider (group) whose call it took."""
    latency_ms: float
    """How long it took to answer, in milliseconds."""
    cause: NotRequired[str]
    """On a referral: why it left the call to people (`FirstLineNote.cause`)."""


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
    mcp: NotRequired[McpProvenance]
    """For a tool of an MCP server (or its question): the server, the tool and the digest of its input
    schema as it was approved; signed with the rest."""
    signed: NotRequired[str]
    """The server's signature of this decision: a compact JWS (EdDSA) whose claims bind every field
    here (args as SHA-256 digests), the policy revision and the audit chain's head; its keys are at
    GET /.well-known/jwks.json (`hitl.proof.signed_receipts`). Absent on a tool's `failed` outcome."""
    first_line: NotRequired[FirstLineStamp]
    """Present when a first-line reviewer decided (`reviewer` is then `model:<name>`, never a person);
    signed with the rest."""


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


class Waiting(TypedDict):
    """Another call waiting on the same thread, for someone else perhaps: what, and who decides it."""

    interrupt_id: str
    tool: str | None
    required_role: Decider


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
    group: str
    """The group that decides this row: a group the caller decides as (the roles `reviewer` and
    `supervisor` are groups), or `owner` for a question of the caller's own thread."""
    owner: str | None
    created_at: str
    deadline: str | None
    escalated: bool
    approvals: NotRequired[Approvals]
    """Present when several people must approve: how many, and who has so far."""
    also_waiting: NotRequired[list[Waiting]]
    """Present when other calls wait on the thread too (the rest of a turn of several deciders):
    each with who decides it. The thread goes on once every one has its answer."""
    age_seconds: float


class InboxPage(TypedDict):
    """The body of `GET /inbox`: a page of rows, the cursor of the next one, and how many wait in all."""

    items: list[InboxItem]
    next_cursor: str | None
    total: int
    """The rows matching the filters, on every page."""
    counts: dict[str, int]
    """The caller's whole inbox (not filtered) per group the caller may decide, each row counted
    once, under its `group` (e.g. `{"reviewer": 3, "supervisor": 1}`; a group with none left out)."""


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
    decided_by: NotRequired[str]
    """Who the receipt names: a person, `system`, or a first-line reviewer `model:<name>`."""
    first_line: NotRequired[FirstLineStamp]
    """Present when a first-line reviewer (a model) decided: shown apart from people's decisions."""


class FirstLineReview(TypedDict):
    """A first-line reviewer's decision as `GET /first-line/samples` lists it, for a person to check."""

    thread_id: str
    tool_call_id: str
    agent: str
    tool: str
    args: dict[str, Any]
    decision: str
    reason: str
    reviewer: str
    """`model:<name>`."""
    model: str
    stood_for: Decider
    decided_at: str
    review: NotRequired[Literal["fine", "should_not_have"]]
    """A person's word on it afterwards, once given."""
    reviewed_by: NotRequired[str]


class AuditVerification(TypedDict):
    """The body of `GET /audit/{thread_id}/verification`: each receipt's verdict, the chain's problems."""

    thread_id: str
    ok: bool
    receipts: list[ReceiptVerdict]
    trail_problems: list[str]
    notes: list[str]


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
    granted_groups: NotRequired[list[str]]
    """The granter's groups beyond their role: it covers calls one of these groups decides."""
    revoked_by: NotRequired[str]
    revoked_at: NotRequired[str]


class Me(TypedDict):
    """The body of `GET /me`: who the caller is, and the groups they decide as (cards offer buttons by it)."""

    identity: str
    role: Role
    groups: NotRequired[list[str]]
    """The teams beyond their role they decide for (`finance`), present only when any; a requester
    decides for none, whatever teams they are in (`hitl.policy.groups.deciding`)."""
    decides_as: list[Decider]
    """Every group they may decide as, their roles among them (a supervisor is in `reviewer` too); a
    call for one of these is theirs to decide, an `owner` question only on their own threads."""
    staff: bool
    """Whether they may read threads they did not start (reviewers and supervisors)."""
