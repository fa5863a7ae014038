"""The audit trail: one record per decision or refused attempt, in the LangGraph Store.

Records are built from the pending interrupt and the answer, so they hold what was asked
(requested args) and what was decided (final args). Accepted ones also become the thread's
`approval_receipts`, which clients use to show resolved cards after a reload.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from itertools import groupby
from typing import TYPE_CHECKING, Any, cast

from hitl import audit_chain
from hitl.contracts import ApprovalReceipt, Approvals, AuditRecord
from server import metrics
from server.access import as_server, is_not_found

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

    from hitl.contracts import Allowance
    from hitl.overrides import Change
    from server.resume_gate import Accepted, Pending
    from server.users import User

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
        for receipt, config in _receipts_for(item.pending, item.answer, user.identity, user.roles, now)
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
        roles=user.roles,
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
        reviewer="system",
        roles=[],
        decided_at=datetime.now(UTC).isoformat(),
        outcome="accepted",
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
        roles=user.roles,
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
        roles=user.roles,
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
        roles=user.roles,
        decided_at=datetime.now(UTC).isoformat(),
        outcome="accepted",
    )


def as_records(thread_id: str, accepted: list[ApprovalReceipt]) -> list[AuditRecord]:
    """Receipts as audit records of `thread_id`."""
    return [AuditRecord(**r, thread_id=thread_id, outcome="accepted") for r in accepted]


async def write(client: LangGraphClient, records: list[AuditRecord]) -> None:
    """Append `records` to their threads' audit trails, each chained to the one before it."""
    with as_server():
        for thread_id, batch in groupby(enumerate(records), key=lambda item: item[1]["thread_id"]):
            async with _chain_locks.setdefault(hash(thread_id) % CHAIN_LOCKS, asyncio.Lock()):
                last = await head_of(client, thread_id)
                for index, record in batch:
                    key = f"{time.time_ns():020d}-{index:03d}"
                    linked = audit_chain.link(record, last["hash"])
                    await client.store.put_item((NAMESPACE, thread_id), key, linked, index=False)
                    last = audit_chain.head(key, linked["hash"])
                await client.store.put_item(
                    (*audit_chain.HEAD_NAMESPACE, thread_id), audit_chain.HEAD_KEY, last, index=False
                )
    metrics.observe(records)


CHAIN_LOCKS = 256
_chain_locks: dict[int, asyncio.Lock] = {}
"""One writer at a time per thread in this process (threads share 256 locks), so a chain does not fork."""


async def head_of(client: LangGraphClient, thread_id: str) -> dict[str, str]:
    """The last record's key and hash of `thread_id`'s trail (both '' before its first record)."""
    try:
        with as_server():
            item = await client.store.get_item((*audit_chain.HEAD_NAMESPACE, thread_id), audit_chain.HEAD_KEY)
    except Exception as error:
        if not is_not_found(error):
            raise
        item = None
    value = item["value"] if item else {}
    return {"key": str(value.get("key", "")), "hash": str(value.get("hash", ""))}


async def trail(client: LangGraphClient, thread_id: str) -> list[AuditRecord]:
    """Every record of `thread_id`, oldest first."""
    records: list[AuditRecord] = []
    offset = 0
    while True:
        with as_server():
            page = await client.store.search_items((NAMESPACE, thread_id), limit=100, offset=offset)
        items = page["items"]
        records += [cast("AuditRecord", {**i["value"], "key": i["key"]}) for i in items]
        if len(items) < 100:  # noqa: PLR2004  (the page size)
            break
        offset += 100
    return sorted(records, key=lambda r: cast("dict[str, Any]", r)["key"])


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
    approved = (
        answer.get("approved", answer.get("decision") == "approve") if isinstance(answer, dict) else False
    )
    return [
        (
            ApprovalReceipt(
                **base,  # type: ignore[typeddict-item]
                tool_call_id=str(value.get("tool_call_id", "")),
                agent=str(value.get("agent", "")),
                tool=pending.subject,
                requested_args=dict(value.get("context") or {}),
                decision="approve" if approved else "reject",
                final_args=answer if isinstance(answer, dict) else {"answer": answer},
                message=(answer.get("reason") or answer.get("message")) if isinstance(answer, dict) else None,
            ),
            {},
        )
    ]


def _decision_receipt(
    base: dict[str, Any], action: dict[str, Any], decision: dict[str, Any]
) -> ApprovalReceipt:
    kind = decision["type"]
    final = (
        decision["edited_action"]["args"] if kind == "edit" else action["args"] if kind == "approve" else None
    )
    return ApprovalReceipt(
        **base,  # type: ignore[typeddict-item]
        tool_call_id=str(action.get("tool_call_id", "")),
        agent=str(action.get("agent", "")),
        tool=str(action.get("name", "")),
        requested_args=dict(action.get("args") or {}),
        decision=kind,
        final_args=final,
        message=decision.get("message"),
    )


def _short(resume: object, limit: int = 500) -> str:
    text = repr(resume)
    return text if len(text) <= limit else f"{text[:limit]}…"
