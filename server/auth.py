"""LangGraph custom auth: who is calling, what they may see, and which resumes they may send.

Every resume path (runs/wait, runs/stream, background runs, `/threads/{id}/commands`)
becomes a run, so the `threads.create_run` handler is the one gate: it reads the thread's
pending interrupts in-process, checks the resume (`server.resume_gate`), records the
decision, and attaches the receipts to the command so they land in the thread's state.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth, get_client

from hitl.settings import get_settings
from server import allowances, audit, claims, overrides
from server.access import as_server, is_server
from server.pending_index import INDEX
from server.resume_gate import Pending, ResumeRefused, check_resume
from server.users import User, directory

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """Map `Authorization: Bearer <token>` to a known user, or answer 401."""
    scheme, _, token = (authorization or "").partition(" ")
    user = directory().authenticate(token.strip()) if scheme.lower() == "bearer" else None
    if user is None:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="Send Authorization: Bearer <token> with a known token."
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
    """A new thread belongs to its creator."""
    metadata = value.setdefault("metadata", {})
    metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}


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
    """State writes, metadata patches and cancels: see `changeable_thread`."""
    allowed = await changeable_thread(ctx, dict(value))
    _mark(value.get("thread_id"))
    return allowed


@auth.on.threads.delete
async def on_thread_delete(
    ctx: Auth.types.AuthContext, value: Auth.types.ThreadsDelete
) -> Auth.types.FilterType | None:
    """Deleting a thread or run: see `changeable_thread`."""
    allowed = await changeable_thread(ctx, dict(value))
    _mark(value.get("thread_id"))
    return allowed


async def changeable_thread(
    ctx: Auth.types.AuthContext, value: dict[str, Any]
) -> Auth.types.FilterType | None:
    """Owners change their threads (metadata, cancels); only a supervisor (or the server) writes state."""
    user = caller(ctx)
    if user.role == "supervisor" or is_server():
        return None
    if "owner" in (value.get("metadata") or {}):
        raise refuse(403, "Only a supervisor may change a thread's owner.")
    is_state_write = value.get("action") is None and not value.get("metadata")
    if is_state_write and value.get("thread_id") is not None and await _pending(str(value["thread_id"])):
        raise refuse(
            403, "This thread is waiting for an approval; only a supervisor may change its state now."
        )
    if is_state_write:  # the state holds approval allowances; they come only from the server
        raise refuse(403, "Only a supervisor may write a thread's state directly; send a message instead.")
    return {"owner": ctx.user.identity}


@auth.on.threads.create_run
async def on_run(ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate) -> Auth.types.FilterType | None:
    """Gate every run: resumes are checked, authorised and audited; new input waits its turn."""
    user = caller(ctx)
    thread_id = value.get("thread_id")
    kwargs = value.get("kwargs") or {}
    command = kwargs.get("command")
    if command is not None and not any(command.get(k) is not None for k in ("resume", "update", "goto")):
        raise refuse(422, "A command needs a resume (the answer), update or goto; this one is empty.")
    await overrides.admit(user, value)
    thread = await _thread(str(thread_id)) if thread_id is not None else None
    if thread is None:
        value.setdefault("metadata", {})["owner"] = user.identity
        if command and command.get("resume") is not None:
            raise refuse(409, "This thread has no pending approval to answer.")
        _mark(thread_id)
        return None
    owner = (thread.get("metadata") or {}).get("owner")
    if owner != user.identity and not user.is_staff:
        raise refuse(404, f"Thread {thread_id} not found.")
    pending = [p.escalated(thread.get("metadata") or {}) for p in await _pending(str(thread_id), thread)]
    if command and "resume" in command:
        if thread.get("status") == "busy":
            raise refuse(409, "This thread is running; try again when it pauses.")
        await gate_resume(user, str(thread_id), owner, pending, command)
        _mark(thread_id)
        return None
    if pending and user.role != "supervisor":
        waiting = ", ".join(p.subject for p in pending)
        raise refuse(
            409,
            f"This thread is waiting for {len(pending)} approval(s) ({waiting}); "
            "answer them before sending a new message.",
        )
    if owner != user.identity and user.role != "supervisor":
        raise refuse(403, "Only the thread's owner may start a run on it.")
    _mark(thread_id)
    return None


def _mark(thread_id: object) -> None:
    """A run or change on `thread_id` is let through: the inbox re-reads it until it settles."""
    if thread_id is not None:
        INDEX.mark(str(thread_id))


async def gate_resume(
    user: User, thread_id: str, owner: str | None, pending: list[Pending], command: dict[str, Any]
) -> None:
    """Check, claim, audit and receipt one resume; raise an HTTP refusal otherwise.

    Used by the auth handler for people and by the watcher for the system actor, so both
    pass the same checks. The claim (set without an `await` between check and set) makes a
    person's answer and an expiry racing for one interrupt end in exactly one outcome.
    """
    try:
        _no_rewrites(user, command)
        accepted = check_resume(
            command["resume"], pending, user=user, owner=owner, max_bytes=get_settings().max_resume_bytes
        )
        allowed = allowances.granted(thread_id, accepted, pending, user)
        claims.take([item.pending.id for item in accepted], user.identity)
    except ResumeRefused as refusal:
        await audit.write(
            get_client(), [audit.refused(pending, command.get("resume"), user, thread_id, refusal.message)]
        )
        raise refuse(refusal.status, refusal.message) from None
    receipts = audit.receipts(accepted, user)
    given = command.get("update")
    update: dict[str, Any] = given if isinstance(given, dict) else {}
    command["update"] = {**update, "approval_receipts": [*update.get("approval_receipts", []), *receipts]}
    if allowed:
        command["update"][allowances.STATE_KEY] = {a["id"]: a for a in allowed}
    await audit.write(
        get_client(),
        [
            *audit.as_records(thread_id, receipts),
            *(audit.allowance_change(thread_id, a, user, "allow") for a in allowed),
        ],
    )


def _no_rewrites(user: User, command: dict[str, Any]) -> None:
    if (command.get("update") or command.get("goto")) and user.role != "supervisor":
        raise ResumeRefused(403, "Only a supervisor may send update or goto with a resume.")


async def _thread(thread_id: str) -> dict[str, Any] | None:
    try:
        with as_server():
            return dict(await get_client().threads.get(thread_id))
    except Exception as error:
        if getattr(getattr(error, "response", None), "status_code", None) == 404:  # noqa: PLR2004
            return None
        raise


async def _pending(thread_id: str, thread: dict[str, Any] | None = None) -> list[Pending]:
    """What really waits on a thread: read from its state when its record lists anything."""
    thread = thread if thread is not None else await _thread(thread_id)
    if not thread or not Pending.from_thread(thread):
        return []
    with as_server():
        state = await get_client().threads.get_state(thread_id)
    return Pending.from_state(dict(state))


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
    """The audit trail is written by the server only and read through `/audit/{thread_id}`."""
    namespace = tuple(value.get("namespace") or ())
    if is_server():
        return
    if namespace[:1] == (audit.NAMESPACE,):
        raise refuse(403, "The audit trail is read through GET /audit/{thread_id}.")
    if namespace[:1] != (ctx.user.identity,) and caller(ctx).role != "supervisor":
        raise refuse(403, "Store namespaces start with your own user name.")
