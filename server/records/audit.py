"""The audit trail: one record per decision or refused attempt, chained per thread.

Records are built from the pending interrupt and the answer, so they hold what was asked
(requested args) and what was decided (final args). Accepted ones also become the thread's
`approval_receipts`, which clients use to show resolved cards after a reload. They are kept in
the layer's own store (`server.records.trail`), where appends to one thread queue on its head.
One concept, so one module however long: what a line of the trail says, for each kind of event.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from hitl.contracts.records import ApprovalReceipt, Approvals, AuditRecord
from hitl.mcp.elicitations import recorded_as
from hitl.policy.groups import SYSTEM_ACTOR
from hitl.proof import audit_chain
from server.identity.access import visible_thread
from server.insight import metrics
from server.records import trail as trail_store

if TYPE_CHECKING:
    from hitl.contracts.records import Allowance
    from hitl.policy.overrides import Change
    from server.decisions.pending import Accepted, Pending
    from server.identity.users import User

NAMESPACE = "audit"


Quorum = Callable[[str, Mapping[str, Any]], int]
"""(tool, args) -> how many distinct approvers the agent's policy asks for a call with those args."""


def receipts(accepted: list[Accepted], user: User, quorum: Quorum | None = None) -> list[ApprovalReceipt]:
    """One receipt per decided action: a batch yields one per tool call.

    A decision on a call that needs several approvers carries `approvals`: who approved the
    call's final args with this one (an edit starts again; `quorum` says how many its args need).
    """
    now = datetime.now(UTC).isoformat()
    return [
        _with_approvals(receipt, config, user.identity, quorum)
        for item in accepted
        for receipt, config in _receipts_for(item.pending, item.answer, user.identity, user.memberships, now)
    ]


def _with_approvals(
    receipt: ApprovalReceipt, config: Mapping[str, Any], reviewer: str, quorum: Quorum | None
) -> ApprovalReceipt:
    required = config.get("approvals_required")
    if not isinstance(required, int) or isinstance(required, bool):
        return receipt
    before = config.get("approved_by")
    if receipt["decision"] == "approve" and isinstance(before, list):
        people = [*(str(p) for p in before if p != reviewer), reviewer]
    elif receipt["decision"] in {"approve", "edit"}:
        people = [reviewer]
    else:
        people = []
    if receipt["decision"] == "edit" and quorum is not None and receipt["final_args"] is not None:
        required = quorum(receipt["tool"], receipt["final_args"])
    return {**receipt, "approvals": Approvals(required=required, approved_by=people)}


def refused(pending: list[Pending], resume: object, user: User, thread_id: str, reason: str) -> AuditRecord:
    """The record of a resume the server refused."""
    value = pending[0].value if len(pending) == 1 and isinstance(pending[0].value, dict) else {}
    return AuditRecord(
        thread_id=thread_id,
        interrupt_id=",".join(p.id for p in pending),
        tool_call_id=str(value.get("tool_call_id", "")),
        agent=str(value.get("agent", "")),
        tool=", ".join(p.subject for p in pending),
        requested_args={},
        decision="refused",
        final_args=None,
        message=_short(resume),
        reviewer=user.identity,
        roles=user.memberships,
        decided_at=datetime.now(UTC).isoformat(),
        outcome="refused",
        refusal=reason,
    )


def system_event(thread_id: str, pending: Pending, decision: str, message: str) -> AuditRecord:
    """A record of something the server did to a pending approval on its own (e.g. escalated it)."""
    value = pending.value if isinstance(pending.value, dict) else {}
    return AuditRecord(
        thread_id=thread_id,
        interrupt_id=pending.id,
        tool_call_id=str(value.get("tool_call_id", "")),
        agent=str(value.get("agent", "")),
        tool=pending.subject,
        requested_args={},
        decision=decision,
        final_args=None,
        message=message,
        reviewer=SYSTEM_ACTOR,
        roles=[],
        decided_at=datetime.now(UTC).isoformat(),
        outcome="accepted",
    )


def not_applied(
    thread_id: str,
    interrupt_ids: list[str],
    receipts: list[ApprovalReceipt],
    message: str,
    *,
    refusal: str | None = None,
) -> AuditRecord:
    """A stored decision the server will not apply: its runs did not (`failed`), or it does not verify."""
    first: Mapping[str, Any] = receipts[0] if receipts else {}
    return AuditRecord(
        thread_id=thread_id,
        interrupt_id=",".join(interrupt_ids),
        tool_call_id=str(first.get("tool_call_id", "")),
        agent=str(first.get("agent", "")),
        tool=", ".join(str(r.get("tool")) for r in receipts),
        requested_args={},
        decision="not_applied",
        final_args=None,
        message=message,
        reviewer=SYSTEM_ACTOR,
        roles=[],
        decided_at=datetime.now(UTC).isoformat(),
        outcome="refused" if refusal else "failed",
        **({"refusal": refusal} if refusal else {}),  # type: ignore[typeddict-item]
    )


def policy_change(  # noqa: PLR0913  (what changed, for whom, by whom, and the outcome)
    thread_id: str,
    agent: str,
    user: User,
    *,
    override: dict[str, Any],
    changes: list[Change],
    refusal: str | None = None,
) -> AuditRecord:
    """A run's policy override: what it tightens or loosens, accepted or refused."""
    loosens = any(c.kind == "loosen" for c in changes)
    return AuditRecord(
        thread_id=thread_id,
        interrupt_id="",
        tool_call_id="",
        agent=agent,
        tool="run policy",
        requested_args=override,
        decision="loosen_policy" if loosens else "tighten_policy",
        final_args=None if refusal else override,
        message="; ".join(c.text for c in changes),
        reviewer=user.identity,
        roles=user.memberships,
        decided_at=datetime.now(UTC).isoformat(),
        outcome="refused" if refusal else "accepted",
        **({"refusal": refusal} if refusal else {}),  # type: ignore[typeddict-item]
    )


def state_write(thread_id: str, agent: str, user: User, rewrites: list[str]) -> AuditRecord:
    """A supervisor's run that writes state or steers control flow (let through, on the record)."""
    return AuditRecord(
        thread_id=thread_id,
        interrupt_id="",
        tool_call_id="",
        agent=agent,
        tool="state write",
        requested_args={"rewrites": rewrites},
        decision="state_write",
        final_args=None,
        message="; ".join(rewrites),
        reviewer=user.identity,
        roles=user.memberships,
        decided_at=datetime.now(UTC).isoformat(),
        outcome="accepted",
    )


def allowance_change(thread_id: str, allowance: Allowance, user: User, decision: str) -> AuditRecord:
    """A thread allowance granted (`allow`) or revoked (`revoke_allowance`)."""
    bounds = dict(allowance["bounds"])
    return AuditRecord(
        thread_id=thread_id,
        interrupt_id=allowance["interrupt_id"],
        tool_call_id="",
        agent=allowance["agent"],
        tool=allowance["tool"],
        requested_args=bounds,
        decision=decision,
        final_args=bounds,
        message=f"allowance {allowance['id']}: {allowance['tool']} in this thread"
        + (f" within {bounds}" if bounds else ", any arguments"),
        reviewer=user.identity,
        roles=user.memberships,
        decided_at=datetime.now(UTC).isoformat(),
        outcome="accepted",
    )


def as_records(thread_id: str, accepted: list[ApprovalReceipt]) -> list[AuditRecord]:
    """Receipts as audit records of `thread_id`."""
    return [AuditRecord(**r, thread_id=thread_id, outcome="accepted") for r in accepted]


def keep_graph_records() -> None:
    """Inside the server: the graphs' own records (a tool's failure, a call not run) join this trail."""
    audit_chain.keep_in(lambda record: trail_store.write([record]))


async def write(records: list[AuditRecord]) -> None:
    """Append `records` to their threads' audit trails, each chained to the one before it (`trail`)."""
    await asyncio.to_thread(trail_store.write, records)
    metrics.observe(records)


async def readable(thread_id: str, user: User) -> bool:
    """Whether `user` may read `thread_id`'s trail: a thread they may see, or, for staff, one deleted since.

    A deleted thread's trail stays (`server.admission.deletions` records the deletion in it);
    its owner's right to it went with the thread's metadata, staff's did not.
    """
    if await visible_thread(thread_id, user) is not None:
        return True
    if not user.is_staff or not _thread_like(thread_id):  # the server's own trails have routes of their own
        return False
    return (await asyncio.to_thread(trail_store.head_of, thread_id)).seq > 0


def _thread_like(name: str) -> bool:
    """Whether `name` can be a thread's id (a UUID), not a trail of the server's own (`slack-channel`)."""
    try:
        uuid.UUID(name)
    except ValueError:
        return False
    return True


async def head_of(thread_id: str) -> dict[str, str]:
    """The last record's key and hash of `thread_id`'s trail (both '' before its first record)."""
    return (await asyncio.to_thread(trail_store.head_of, thread_id)).as_json()


async def trail(thread_id: str) -> list[AuditRecord]:
    """Every record of `thread_id`, oldest first."""
    return (await trail_with_head(thread_id))[0]


async def trail_with_head(thread_id: str) -> tuple[list[AuditRecord], dict[str, str]]:
    """Every record of `thread_id`, oldest first, and the head they end at (one consistent read)."""
    records, head = await asyncio.to_thread(trail_store.read, thread_id)
    return cast("list[AuditRecord]", records), head.as_json()


def _receipts_for(
    pending: Pending,
    answer: Any,  # noqa: ANN401  (an answer is whatever JSON the interrupt's schema allows)
    reviewer: str,
    roles: list[str],
    now: str,
) -> list[tuple[ApprovalReceipt, Mapping[str, Any]]]:
    """Each receipt of an answer with the review config it was decided under."""
    value = pending.value if isinstance(pending.value, dict) else {}
    base = {"interrupt_id": pending.id, "reviewer": reviewer, "roles": roles, "decided_at": now}
    if isinstance(value.get("action_requests"), list):
        configs = value.get("review_configs") or []
        return [
            (_decision_receipt(base, action, decision), configs[i] if i < len(configs) else {})
            for i, (action, decision) in enumerate(
                zip(value["action_requests"], answer["decisions"], strict=True)
            )
        ]
    if value.get("type") == "tool_approval":
        return [(_decision_receipt(base, value, answer), value)]
    if value.get("type") == "mcp_elicitation":
        return [(_question_receipt(base, value, answer), {})]
    return [
        (
            ApprovalReceipt(
                **base,  # type: ignore[typeddict-item]
                tool_call_id=str(value.get("tool_call_id", "")),
                agent=str(value.get("agent", "")),
                tool=pending.subject,
                requested_args=dict(value.get("context") or {}),
                decision=answered_as(value, answer),
                final_args=answer if isinstance(answer, dict) else {"answer": answer},
                message=(answer.get("reason") or answer.get("message")) if isinstance(answer, dict) else None,
            ),
            {},
        )
    ]


def _question_receipt(base: dict[str, Any], value: Mapping[str, Any], answer: Any) -> ApprovalReceipt:  # noqa: ANN401
    """An MCP server's question answered, declined or cancelled: the server and tool named, what was asked."""
    said = answer if isinstance(answer, dict) else {}
    asked = {k: value[k] for k in ("mode", "message", "requested_schema", "url", "question") if k in value}
    receipt = ApprovalReceipt(
        **base,  # type: ignore[typeddict-item]
        tool_call_id=str(value.get("tool_call_id", "")),
        agent=str(value.get("agent", "")),
        tool=str(value.get("name", "")),
        requested_args=asked,
        decision=recorded_as(said),
        final_args=dict(said.get("content") or {}) if said.get("action") == "accept" else None,
        message=None,
    )
    if isinstance(value.get("mcp"), dict):
        receipt["mcp"] = value["mcp"]
    return receipt


def answered_as(value: Mapping[str, Any], answer: Any) -> str:  # noqa: ANN401  (any answer its schema took)
    """What a tool's own question was answered with, as recorded (`RecordedDecision`).

    A sign-off (`approval_request`) is approve or reject by its `approved`; a form whose answer
    model declares `decision: approve | cancel` is recorded as that; any other form's answer is
    `answered` (its values are in `final_args`, and their digest in the signed receipt).
    """
    said = answer if isinstance(answer, dict) else {}
    if value.get("type") == "approval_request":
        return "approve" if said.get("approved") is True else "reject"
    return str(said["decision"]) if said.get("decision") in {"approve", "cancel"} else "answered"


def _decision_receipt(
    base: dict[str, Any], action: dict[str, Any], decision: dict[str, Any]
) -> ApprovalReceipt:
    kind = decision["type"]
    final = (
        decision["edited_action"]["args"] if kind == "edit" else action["args"] if kind == "approve" else None
    )
    receipt = ApprovalReceipt(
        **base,  # type: ignore[typeddict-item]
        tool_call_id=str(action.get("tool_call_id", "")),
        agent=str(action.get("agent", "")),
        tool=str(action.get("name", "")),
        requested_args=dict(action.get("args") or {}),
        decision=kind,
        final_args=final,
        message=decision.get("message"),
    )
    if isinstance(action.get("mcp"), dict):  # an MCP server's tool: the server, tool and schema approved
        receipt["mcp"] = action["mcp"]
    return receipt


def _short(resume: object, limit: int = 500) -> str:
    text = repr(resume)
    return text if len(text) <= limit else f"{text[:limit]}…"
