"""Direct state writes (`POST /threads/{id}/state`): what even a supervisor may write, and the record of it.

The auth handler sees no values for this route (`threads.update` carries only the thread id),
so the allowlist that holds for runs (`server.run_admission`) is applied here, to the body:
messages without tool calls, no gate-owned keys. Only supervisors get this far (the auth
handler refuses everyone else); each accepted write is audited.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client
from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from server import audit
from server.resume_gate import ResumeRefused
from server.run_admission import check_state_write
from server.users import directory

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATE_ROUTE = re.compile(r"^/threads/(?P<thread_id>[^/]+)/state/?$")


class StateWriteCheck:
    """Check the body of a direct state write before the server applies it."""

    def __init__(self, app: ASGIApp) -> None:
        """Guard `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a state write that plants tool calls or gate state; audit the rest."""
        match = STATE_ROUTE.match(str(scope.get("path") or "")) if scope["type"] == "http" else None
        if (
            match is None
            or scope.get("method") != "POST"
            or str(scope.get("root_path") or "").startswith("/noauth")
        ):
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
            values = _values(body)
            check_state_write(values)
        except ResumeRefused as refusal:
            await JSONResponse({"detail": refusal.message}, status_code=refusal.status)(scope, receive, send)
            return
        await _audit(scope, match["thread_id"], values)
        replay = iter(chunks)

        async def replayed() -> Message:
            return next(replay, None) or await receive()

        await self.app(scope, replayed, send)


def _values(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body or b"{}")
    except ValueError:
        raise ResumeRefused(422, "The state update must be JSON.") from None
    values = payload.get("values") if isinstance(payload, dict) else None
    if isinstance(values, list):
        raise ResumeRefused(422, "values must be one object of state keys (no batches of updates).")
    if values is not None and not isinstance(values, dict):
        raise ResumeRefused(422, "values must be an object of state keys.")
    return values or {}


async def _audit(scope: Scope, thread_id: str, values: dict[str, Any]) -> None:
    token = (Headers(scope=scope).get("authorization") or "").partition(" ")[2].strip()
    user = directory().authenticate(token)
    if user is None or user.role != "supervisor":  # 401 or 403 follow from the auth layers
        return
    await audit.write(
        get_client(),
        [
            audit.state_write(
                thread_id, "", user, [f"state write of {', '.join(sorted(values)) or 'nothing'}"]
            )
        ],
    )
