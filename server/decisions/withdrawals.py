"""Approvals a supervisor's state write took away: recorded as decisions `withdrawn`, with signed receipts.

A direct state write (`POST /threads/{id}/state`) makes a new checkpoint, and the approvals
that waited on the old one wait no more: the pending refund disappeared with only a
`state_write` on record. Each approval that waited before an accepted write and not after
it gets a receipt per call (decision `withdrawn`, by whom, why), signed like every decision
(`server.records.receipts`), in the thread's audit chain. Not for runs: a run cannot start while an
approval waits unless it answers it (`server.http.auth`).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client

from hitl.contracts.records import ApprovalReceipt
from server.admission.overrides import catalog_of
from server.decisions import store
from server.identity.access import as_server
from server.records import threads

if TYPE_CHECKING:
    from server.decisions.pending import Pending
    from server.identity.users import User

DECISION = "withdrawn"


async def record(
    thread_id: str, before: list[Pending], after: list[Pending], user: User, writes: list[dict[str, Any]]
) -> list[ApprovalReceipt]:
    """Record each approval in `before` that is not in `after` as withdrawn by `user`; the signed receipts."""
    still = {p.id for p in after}
    gone = [p for p in before if p.id not in still]
    if not gone:
        return []
    keys = sorted({k for values in writes for k in values}) or ["nothing"]
    why = (
        f"withdrawn by {user.identity}'s direct state write of {', '.join(keys)}: "
        "the call it asked about will not run"
    )
    now = datetime.now(UTC).isoformat()
    receipts = [receipt for pending in gone for receipt in receipts_of(pending, user, why, now)]
    with as_server():
        graph_id = await threads.graph_of(get_client(), thread_id)
    catalog = await catalog_of(graph_id) if graph_id else None
    return await asyncio.to_thread(store.record_signed, thread_id, receipts, catalog)


def receipts_of(pending: Pending, user: User, why: str, now: str) -> list[ApprovalReceipt]:
    """One `withdrawn` receipt per call a pending interrupt asked about (a batch has several)."""
    value = pending.value if isinstance(pending.value, dict) else {}
    batch = value.get("action_requests")
    actions: list[Any] = batch if isinstance(batch, list) else [value]
    return [
        ApprovalReceipt(
            interrupt_id=pending.id,
            tool_call_id=str(action.get("tool_call_id", "")),
            agent=str(action.get("agent") or value.get("agent") or ""),
            tool=str(action.get("name") or pending.subject),
            requested_args=dict(action.get("args") or action.get("context") or {}),
            decision=DECISION,
            final_args=None,
            message=why,
            reviewer=user.identity,
            roles=user.roles,
            decided_at=now,
        )
        for action in actions
        if isinstance(action, dict)
    ]
