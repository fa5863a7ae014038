"""LangGraph custom auth (`langgraph.json`: `server.http.auth:auth`): who is calling, what they may see.

Thin handlers: the caller comes from `server.identity.tokens`; threads are visible to their
owner and to staff; every run is admitted by the run gate (`server.admission.runs`), which
decides a resume through `server.decisions.pipeline`; assistants, crons and the Store have
their own walls here. A refusal is an HTTP status with words for the caller.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth

from server.admission import allowlist
from server.admission.deletions import check_thread_deletion
from server.admission.owners import owned_by, person
from server.admission.runs import admit_run_as, refuse
from server.decisions import server_runs
from server.decisions.pending import ResumeRefused
from server.http.inbox_marks import mark
from server.identity.access import is_server
from server.identity.tokens import identify, token_of
from server.identity.users import TokenRefused, User, authenticated
from server.records import audit, threads

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
    return {"identity": user.identity, "role": user.role, "permissions": user.memberships}  # type: ignore[typeddict-unknown-key]


def caller(ctx: Auth.types.AuthContext) -> User:
    """The `User` behind an auth context, with their groups."""
    return authenticated(ctx.user)


@auth.on.threads.create
async def on_thread_create(
    ctx: Auth.types.AuthContext, value: Auth.types.ThreadsCreate
) -> Auth.types.FilterType:
    """A new thread belongs to its creator; server-owned metadata keys are refused."""
    try:
        allowlist.check_metadata(value.get("metadata"), "metadata")
    except ResumeRefused as refusal:
        raise refuse(refusal.status, refusal.message) from None
    owned_by(value.setdefault("metadata", {}), caller(ctx))
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
    mark(value.get("thread_id"))
    if user.role == "supervisor":
        if "owner" in metadata:  # a new owner: runs act for them, with their role (a requester if unknown)
            owned_by(value["metadata"], person(metadata["owner"]))
        return None
    if value.get("action") is None and not metadata:  # a state write: allowances, receipts live there
        raise refuse(403, "Only a supervisor may write a thread's state directly; send a message instead.")
    return {"owner": ctx.user.identity}


@auth.on.threads.delete
async def on_thread_delete(
    ctx: Auth.types.AuthContext, value: Auth.types.ThreadsDelete
) -> Auth.types.FilterType | None:
    """Owners delete their own threads (others' are 404, whatever they hold); supervisors any.

    A thread holding a pending approval is not deleted (409 until it is withdrawn), and each
    deletion is recorded in the thread's trail once the engine made it (`server.admission.deletions`);
    a prune (`thread_ids`) is one check for all its threads.
    """
    mark(value.get("thread_id"))
    if is_server():
        return None
    many = dict(value).get("thread_ids")  # POST /threads/prune sends a list
    ids = [str(t) for t in many] if isinstance(many, list) else [str(value.get("thread_id"))]
    await check_thread_deletion(caller(ctx), ids, "pruned" if isinstance(many, list) else "deleted")
    if caller(ctx).role == "supervisor":
        return None
    return {"owner": ctx.user.identity}


@auth.on.threads.create_run
async def on_run(ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate) -> Auth.types.FilterType | None:
    """Gate every run: only allowed shapes, only allowed agents; resumes checked, authorised, audited.

    See `server.admission.allowlist` for what a client may send. New input never discards a pending
    approval and never joins a run in flight; a resume is checked against the interrupts of the
    checkpoint it will run from.
    """
    if is_server():  # the server's own runs: only through their door, which names whose records they work on
        server_runs.admit(value)
        return None
    return await admit_run_as(caller(ctx), value)


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
