"""Direct state writes: what even a supervisor may write, and the record of it.

Three routes write a thread's state without a run: `POST /threads/{id}/state`, `POST /threads`
with `supersteps` (a thread created with history) and `POST /threads/{id}/copy` (a copy holds
the original's pending approvals: a second chance to find a willing reviewer; supervisors only).
The auth handlers see no values for the first two, so the allowlist that holds for runs
(`server.admission.allowlist`) is applied here, to the body: messages without tool calls, no
gate-owned keys, supervisors only; each accepted write is audited, and a pending approval it
removes is recorded as withdrawn, with a signed receipt (`server.decisions.withdrawals`).
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from langgraph_sdk import Auth, get_client
from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from server.admission.bodies import HeldAnswer, replaying
from server.admission.messages import check_state_write
from server.decisions import withdrawals
from server.decisions.pending import Pending, ResumeRefused
from server.identity.access import as_server, is_not_found
from server.identity.tokens import identify, token_of
from server.identity.users import TokenRefused
from server.records import audit

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from server.identity.users import User

logger = logging.getLogger(__name__)
STATE_ROUTE = re.compile(r"^/threads(/(?P<thread_id>[^/]+)/state)?/?$")
COPY_ROUTE = re.compile(r"^/threads/[^/]+/copy/?$")


class StateWriteCheck:
    """Check the body of a direct state write before the server applies it."""

    def __init__(self, app: ASGIApp) -> None:
        """Guard `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a state write that plants tool calls or gate state; audit the rest."""
        in_process = str(scope.get("root_path") or "").startswith("/noauth")
        path = str(scope.get("path") or "") if scope["type"] == "http" and not in_process else ""
        if scope.get("method") == "POST" and COPY_ROUTE.match(path) and not await _is_supervisor(scope):
            refusal = "Only a supervisor may copy a thread: a copy would hold its pending approvals again."
            await JSONResponse({"detail": refusal}, status_code=403)(scope, receive, send)
            return
        match = STATE_ROUTE.match(path)
        if match is None or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[Message] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message)
            more = message["type"] == "http.request" and bool(message.get("more_body"))
        body = b"".join(m.get("body", b"") for m in chunks if m["type"] == "http.request")
        try:
            writes = _writes(body, creating=match["thread_id"] is None)
            _check(writes, supervisor=await _is_supervisor(scope))
        except ResumeRefused as refusal:
            await JSONResponse({"detail": refusal.message}, status_code=refusal.status)(scope, receive, send)
            return
        if writes:
            await _audit(scope, match["thread_id"] or "new thread", writes)
        user = await _user(scope)
        if match["thread_id"] is None or user is None or user.role != "supervisor":
            await self.app(scope, replaying(chunks, receive), send)
            return
        thread_id = match["thread_id"]
        before = await _pending(thread_id)
        answer = HeldAnswer(send)
        await self.app(scope, replaying(chunks, receive), answer)
        if before and 200 <= answer.status < 300:  # noqa: PLR2004  (the success range)
            await withdrawals.record(thread_id, before, await _pending(thread_id), user, writes)
        await answer.finish()


def _check(writes: list[dict[str, Any]], *, supervisor: bool) -> None:
    """Writes are a supervisor's, and carry no tool calls or gate-owned keys."""
    if writes and not supervisor:
        raise ResumeRefused(403, "Only a supervisor may write a thread's state directly; send a message.")
    for values in writes:
        check_state_write(values)


def _writes(body: bytes, *, creating: bool) -> list[dict[str, Any]]:
    """The state values a request writes: one update, or every update of a new thread's supersteps."""
    try:
        payload = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        raise ResumeRefused(422, "The request body must be JSON.") from None
    if not isinstance(payload, dict):
        return []
    if not creating:
        return [_values(payload.get("values"))]
    steps = payload.get("supersteps")
    if not steps:
        return []
    if not isinstance(steps, list):
        raise ResumeRefused(422, "supersteps must be a list.")
    updates = [u for step in steps if isinstance(step, dict) for u in step.get("updates") or []]
    if any(not isinstance(u, dict) or u.get("command") is not None for u in updates):
        raise ResumeRefused(422, "supersteps updates carry values only (no commands).")
    return [_values(u.get("values")) for u in updates] or [{}]


def _values(values: object) -> dict[str, Any]:
    if isinstance(values, list):
        raise ResumeRefused(422, "values must be one object of state keys (no batches of updates).")
    if values is not None and not isinstance(values, dict):
        raise ResumeRefused(422, "values must be an object of state keys.")
    return values or {}


async def _user(scope: Scope) -> User | None:
    """The caller, from a `HITL_USERS` token or an OIDC JWT (`tokens.identify`); None if neither."""
    try:
        token = token_of(Headers(scope=scope).get("authorization"), dict(scope.get("headers") or []))
        return await identify(token or "")
    except (TokenRefused, Auth.exceptions.HTTPException):  # the auth layers answer it (401)
        return None


async def _pending(thread_id: str) -> list[Pending]:
    """What waits on the thread now ([] for a thread the server cannot read: the API answers for it)."""
    try:
        with as_server():
            state = await get_client().threads.get_state(thread_id)
    except Exception as error:  # noqa: BLE001  (no state, no pending approval to lose)
        if not is_not_found(error) and "422" not in str(error):
            logger.warning("state write: could not read %s's pending approvals: %r", thread_id, error)
        return []
    return Pending.from_state(dict(state))


async def _is_supervisor(scope: Scope) -> bool:
    user = await _user(scope)
    return user is not None and user.role == "supervisor"


async def _audit(scope: Scope, thread_id: str, writes: list[dict[str, Any]]) -> None:
    user = await _user(scope)
    if user is None or user.role != "supervisor":  # 401 or 403 follow from the auth layers
        return
    keys = sorted({k for values in writes for k in values})
    what = [f"state write of {', '.join(keys) or 'nothing'}"]
    await audit.write([audit.state_write(thread_id, "", user, what)])
