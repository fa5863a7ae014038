"""The run gate: what a run must pass before it starts, for every way a run is made.

Every resume path (runs/wait, runs/stream, background runs, `/threads/{id}/commands`) becomes a
run, so admitting a run is the one gate: only allowed shapes (`allowlist`) of an agent the
caller may run, a thread they may use, a policy override they may send; new input never passes
a pending approval by and never joins a run in flight; a resume is decided by
`server.decisions.pipeline` against the checkpoint it will run from. Then the run is told the
server's word (whom it acts for, who asked, who approved, the latest receipts). Channels admit
the runs they start for a person here too (`admit_run_as`).
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from langgraph_sdk import Auth, get_client

from hitl.gate.caller import ACTING_FOR_KEY, REQUESTED_BY_KEY
from hitl.gate.trusted_state import trusted_receipts
from hitl.policy import quorum
from hitl.proof import receipt_check
from hitl.settings import get_settings
from server.admission import allowlist, overrides, run_reads, waiting
from server.admission.owners import owned_by, owner_of
from server.coordination import run_starts
from server.coordination.inbox_table import TABLE
from server.decisions import pipeline
from server.decisions.pending import Pending, ResumeRefused
from server.identity.access import as_server
from server.records import audit, threads
from server.runtime.checkpointer import shared_runtime

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from hitl.contracts.records import ApprovalReceipt
    from server.identity.users import User


def refuse(status: int, message: str) -> Auth.exceptions.HTTPException:
    """An HTTP refusal with a message for the caller."""
    return Auth.exceptions.HTTPException(status_code=status, detail=message)


async def admit_run_as(user: User, value: Auth.types.RunsCreate) -> Auth.types.FilterType | None:
    """`on_run`'s checks for `user`: also for runs a channel (`server.channels`) starts for a person.

    A channel builds `value` as the server would (thread_id, assistant_id, kwargs with the
    command and config), admits it here, then creates the run as the server with that config.
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
        _act_for(value, user if owner == user.identity else owner_of(thread))
        _asked_by(value, _askers(pending, owner, user) if admitted.resume else {str(owner), user.identity})
        _approved_so_far(value, receipts)
        _tell_run(value, receipt_check.RECEIPTS_KEY, receipt_check.latest_signed(receipts))
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


def _askers(pending: list[Pending], owner: object, user: User) -> set[str]:
    """Who asked for what a resume answers: the `requested_by` of the pending approvals (else the owner)."""
    askers = {
        str(p)
        for item in pending
        if isinstance(item.value, dict) and isinstance(item.value.get("requested_by"), list)
        for p in item.value["requested_by"]
    }
    return askers or {str(owner or user.identity)}


def _asked_by(value: Auth.types.RunsCreate, askers: set[str]) -> None:
    """Tell the run who asked for what it does (`caller.requested_by`); the server's word, always set."""
    _tell_run(value, REQUESTED_BY_KEY, sorted(askers))


def _tell_run(value: Auth.types.RunsCreate, key: str, told: object) -> None:
    """Set the server's word `told` under `key` in the run's `configurable` (clients may not set hitl_*)."""
    kwargs = value.get("kwargs")
    config = kwargs.get("config") if isinstance(kwargs, dict) else None
    if isinstance(config, dict):
        config.setdefault("configurable", {})[key] = told


def _act_for(value: Auth.types.RunsCreate, person: User) -> None:
    """Tell the run whose records it works on (`hitl.gate.caller.acting_for`): the thread's owner."""
    _tell_run(value, ACTING_FOR_KEY, {"identity": person.identity, "roles": person.memberships})


def _approved_so_far(value: Auth.types.RunsCreate, receipts: list[ApprovalReceipt]) -> None:
    """Tell the run who approved each call that needs several approvers (`quorum`), from the receipts."""
    _tell_run(value, quorum.APPROVALS_KEY, quorum.tally(receipts))


async def _first_run(
    user: User, value: Auth.types.RunsCreate, graph_id: str, admitted: allowlist.Admitted
) -> None:
    """A run that creates its thread (or a stateless one): its caller owns the thread."""
    thread_id = value.get("thread_id")
    owned_by(value.setdefault("metadata", {}), user)
    _act_for(value, user)
    _asked_by(value, {user.identity})
    _approved_so_far(value, [])
    _tell_run(value, receipt_check.RECEIPTS_KEY, {})
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


def mark(thread_id: object) -> None:
    """A run or change on `thread_id` is let through: the inbox re-reads it until it settles."""
    if thread_id is not None:
        TABLE.mark(str(thread_id))


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
