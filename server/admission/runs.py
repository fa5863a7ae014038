"""The run gate: what a run must pass before it starts, for every way a run is made.

Every resume path (runs/wait, runs/stream, background runs, `/threads/{id}/commands`) becomes a
run, so admitting a run is the one gate: only allowed shapes (`allowlist`) of an agent the
caller may run, a thread they may use, a policy override they may send; new input never passes
a pending approval by and never joins a run in flight; a resume is decided by
`server.decisions.pipeline` against the checkpoint it will run from. Then the run is told the
server's word (`tell`: whom it acts for, who asked, who approved, the latest receipts, who decides an
escalated call), the same for the runs the server starts itself, which pass their own door
(`server.decisions.server_runs`) and are admitted here too when a person's answer makes them.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from langgraph_sdk import Auth, get_client

from hitl.gate.caller import ACTING_FOR_KEY, REQUESTED_BY_KEY
from hitl.gate.deciders import ESCALATED_KEY
from hitl.gate.trusted_state import trusted_receipts
from hitl.policy import quorum
from hitl.proof import receipt_check
from hitl.settings import get_settings
from server.admission import allowlist, overrides, run_reads, waiting
from server.admission.owners import owned_by, owner_of
from server.coordination import run_starts
from server.decisions import pipeline
from server.decisions.pending import Pending, ResumeRefused
from server.http.inbox_marks import mark
from server.identity.access import as_server
from server.records import audit, threads
from server.runtime.checkpointer import shared_runtime

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from hitl.contracts.records import ApprovalReceipt
    from server.identity.users import User


def refuse(status: int, message: str) -> Auth.exceptions.HTTPException:
    """An HTTP refusal with a message for the caller."""
    return Auth.exceptions.HTTPException(status_code=status, detail=message)


async def admit_run_as(user: User, value: Auth.types.RunsCreate) -> Auth.types.FilterType | None:
    """`on_run`'s checks for `user`: also for the runs the server starts for a person's answer.

    The server's door (`server.decisions.server_runs.start_admitted`) builds `value` as the engine
    would (thread_id, assistant_id, run_id, kwargs with the command and config), admits it here,
    then creates the run with the config written here.
    """
    thread_id = value.get("thread_id")
    key = str(thread_id)
    if thread_id is not None and key in _ADMITTING:
        raise refuse(409, "Another run is being started on this thread; try again when it pauses.")
    if thread_id is not None:
        _ADMITTING.add(key)
    try:
        return await _admit_run(user, value)
    finally:
        # No await runs between here and the server marking the thread busy (or inserting the
        # run): a second run's handler sees this thread either admitting or busy, never idle.
        _ADMITTING.discard(key)


_ADMITTING: set[str] = set()
"""Threads whose run creation this process is checking right now (replicas: `server.coordination.run_starts`).
"""


async def _admit_run(user: User, value: Auth.types.RunsCreate) -> Auth.types.FilterType | None:
    """`on_run` for one run at a time per thread."""
    thread_id = value.get("thread_id")
    try:
        admitted = allowlist.admit(user, value, max_input_bytes=get_settings().max_input_bytes)
    except ResumeRefused as refusal:
        await _no_pending(user, value)
        raise refuse(refusal.status, refusal.message) from None
    graph_id, thread = await run_reads.graph_and_thread(value)
    card = overrides.card_for(graph_id)
    if card is not None and not card.may_run(user.memberships):
        raise refuse(
            403, f"{user.identity} ({user.role}) may not run {graph_id}: it is for {card.who_may_run}."
        )
    await overrides.admit(user, value)
    if thread is None:
        await _first_run(user, value, graph_id, admitted)
        return None
    command = (value.get("kwargs") or {}).get("command") or {}
    owner = (thread.get("metadata") or {}).get("owner")
    if owner != user.identity and not user.is_staff:
        raise refuse(404, f"Thread {thread_id} not found.")
    try:
        state, rewrites = await run_reads.start_state(user, thread, graph_id, admitted)
    except ResumeRefused as refusal:
        raise refuse(refusal.status, refusal.message) from None
    (pending, receipts), ended = await asyncio.gather(
        _waiting(str(thread_id), state, admitted), run_reads.ended_head_run(str(thread_id), state)
    )
    if not admitted.resume and pending:
        raise refuse(409, waiting.refusal(pending, owner))
    if not admitted.resume and owner != user.identity and user.role != "supervisor":
        raise refuse(403, "Only the thread's owner may start a run on it.")
    async with _starting(str(thread_id), value, ended):  # before a decision is accepted: it must get its run
        if admitted.resume:
            try:
                receipts += await pipeline.decide(
                    user, str(thread_id), owner, pending, command, graph_id=graph_id, run=dict(value)
                )
            except ResumeRefused as refusal:
                raise refuse(refusal.status, refusal.message) from None
        tell(
            value,
            works_for=works_for(thread, user),
            asked_by=(askers(pending, owner, user) if admitted.resume else {str(owner), user.identity}),
            receipts=receipts,
            pending=pending,
        )
        await _audit_rewrites(user, str(thread_id), graph_id, rewrites)
        await threads.record_graph(str(thread_id), graph_id)
    mark(thread_id)
    return None


async def _no_pending(user: User, value: Auth.types.RunsCreate) -> None:
    """Refuse with 409 naming what waits, when a run that answers nothing comes while approvals wait.

    Called for a run the allowlist refused: a client that adds a tool result for the paused call
    before its text (Agent Chat UI does) learns that an approval waits, not that tool messages
    are refused. Only the thread's owner and staff are told; others learn nothing of it.
    """
    command = (value.get("kwargs") or {}).get("command")
    steers = (
        isinstance(command, dict)
        and "resume" not in command
        and (command.get("goto") or command.get("update"))
    )
    if value.get("thread_id") is None or not (command is None or steers):
        return
    thread_id = str(value["thread_id"])
    thread = await run_reads.thread_of(thread_id)
    owner = ((thread or {}).get("metadata") or {}).get("owner")
    if thread is None or (owner != user.identity and not user.is_staff):
        return
    if pending := await threads.escalated(thread_id, Pending.from_state(await run_reads.state_of(thread_id))):
        raise refuse(409, waiting.refusal(pending, owner))


@asynccontextmanager
async def _starting(thread_id: str, value: Auth.types.RunsCreate, ended: str | None) -> AsyncIterator[None]:
    """Among replicas, hold the thread for this run (`server.coordination.run_starts`) while it is admitted.

    Claimed before a resume's decision is accepted, so an accepted decision never meets a
    thread another run took meanwhile; let go again when the admission refuses the run. One
    process needs no row. `ended`: the finished run that wrote the thread's head, if known.
    """
    if not shared_runtime():
        yield
        return
    run_id = str(value.get("run_id"))
    try:
        with as_server():
            await run_starts.claim(get_client(), thread_id, run_id, ended=ended)
    except ResumeRefused as refusal:
        raise refuse(refusal.status, refusal.message) from None
    try:
        yield
    except BaseException:
        await run_starts.release(thread_id, run_id)
        raise


async def _first_run(
    user: User, value: Auth.types.RunsCreate, graph_id: str, admitted: allowlist.Admitted
) -> None:
    """A run that creates its thread (or a stateless one): its caller owns the thread."""
    thread_id = value.get("thread_id")
    owned_by(value.setdefault("metadata", {}), user)
    tell(value, works_for=user, asked_by={user.identity}, receipts=[], pending=[])
    if admitted.resume:
        raise refuse(409, "This thread has no pending approval to answer.")
    try:
        fork = allowlist.fork_of(admitted.checkpoint, None, supervisor=user.role == "supervisor")
    except ResumeRefused as refusal:
        raise refuse(refusal.status, refusal.message) from None
    rewrites = [*admitted.rewrites, *([f"starts from checkpoint {fork}"] if fork else [])]
    await _audit_rewrites(user, str(thread_id or f"run-{value.get('run_id')}"), graph_id, rewrites)
    if thread_id is not None:
        await threads.record_graph(str(thread_id), graph_id)
    mark(thread_id)


async def _audit_rewrites(user: User, thread_id: str, graph_id: str, rewrites: list[str]) -> None:
    """A supervisor's writes beyond messages and resumes are let through, and audited."""
    if rewrites:
        await audit.write([audit.state_write(thread_id, graph_id, user, rewrites)])


async def _waiting(
    thread_id: str, state: dict[str, Any], admitted: allowlist.Admitted
) -> tuple[list[Pending], list[ApprovalReceipt]]:
    """What waits in the `state` a run starts from (escalations applied), and its sealed receipts.

    New message ids are checked against that state.
    """
    try:
        allowlist.check_new_message_ids(admitted.message_ids, state)
    except ResumeRefused as refusal:
        raise refuse(refusal.status, refusal.message) from None
    values = state.get("values")
    receipts = trusted_receipts(
        values.get("approval_receipts") if isinstance(values, dict) else None, thread_id
    )
    return await threads.escalated(thread_id, Pending.from_state(state)), receipts


def tell(
    value: Mapping[str, Any],
    *,
    works_for: User,
    asked_by: set[str],
    receipts: list[ApprovalReceipt],
    pending: list[Pending],
) -> None:
    """Write the server's word into the run `value` (its `kwargs.config.configurable`): every run, one way.

    For a client's run here, for the server's own in their door (`server.decisions.server_runs`);
    the graph reads each key in one place (`hitl.gate.caller`, `hitl.policy.quorum`,
    `hitl.proof.receipt_check`, `hitl.gate.deciders`); clients may set none of them (`allowlist`).

    `works_for`: whose records the run works on, with their roles and groups (`acting_for`);
    `asked_by`: who asked for what it does (`requested_by`); `receipts`: the thread's receipts so
    far, oldest first, this run's decision last (who approved each quorum call, the latest signed
    receipt of each call); `pending`: what waits on the thread, escalations applied (who must now
    decide each escalated call).
    """
    _told(value, ACTING_FOR_KEY, {"identity": works_for.identity, "roles": works_for.memberships})
    _told(value, REQUESTED_BY_KEY, sorted(asked_by))
    _told(value, quorum.APPROVALS_KEY, quorum.tally(receipts))
    _told(value, receipt_check.RECEIPTS_KEY, receipt_check.latest_signed(receipts))
    _told(value, ESCALATED_KEY, escalated_calls(pending))


def works_for(thread: Mapping[str, Any], user: User) -> User:
    """Whose records a run on `thread` that `user` starts works on: always the thread's owner.

    `user` themselves when they own it (their roles and groups as they sign in now), else the
    owner as the server recorded them (`owner_of`).
    """
    owner = (thread.get("metadata") or {}).get("owner")
    return user if owner == user.identity else owner_of(dict(thread))


def askers(pending: list[Pending], owner: object, user: User) -> set[str]:
    """Who asked for what a resume answers: the `requested_by` of the pending approvals (else the owner)."""
    found = {
        str(p)
        for item in pending
        if isinstance(item.value, dict) and isinstance(item.value.get("requested_by"), list)
        for p in item.value["requested_by"]
    }
    return found or {str(owner or user.identity)}


def escalated_calls(pending: list[Pending]) -> dict[str, str]:
    """Who must now decide each call of an escalated interrupt, by tool call id (none: not escalated)."""
    found: dict[str, str] = {}
    for item in pending:
        if not item.escalated_to:
            continue
        value = item.value if isinstance(item.value, dict) else {}
        batch = value.get("action_requests")
        for action in batch if isinstance(batch, list) else [value]:
            call_id = action.get("tool_call_id") if isinstance(action, dict) else None
            if isinstance(call_id, str) and call_id:
                found[call_id] = item.escalated_to
    return found


def _told(value: Mapping[str, Any], key: str, told: object) -> None:
    """Set `told` under `key` in the run's `configurable` (made when the run has a config and none)."""
    kwargs = value.get("kwargs")
    config = kwargs.get("config") if isinstance(kwargs, dict) else None
    if isinstance(config, dict):
        config.setdefault("configurable", {})[key] = told
