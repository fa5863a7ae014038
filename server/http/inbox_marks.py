"""Which threads the inbox table reads again: those a request changed, once the engine said it did.

An auth handler runs before the engine answers, so it cannot know whether the write it lets through
happens: a DELETE refused with 409 or a PATCH of another person's thread (404) changes nothing.
`mark` holds the thread until the request's answer; `MarksOnSuccess`, around every request, marks
what was held only when the engine answers 2xx. A request that waited for its run's end
(`runs/wait`, `join`, a run's stream) reads that one thread into the table before the last of its
answer goes, so whoever saw the run pause finds it in the inbox; the inbox page itself reads only
the table (`server.coordination.inbox`). Not for reading the marked threads
(`server.coordination.inbox_table`).
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from langgraph_sdk import get_client

from server.coordination.inbox_table import TABLE
from server.identity.access import as_server

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

_HELD: ContextVar[dict[str, datetime] | None] = ContextVar("hitl_held_marks", default=None)
"""The marks of the request `MarksOnSuccess` is around, by thread (since when), until the engine answers."""
WAITED = re.compile(r"^/threads/(?P<thread_id>[^/]+)/runs/(?:wait|stream|[^/]+/join|[^/]+/stream)/?$")
"""The requests that answer once their run has ended: the thread the caller saw pause."""


def mark(thread_id: object) -> None:
    """A write on `thread_id` is let through: mark it once the engine made it (at once outside a request)."""
    if thread_id is None:
        return
    held = _HELD.get()
    if held is None:
        TABLE.mark(str(thread_id))
    else:
        held.setdefault(str(thread_id), datetime.now(UTC))


class MarksOnSuccess:
    """Around every request: its held marks are made on a 2xx answer, dropped on any other."""

    def __init__(self, app: ASGIApp) -> None:
        """Guard `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; mark what it held when the answer starts with 2xx."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: dict[str, datetime] = {}
        waited = WAITED.match(str(scope.get("path") or ""))
        status = 0

        async def answered(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                _made(held, status)
            elif message["type"] == "http.response.body" and not message.get("more_body") and waited:
                _made(held, status)
                if 200 <= status < 300:  # noqa: PLR2004  (the success range)
                    with as_server():
                        await TABLE.read_waited(get_client(), waited["thread_id"])
            await send(message)

        token = _HELD.set(held)
        try:
            await self.app(scope, receive, answered)
        finally:
            _HELD.reset(token)
            _made(held, status)


def _made(held: dict[str, datetime], status: int) -> None:
    """Mark the threads `held` for an answer of `status` (2xx only); forget them either way."""
    if 200 <= status < 300:  # noqa: PLR2004  (the success range)
        for thread_id, at in held.items():
            TABLE.mark(thread_id, at=at)
    held.clear()
