"""Deleting threads and assistants: nothing pending leaves, and nothing leaves unrecorded.

A thread that holds a pending approval (or a decision on one, still applying) is not deleted, nor
pruned, nor swept away with its assistant (`delete_threads`): 409 naming what waits and how to
withdraw it (`POST /threads/{id}/withdraw`, a signed `withdrawn` decision). Each deletion is a
record in the thread's trail, which staff still read after the thread is gone, written once the
engine deleted it (`DeletionRecords`): a prune or delete the engine refuses records nothing. An assistant's
deletion is audited in its own trail; a served agent's own assistant is not deleted. Not for who may
see or delete a thread (`server.http.auth`), nor for what a withdrawal does
(`server.decisions.withdrawals`).
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client
from starlette.datastructures import QueryParams
from starlette.responses import JSONResponse

from hitl.contracts.records import AuditRecord
from server.admission.assistants import caller_of, trail_of
from server.admission.bodies import HeldAnswer
from server.admission.run_reads import state_of, thread_of
from server.admission.runs import refuse
from server.decisions.pending import Pending
from server.identity.access import as_server
from server.identity.users import TokenRefused
from server.records import audit

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from server.identity.users import User

DELETED = "thread_deleted"
ASSISTANT_DELETED = "delete_assistant"
ASSISTANT = re.compile(r"^/assistants/(?P<assistant_id>[^/]+)/?$")
THREAD = re.compile(r"^/threads/(?P<thread_id>[^/]+)/?$")
PRUNE = "/threads/prune"
MOST_AT_ONCE = 1000
"""Threads one prune may name: each is read for pending approvals before any is deleted."""
SWEPT_PAGE = 1000
"""Threads of an assistant read per page when its deletion would sweep them away."""
_HELD_RECORDS: ContextVar[dict[str, AuditRecord] | None] = ContextVar("hitl_held_deletions", default=None)
"""The deletion records of the request `DeletionRecords` is around, by thread, until the engine answers."""


async def check_thread_deletion(user: User, thread_ids: list[str], how: str) -> None:
    """Refuse (409) deleting threads of which one holds a pending approval; record the deletion of the rest.

    Only threads `user` may delete are looked at (their owner's, or any for a supervisor): for
    others the engine answers 404, whatever they hold. Raises the refusal for the first thread
    that cannot go; nothing is recorded then. In a request `DeletionRecords` is around, the records
    wait for the engine's answer; elsewhere (the engine deleting a stateless run's thread) they are
    written at once.
    """
    if len(thread_ids) > MOST_AT_ONCE:
        raise refuse(
            422, f"Prune at most {MOST_AT_ONCE} threads at once (each is checked for pending approvals)."
        )
    going: list[tuple[str, dict[str, Any]]] = []
    for thread_id in thread_ids:
        thread = await thread_of(thread_id)
        if thread is None or not _may_delete(user, thread):
            continue
        if (why := await _held(thread_id)) is not None:
            raise refuse(409, why)
        going.append((thread_id, thread))
    records = [_deleted(thread_id, thread, user, how) for thread_id, thread in going]
    held = _HELD_RECORDS.get()
    if held is None:
        await audit.write(records)
        return
    for record in records:  # a prune asks again for each thread it deletes: the first word stands
        held.setdefault(record["thread_id"], record)


def _may_delete(user: User, thread: dict[str, Any]) -> bool:
    return user.role == "supervisor" or (thread.get("metadata") or {}).get("owner") == user.identity


async def _held(thread_id: str) -> str | None:
    """Why `thread_id` cannot be deleted now, or None (a run in flight is cancelled with its thread)."""
    pending = Pending.from_state(await state_of(thread_id))
    if not pending:
        return None
    named = ", ".join(f"{p.subject} (interrupt {p.id})" for p in pending)
    return (
        f"Thread {thread_id} holds {len(pending)} pending approval(s): {named}. Withdraw them first "
        f"(POST /threads/{thread_id}/withdraw, recorded as withdrawn); then the thread may be deleted."
    )


def _deleted(thread_id: str, thread: dict[str, Any], user: User, how: str) -> AuditRecord:
    metadata = thread.get("metadata") or {}
    return AuditRecord(
        thread_id=thread_id,
        interrupt_id="",
        tool_call_id="",
        agent=str(metadata.get("graph_id") or ""),
        tool="thread",
        requested_args={"owner": metadata.get("owner")},
        decision=DELETED,
        final_args=None,
        message=f"{user.identity} {how} the thread; its trail stays readable to staff",
        reviewer=user.identity,
        roles=user.memberships,
        decided_at=datetime.now(UTC).isoformat(),
        outcome="accepted",
    )


class DeletionRecords:
    """Around every request that may delete threads: a deletion is recorded once the engine made it.

    `DELETE /threads/{id}`, `POST /threads/prune` and `DELETE /assistants/{id}` (`delete_threads`):
    the auth handler (`check_thread_deletion`) refuses what may not go and holds a record of the
    rest; when the engine answers 2xx, the records of the threads that are gone are written before
    the caller hears of it. A prune the engine refuses (another person's thread in it: 404;
    `keep_latest`: 422), or a thread it kept, leaves no deletion in a trail.
    """

    def __init__(self, app: ASGIApp) -> None:
        """Guard `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, holding its deletion records; write those the engine carried out."""
        if not _may_delete_threads(scope):
            await self.app(scope, receive, send)
            return
        held: dict[str, AuditRecord] = {}
        answer = HeldAnswer(send)
        token = _HELD_RECORDS.set(held)
        try:
            await self.app(scope, receive, answer)
        finally:
            _HELD_RECORDS.reset(token)
        if 200 <= answer.status < 300 and held:  # noqa: PLR2004  (the success range)
            await audit.write([record for thread_id, record in held.items() if await _gone(thread_id)])
        await answer.finish()


def _may_delete_threads(scope: Scope) -> bool:
    if scope["type"] != "http" or str(scope.get("root_path") or "").startswith("/noauth"):
        return False
    path, method = str(scope.get("path") or ""), scope.get("method")
    if method == "POST":
        return path in {PRUNE, f"{PRUNE}/"}
    return method == "DELETE" and (THREAD.match(path) or ASSISTANT.match(path)) is not None


async def _gone(thread_id: str) -> bool:
    """Whether the engine deleted `thread_id`: it is no more (or cannot be read after its 2xx)."""
    try:
        return await thread_of(thread_id) is None
    except Exception:  # noqa: BLE001  (the engine said it deleted it; a failed read does not unsay that)
        return True


class AssistantDeletionCheck:
    """Around `DELETE /assistants/{id}`: what it may not delete is refused, what it deleted audited.

    A served agent's own assistant stays; its threads are swept only when nothing waits on them;
    the deletion is audited once the API made it.
    """

    def __init__(self, app: ASGIApp) -> None:
        """Guard `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse what would lose a pending approval or a served agent; audit what was deleted."""
        assistant_id = _deleting(scope)
        if assistant_id is None:
            await self.app(scope, receive, send)
            return
        try:
            user = await caller_of(scope)
        except TokenRefused as refused:
            await JSONResponse({"detail": refused.message}, status_code=401)(scope, receive, send)
            return
        if user is None or user.role != "supervisor":  # 401 / 403 come from the auth layers
            await self.app(scope, receive, send)
            return
        sweeps = QueryParams(scope.get("query_string", b"")).get("delete_threads", "").lower() == "true"
        with as_server():
            assistant = await _assistant(assistant_id)
            swept = await _threads_of(assistant_id) if sweeps and assistant is not None else []
            why = await _kept(assistant_id, assistant, swept)
        if why is not None:
            await JSONResponse({"detail": why}, status_code=409)(scope, receive, send)
            return
        answer = HeldAnswer(send)
        await self.app(scope, receive, answer)
        if 200 <= answer.status < 300 and assistant is not None:  # noqa: PLR2004  (the success range)
            # each swept thread went through `check_thread_deletion` (the engine deletes it as this caller)
            await audit.write([_assistant_deleted(assistant_id, assistant, user, sweeps=sweeps)])
        await answer.finish()


def _deleting(scope: Scope) -> str | None:
    if scope["type"] != "http" or scope.get("method") != "DELETE":
        return None
    if str(scope.get("root_path") or "").startswith("/noauth"):
        return None
    match = ASSISTANT.match(str(scope.get("path") or ""))
    return match["assistant_id"] if match else None


async def _assistant(assistant_id: str) -> dict[str, Any] | None:
    try:
        return dict(await get_client().assistants.get(assistant_id))
    except Exception:  # noqa: BLE001  (no such assistant, or no UUID: the API answers it)
        return None


async def _threads_of(assistant_id: str) -> list[dict[str, Any]]:
    """The threads `delete_threads` would sweep away with the assistant (the engine's own match)."""
    client, found = get_client(), list[dict[str, Any]]()
    while page := await client.threads.search(
        metadata={"assistant_id": assistant_id}, limit=SWEPT_PAGE, offset=len(found)
    ):
        found += [dict(thread) for thread in page]
    return found


async def _kept(
    assistant_id: str, assistant: dict[str, Any] | None, swept: list[dict[str, Any]]
) -> str | None:
    """Why the assistant may not be deleted (as asked), or None."""
    if assistant is None:
        return None
    if (assistant.get("metadata") or {}).get("created_by") == "system":
        return (
            f"Assistant {assistant_id} is the served {assistant.get('graph_id')} agent's own; it is not "
            "deleted (remove the graph from langgraph.json instead)."
        )
    for thread in swept:
        thread_id = str(thread["thread_id"])
        if (why := await _held(thread_id)) is not None:
            return f"delete_threads would delete thread {thread_id}: {why}"
    return None


def _assistant_deleted(
    assistant_id: str, assistant: dict[str, Any], user: User, *, sweeps: bool
) -> AuditRecord:
    return AuditRecord(
        thread_id=trail_of(assistant_id),
        interrupt_id="",
        tool_call_id="",
        agent=str(assistant.get("graph_id") or ""),
        tool="assistant",
        requested_args={"delete_threads": sweeps},
        decision=ASSISTANT_DELETED,
        final_args=None,
        message=f"{user.identity} deleted the assistant" + (" and its threads" if sweeps else ""),
        reviewer=user.identity,
        roles=user.memberships,
        decided_at=datetime.now(UTC).isoformat(),
        outcome="accepted",
    )
