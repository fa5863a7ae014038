"""LangGraph custom auth: who is calling, what they may see, and which resumes they may send.

Every resume path (runs/wait, runs/stream, background runs, `/threads/{id}/commands`)
becomes a run, so the `threads.create_run` handler is the one gate: it reads the thread's
pending interrupts in-process, checks the resume (`server.decisions.checks`), records the
decision, and attaches the receipts to the command so they land in the thread's state.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from langgraph_sdk import Auth, get_client

from hitl.gate.caller import ACTING_FOR_KEY, REQUESTED_BY_KEY
from hitl.gate.trusted_state import trusted_receipts
from hitl.policy import quorum
from hitl.proof import receipt_check
from hitl.settings import get_settings
from server.admission import allowlist, overrides, waiting
from server.coordination import run_starts
from server.coordination.pending_index import INDEX
from server.decisions import allowances, store
from server.decisions.checks import Pending, ResumeRefused, check_resume, edit_policy
from server.identity.access import as_server, is_not_found, is_server
from server.identity.tokens import identify, token_of
from server.identity.users import ROLES, TokenRefused, User, directory
from server.insight import metrics
from server.records import audit, threads
from server.runtime.checkpointer import shared_runtime

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from hitl.contracts.shapes import ApprovalReceipt

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None, headers: dict[bytes, bytes]) -> Auth.types.MinimalUserDict:
    """Map the bearer token (HITL_USERS, else an OIDC JWT) to a user, or answer 401."""
    token = token_of(authorization, headers)
    try:
        user = await identify(token) if token else None
    except TokenRefused as refusal:
        raise Auth.exceptions.HTTPException(status_code=401, detail=refusal.message) from None
    if user is None:
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail="Send Authorization: Bearer <token> (or x-api-key: <token>) with a known token.",
        )
    return {"identity": user.identity, "role": user.role, "permissions": user.roles}  # type: ignore[typeddict-unknown-key]


def caller(ctx: Auth.types.AuthContext) -> User:
    """The `User` behind an auth context."""
    return User(identity=ctx.user.identity, role=ctx.user["role"])


def refuse(status: int, message: str) -> Auth.exceptions.HTTPException:
    """An HTTP refusal with a message for the caller."""
    return Auth.exceptions.HTTPException(status_code=status, detail=message)


@auth.on.threads.create
async def on_thread_create(
    ctx: Auth.types.AuthContext, value: Auth.types.ThreadsCreate
) -> Auth.types.FilterType:
    """A new thread belongs to its creator; server-owned metadata keys are refused."""
    try:
        allowlist.check_metadata(value.get("metadata"), "metadata")
    except ResumeRefused as refusal:
        raise refuse(refusal.status, refusal.message) from None
    _owned_by(value.setdefault("metadata", {}), caller(ctx))
    return {"owner": ctx.user.identity}


OWNER_ROLE_KEY = "hitl_owner_role"
"""Thread metadata the server writes beside `owner`: the owner's role when the thread got that owner.

A run works for the thread's owner (`_act_for`). An owner the directory lists acts with the role
it has now; one it does not (a person signed in with OIDC) with the role recorded here, which only
the server writes (clients may not set `hitl*` metadata).
"""


def _owned_by(metadata: dict[str, Any], user: User) -> None:
    """Make `user` the owner in `metadata`, with their role."""
    metadata["owner"] = user.identity
    metadata[OWNER_ROLE_KEY] = user.role


def _owner(thread: dict[str, Any]) -> User:
    """The thread's owner as its runs act for them (see `OWNER_ROLE_KEY`)."""
    metadata = thread.get("metadata") or {}
    owner, role = metadata.get("owner"), metadata.get(OWNER_ROLE_KEY)
    if owner and role in ROLES and directory().named(str(owner)) is None:
        return User(identity=str(owner), role=role)
    return _person(owner)


def visible_threads(ctx: Auth.types.AuthContext) -> Auth.types.FilterType | None:
    """Requesters see their own threads; reviewers and supervisors see every thread."""
    return None if is_server() or caller(ctx).is_staff else {"owner": ctx.user.identity}


@auth.on.threads.read
async def on_thread_read(
    ctx: Auth.types.AuthContext,
    value: Auth.types.ThreadsRead,  # noqa: ARG001
) -> Auth.types.FilterType | None:
    """Reading a thread: see `visible_threads`."""
    return visible_threads(ctx)


@auth.on.threads.search
async def on_thread_search(
    ctx: Auth.types.AuthContext,
    value: Auth.types.ThreadsSearch,  # noqa: ARG001
) -> Auth.types.FilterType | None:
    """Searching threads: see `visible_threads`."""
    return visible_threads(ctx)


@auth.on.threads.update
async def on_thread_update(
    ctx: Auth.types.AuthContext, value: Auth.types.ThreadsUpdate
) -> Auth.types.FilterType | None:
    """Metadata patches and cancels by the owner; state writes by a supervisor; server keys by nobody.

    Server-owned metadata keys (graph, escalations, `hitl*`) are refused to everyone, and the
    owner is changed by a supervisor only.
    """
    if is_server():
        return None
    user = caller(ctx)
    metadata = value.get("metadata") or {}
    try:
        allowlist.check_metadata(
            {k: v for k, v in metadata.items() if not (k == "owner" and user.role == "supervisor")},
            "metadata",
        )
    except ResumeRefused as refusal:
        raise refuse(refusal.status, refusal.message) from None
    _mark(value.get("thread_id"))
    if user.role == "supervisor":
        if "owner" in metadata:  # a new owner: runs act for them, with their role (a requester if unknown)
            _owned_by(value["metadata"], _person(metadata["owner"]))
        return None
    if value.get("action") is None and not metadata:  # a state write: allowances, receipts live there
        raise refuse(403, "Only a supervisor may write a thread's state directly; send a message instead.")
    return {"owner": ctx.user.identity}


@auth.on.threads.delete
async def on_thread_delete(
    ctx: Auth.types.AuthContext, value: Auth.types.ThreadsDelete
) -> Auth.types.FilterType | None:
    """Owners delete their own threads (others' are 404, whatever they hold); supervisors any."""
    _mark(value.get("thread_id"))
    if is_server() or caller(ctx).role == "supervisor":
        return None
    return {"owner": ctx.user.identity}


@auth.on.threads.create_run
async def on_run(ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate) -> Auth.types.FilterType | None:
    """Gate every run: only allowed shapes, only allowed agents; resumes checked, authorised, audited.

    See `server.admission.allowlist` for what a client may send. New input never discards a pending
    approval and never joins a run in flight; a resume is checked against the interrupts of the
    checkpoint it will run from.
    """
    if is_server():  # the server's own runs (the watcher's expiries, channels) passed `gate_resume` already
        return None
    return await admit_run_as(caller(ctx), value)


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
    graph_id = await overrides.graph_id_of(str(value.get("assistant_id")))
    card = overrides.card_for(graph_id)
    if card is not None and not card.may_run(user.roles):
        raise refuse(
            403, f"{user.identity} ({user.role}) may not run {graph_id}: it is for {card.who_may_run}."
        )
    await overrides.admit(user, value)
    thread = await _thread(str(thread_id)) if thread_id is not None else None
    if thread is None:
        await _first_run(user, value, graph_id, admitted)
        return None
    command = (value.get("kwargs") or {}).get("command") or {}
    owner = (thread.get("metadata") or {}).get("owner")
    if owner != user.identity and not user.is_staff:
        raise refuse(404, f"Thread {thread_id} not found.")
    await _same_graph(str(thread_id), graph_id)
    if thread.get("status") == "busy":
        raise refuse(409, "This thread is running; try again when it pauses.")
    state, rewrites = await _start_state(user, str(thread_id), admitted)
    pending, receipts = await _waiting(str(thread_id), state, admitted)
    if not admitted.resume and pending:
        raise refuse(409, waiting.refusal(pending, owner))
    if not admitted.resume and owner != user.identity and user.role != "supervisor":
        raise refuse(403, "Only the thread's owner may start a run on it.")
    async with _starting(str(thread_id), value):  # before a decision is accepted: it must get its run
        if admitted.resume:
            receipts += await gate_resume(
                user, str(thread_id), owner, pending, command, graph_id=graph_id, run=value
            )
        _act_for(value, user if owner == user.identity else _owner(thread))
        _asked_by(value, _askers(pending, owner, user) if admitted.resume else {str(owner), user.identity})
        _approved_so_far(value, receipts)
        _tell_run(value, receipt_check.RECEIPTS_KEY, receipt_check.latest_signed(receipts))
        await _audit_rewrites(user, str(thread_id), graph_id, rewrites)
        await threads.record_graph(str(thread_id), value.get("assistant_id"))
    _mark(thread_id)
    return None


async def _start_state(
    user: User, thread_id: str, admitted: allowlist.Admitted
) -> tuple[dict[str, Any], list[str]]:
    """The state a run starts from (the head, or the checkpoint a supervisor forks from); its rewrites.

    A run naming the thread's head (as `useStream` does with every resume) starts from the head.
    """
    state = await _state(thread_id)
    head = (state.get("checkpoint") or {}).get("checkpoint_id")
    try:
        fork = allowlist.fork_of(admitted.checkpoint, head, supervisor=user.role == "supervisor")
    except ResumeRefused as refusal:
        raise refuse(refusal.status, refusal.message) from None
    if fork is None:
        return state, admitted.rewrites
    return await _state(thread_id, fork), [*admitted.rewrites, f"starts from checkpoint {fork}"]


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
    thread = await _thread(thread_id)
    owner = ((thread or {}).get("metadata") or {}).get("owner")
    if thread is None or (owner != user.identity and not user.is_staff):
        return
    if pending := await threads.escalated(thread_id, Pending.from_state(await _state(thread_id))):
        raise refuse(409, waiting.refusal(pending, owner))


@asynccontextmanager
async def _starting(thread_id: str, value: Auth.types.RunsCreate) -> AsyncIterator[None]:
    """Among replicas, hold the thread for this run (`server.coordination.run_starts`) while it is admitted.

    Claimed before a resume's decision is accepted, so an accepted decision never meets a
    thread another run took meanwhile; let go again when the admission refuses the run. One
    process needs no row.
    """
    if not shared_runtime():
        yield
        return
    run_id = str(value.get("run_id"))
    try:
        with as_server():
            await run_starts.claim(get_client(), thread_id, run_id)
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


def _person(identity: object) -> User:
    """`identity` as the directory lists them now; anyone else is a requester (the least they could be)."""
    return directory().named(str(identity)) or User(identity=str(identity or ""), role="requester")


def _tell_run(value: Auth.types.RunsCreate, key: str, told: object) -> None:
    """Set the server's word `told` under `key` in the run's `configurable` (clients may not set hitl_*)."""
    kwargs = value.get("kwargs")
    config = kwargs.get("config") if isinstance(kwargs, dict) else None
    if isinstance(config, dict):
        config.setdefault("configurable", {})[key] = told


def _act_for(value: Auth.types.RunsCreate, person: User) -> None:
    """Tell the run whose records it works on (`hitl.gate.caller.acting_for`): the thread's owner."""
    _tell_run(value, ACTING_FOR_KEY, {"identity": person.identity, "roles": person.roles})


def _approved_so_far(value: Auth.types.RunsCreate, receipts: list[ApprovalReceipt]) -> None:
    """Tell the run who approved each call that needs several approvers (`quorum`), from the receipts."""
    _tell_run(value, quorum.APPROVALS_KEY, quorum.tally(receipts))


async def _first_run(
    user: User, value: Auth.types.RunsCreate, graph_id: str, admitted: allowlist.Admitted
) -> None:
    """A run that creates its thread (or a stateless one): its caller owns the thread."""
    thread_id = value.get("thread_id")
    _owned_by(value.setdefault("metadata", {}), user)
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
        await threads.record_graph(str(thread_id), value.get("assistant_id"))
    _mark(thread_id)


async def _same_graph(thread_id: str, graph_id: str) -> None:
    """A thread runs one agent: a run (or resume) with another graph would misread its state."""
    with as_server():
        recorded = await threads.graph_of(get_client(), thread_id)
    if recorded is not None and recorded != graph_id:
        raise refuse(422, f"Thread {thread_id} belongs to the {recorded} agent; run it with {recorded}.")


async def _audit_rewrites(user: User, thread_id: str, graph_id: str, rewrites: list[str]) -> None:
    """A supervisor's writes beyond messages and resumes are let through, and audited."""
    if rewrites:
        await audit.write([audit.state_write(thread_id, graph_id, user, rewrites)])


def _mark(thread_id: object) -> None:
    """A run or change on `thread_id` is let through: the inbox re-reads it until it settles."""
    if thread_id is not None:
        INDEX.mark(str(thread_id))


@metrics.timed("resume")
async def gate_resume(  # noqa: PLR0913  (who answers what, where, in which run)
    user: User,
    thread_id: str,
    owner: str | None,
    pending: list[Pending],
    command: dict[str, Any],
    *,
    graph_id: str | None = None,
    run: Auth.types.RunsCreate | None = None,
) -> list[ApprovalReceipt]:
    """Check, claim, audit and receipt one resume (its receipts); raise an HTTP refusal otherwise.

    Used by the auth handler for people and by the watcher for the system actor, so both
    pass the same checks. Accepting is one transaction (`server.decisions.store.accept`): the claim
    (all or nothing, in the shared database), the signed receipts, their audit records and the
    command to apply, so answers racing for one interrupt, on any replica, end in exactly one
    outcome, and an accepted one is applied even if this request goes no further. The same
    answer sent again by the same person (after a timeout or a 500) is that decision again:
    `run` becomes the run applying it, with the same receipts, or it is refused as applied.
    An edit is authorised on its edited arguments, by `graph_id`'s policy.
    """
    catalog = await overrides.catalog_of(graph_id) if graph_id else None
    try:
        _no_rewrites(user, command)
        request = store.Request.of(thread_id, user, command, run)  # type: ignore[arg-type]
        if (replayed := await _sent_again(request, pending, command)) is not None:
            return replayed
        accepted = await asyncio.to_thread(  # an edit's args check may read the business records
            check_resume,
            command["resume"],
            pending,
            user=user,
            owner=owner,
            max_bytes=get_settings().max_resume_bytes,
            policy=edit_policy(catalog),
        )
        allowed = allowances.granted(thread_id, accepted, pending, user)
        allowing = [audit.allowance_change(thread_id, a, user, "allow") for a in allowed]
        decision = await asyncio.to_thread(
            store.accept,
            request,
            command,
            [item.pending.id for item in accepted],
            audit.receipts(accepted, user, catalog.approvals_needed if catalog else None),
            catalog=catalog,
            allowed=allowed,
            recorded_too=allowing,
        )
    except store.Replayed as replayed:
        raise refuse(replayed.status, replayed.message) from None
    except ResumeRefused as refusal:
        await audit.write([audit.refused(pending, command.get("resume"), user, thread_id, refusal.message)])
        raise refuse(refusal.status, refusal.message) from None
    _apply(command, decision.command)
    metrics.observe([*audit.as_records(thread_id, decision.receipts), *allowing])
    return decision.receipts


async def _sent_again(
    request: store.Request, pending: list[Pending], command: dict[str, Any]
) -> list[ApprovalReceipt] | None:
    """The receipts of the sender's own accepted decision this resume repeats, now applied by this run.

    None when it repeats no decision of theirs (the checks decide it). A repeat of a decision
    already applied, or whose run may still appear (`store.GRACE_SECONDS`), is refused
    (`store.Replayed`), and never recorded as a second decision.
    """
    found = await asyncio.to_thread(
        partial(store.holding, thread_id=request.thread_id),
        store.targets(command.get("resume"), pending),
    )
    mine = [d for d in found if d.sent_again_by(request)]
    if not mine and not pending:  # a bare answer after its interrupt was applied
        latest = await asyncio.to_thread(store.latest_of, request)
        mine = [latest] if latest is not None and latest.state != "failed" else []
    if not mine:
        return None
    decision = mine[0]
    still_open = {p.id for p in pending}
    if not still_open.intersection(decision.interrupt_ids) or decision.state == "applied":
        msg = f"Already applied: {decision.describe()}. Nothing was done again."
        raise store.Replayed(409, msg)
    if not await asyncio.to_thread(store.take_over, decision, request.run_id):
        msg = (
            f"This answer was already accepted ({decision.describe()}) and is being applied; "
            "nothing more to send."
        )
        raise store.Replayed(409, msg)
    _apply(command, decision.command)
    return decision.receipts


def _apply(command: dict[str, Any], accepted: dict[str, Any]) -> None:
    """Make the run's `command` the accepted one (its resume as checked, sealed receipts in its update)."""
    command.clear()
    command.update(accepted)


def _no_rewrites(user: User, command: dict[str, Any]) -> None:
    if (command.get("update") or command.get("goto")) and user.role != "supervisor":
        raise ResumeRefused(403, "Only a supervisor may send update or goto with a resume.")


async def _thread(thread_id: str) -> dict[str, Any] | None:
    try:
        with as_server():
            return dict(await get_client().threads.get(thread_id))
    except Exception as error:
        if is_not_found(error):
            return None
        raise


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


async def _state(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    """A thread's state as the server sees it (at `checkpoint_id`, for a fork).

    Pending approvals are read from here, never from the thread record: a copied thread
    reports `idle` while its state still holds the interrupt, and a record can list per-call
    interrupts already answered.
    """
    with as_server():
        return dict(await get_client().threads.get_state(thread_id, checkpoint_id=checkpoint_id))


@auth.on.assistants
async def on_assistants(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:  # noqa: ARG001
    """Everyone may use the served assistants; only supervisors may change them."""
    if ctx.action not in {"read", "search"} and caller(ctx).role != "supervisor":
        raise refuse(403, "Only a supervisor may create or change assistants.")


@auth.on.crons
async def on_crons(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:  # noqa: ARG001
    """Scheduled runs could skip a person: supervisors only."""
    if caller(ctx).role != "supervisor":
        raise refuse(403, "Only a supervisor may manage scheduled runs.")


@auth.on.store
async def on_store(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Every caller works in the namespace named after them; the audit trail and records are the server's.

    An empty or foreign prefix is refused to every role (a search with an empty prefix would
    otherwise list the audit trail and the server's records).
    """
    namespace = tuple(value.get("namespace") or ())
    if is_server():
        return
    if namespace[:1] == (audit.NAMESPACE,):
        raise refuse(403, "The audit trail is read through GET /audit/{thread_id}.")
    if namespace[:1] == (threads.NAMESPACE,):
        raise refuse(403, f"The {threads.NAMESPACE} namespace is the server's own.")
    if namespace[:1] != (ctx.user.identity,):
        raise refuse(403, "Store namespaces start with your own user name.")
