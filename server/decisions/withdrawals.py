"""Approvals taken back: recorded as decisions `withdrawn`, with signed receipts.

Two ways. `POST /threads/{id}/withdraw` (`withdraw`): the thread's owner, or a supervisor, takes
back every approval the thread waits on, with a reason; each is answered with a rejection that
tells the agent so (`rejection`, the answer the watcher's expiries give too), accepted like a
decision (claimed, signed, audited, applied by its run or the reconciler), and the thread goes
on; then it may be deleted (`server.admission.deletions`). And a supervisor's direct state write
(`POST /threads/{id}/state`), which makes a new checkpoint on which the approvals of the old one
wait no more (`record`). Either way each call gets a receipt (decision `withdrawn`, by whom,
why), signed like every decision (`server.records.receipts`), in the thread's audit chain.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client
from pydantic import TypeAdapter, ValidationError
from starlette.responses import JSONResponse

from hitl.contracts.forms import answer_of
from hitl.contracts.records import ApprovalReceipt
from server.admission.overrides import catalog_of
from server.coordination.inbox_table import TABLE
from server.decisions import server_runs, store
from server.decisions.decision import Request
from server.decisions.pending import Pending, ResumeRefused
from server.identity.access import as_server, visible_thread
from server.identity.users import request_user
from server.insight import metrics
from server.records import audit, threads

if TYPE_CHECKING:
    from starlette.requests import Request as HttpRequest

    from server.decisions.decision import Decision
    from server.identity.users import User

DECISION = "withdrawn"
MAX_REASON_CHARS = 500


def rejection(pending: Pending, reason: str) -> Any:  # noqa: ANN401, PLR0911  (one answer per interrupt shape)
    """The answer that turns `pending` down with `reason`, or None when its shape allows none.

    A call is rejected where it allows that, else answered in the tool's place (`respond`, a
    question only a person answers); a sign-off is refused; a form is cancelled when its answer
    model takes `{"decision": "cancel"}` (its own defaults for the rest); an MCP server's question
    is cancelled.
    """
    value = pending.value if isinstance(pending.value, dict) else {}
    if isinstance(value.get("action_requests"), list):
        configs = value.get("review_configs") or []
        answers = [_turned_down(c.get("allowed_decisions"), reason) for c in configs]
        if len(answers) != len(value["action_requests"]) or None in answers:
            return None
        return {"decisions": answers}
    if value.get("type") == "tool_approval":
        return _turned_down(value.get("allowed_decisions"), reason)
    if value.get("type") == "approval_request":
        return {"approved": False, "reason": reason}
    if value.get("type") == "form":
        return _cancelled(value.get("form"))
    if value.get("type") == "mcp_elicitation":
        return {"action": "cancel"}
    return None


def _turned_down(allowed: object, reason: str) -> dict[str, Any] | None:
    kinds = allowed if isinstance(allowed, list) else []
    for kind in ("reject", "respond"):
        if kind in kinds:
            return {"type": kind, "message": reason}
    return None


def _cancelled(form: object) -> dict[str, Any] | None:
    model = answer_of(form)
    cancel = {"decision": "cancel"}
    if model is None:
        return None
    try:
        TypeAdapter(model).validate_python(cancel)
    except ValidationError:
        return None
    return cancel


async def withdraw(request: HttpRequest) -> JSONResponse:
    """POST /threads/{thread_id}/withdraw `{"reason": "..."}`: take back every approval the thread waits on.

    The thread's owner or a supervisor; 404 for a thread the caller cannot see, 403 for anyone
    else, 409 when nothing waits, a run is on the thread or an approval allows no rejection.
    """
    user, thread_id = request_user(request), request.path_params["thread_id"]
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        body = None
    reason = body.get("reason", "") if isinstance(body, dict) and not set(body) - {"reason"} else None
    if (
        not isinstance(reason, str)
        or len(reason) > MAX_REASON_CHARS
        or not reason.replace("\n", " ").isprintable()
    ):
        detail = (
            f'Send {{}} or {{"reason": "..."}} (printable text of at most {MAX_REASON_CHARS} characters).'
        )
        return JSONResponse({"detail": detail}, status_code=422)
    thread = await visible_thread(thread_id, user)
    if thread is None:
        return JSONResponse({"detail": f"Thread {thread_id} not found."}, status_code=404)
    try:
        withdrawn = await withdraw_on(thread, user, reason.strip())
    except ResumeRefused as refusal:  # on the record, as a refused resume is
        await audit.write([audit.refused([], {"withdraw": reason}, user, thread_id, refusal.message)])
        return JSONResponse({"detail": refusal.message}, status_code=refusal.status)
    return JSONResponse({"withdrawn": withdrawn})


async def withdraw_on(thread: dict[str, Any], user: User, reason: str) -> list[ApprovalReceipt]:
    """Withdraw every approval `thread` waits on, as `user`; the signed receipts.

    Raises:
        ResumeRefused: 403 not the owner nor a supervisor; 409 nothing to withdraw, a run on the
            thread, an approval that allows no rejection, or one answered meanwhile.
    """
    thread_id, owner = str(thread["thread_id"]), (thread.get("metadata") or {}).get("owner")
    if owner != user.identity and user.role != "supervisor":
        raise ResumeRefused(403, "Only the thread's owner or a supervisor may withdraw its approvals.")
    client = get_client()
    with as_server():
        state = dict(await client.threads.get_state(thread_id))
        pending = await threads.escalated(thread_id, Pending.from_state(state))
        graph_id = await threads.graph_of(client, thread_id)
    if thread.get("status") == "busy" or not pending or graph_id is None:
        raise ResumeRefused(409, f"Thread {thread_id} waits for no approval now (or a run is on it).")
    why = f"Withdrawn by {user.identity}" + (f": {reason}" if reason else ".")
    answers = {p.id: rejection(p, why) for p in pending}
    if kept := [p.subject for p in pending if answers[p.id] is None]:
        msg = f"{', '.join(kept)} cannot be withdrawn: it takes no rejection nor cancel; answer it instead."
        raise ResumeRefused(409, msg)
    command: dict[str, Any] = {"resume": answers}
    now = datetime.now(UTC).isoformat()
    receipts = [r for p in pending for r in receipts_of(p, user, why, now)]
    catalog = await catalog_of(graph_id)
    decision = await asyncio.to_thread(
        store.accept,
        Request.of(thread_id, user, command, None),
        command,
        list(answers),
        receipts,
        catalog=catalog,
    )
    # The assistant of the thread's last run (server-written metadata), so the thread stays with the
    # assistant it was asked through; the door falls back to the recorded graph when it is gone.
    assistant_id = (thread.get("metadata") or {}).get("assistant_id") or graph_id
    try:
        await server_runs.start_decided(
            thread,
            decision.command,
            decided_by=user,
            pending=pending,
            receipts=decision.receipts,
            assistant_id=assistant_id,
            state=state,
        )
    except server_runs.RunNotStarted as not_started:
        await not_applied(decision, not_started.why)
        msg = (
            f"The withdrawal was recorded but cannot be applied: {not_started.why}. It is on the thread's "
            "trail as not applied, and the approvals wait again for an answer."
        )
        raise ResumeRefused(409, msg) from None
    metrics.observe(audit.as_records(thread_id, decision.receipts))
    return decision.receipts


async def not_applied(decision: Decision, why: str) -> None:
    """Give up `decision`, whose run cannot start: a `not_applied` record on the trail, its claims released.

    Its interrupts may be answered again; the reconciler does not try it again.
    """
    message = f"{decision.describe()} was not applied: {why}; the approval may be answered again."
    record = audit.not_applied(decision.thread_id, decision.interrupt_ids, decision.receipts, message)
    await asyncio.to_thread(store.give_up, decision, record)
    TABLE.mark(decision.thread_id)


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
            roles=user.memberships,
            decided_at=now,
        )
        for action in actions
        if isinstance(action, dict)
    ]
