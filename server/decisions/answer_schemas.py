"""GET /threads/{thread_id}/answer-schemas: the full answer schema of each interrupt waiting on a thread.

A gate's interrupt publishes its answer schema by reference (`hitl.contracts.published_schema`),
`{"title": ..., "x-hitl-answer-schema": "/threads/{thread_id}/answer-schemas"}`, not the 3.5 KB
schema in every checkpoint, stream event and thread record. Clients that build a form from the
schema (the web app's edit and form cards) read it here: `{"schemas": {interrupt_id: schema}}`.
Each is derived from the interrupt's value, as the server's own check of an answer is
(`hitl.contracts.answers`), so any replica serves the same one; an interrupt this package never
raises keeps the engine's schema, and one with neither is null. The thread's owner and staff may
read them; anyone else gets the 404 of a thread that does not exist.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client
from starlette.responses import JSONResponse

from hitl.contracts import answers
from hitl.contracts.published_schema import is_reference
from server.decisions.pending import Pending
from server.identity.access import as_server, visible_thread
from server.identity.users import request_user

if TYPE_CHECKING:
    from starlette.requests import Request


async def page(request: Request) -> JSONResponse:
    """The full answer schema of every interrupt pending on the thread, by interrupt id."""
    thread_id = request.path_params["thread_id"]
    if await visible_thread(thread_id, request_user(request)) is None:
        return JSONResponse({"detail": f"Thread {thread_id} not found."}, status_code=404)
    with as_server():
        state = await get_client().threads.get_state(thread_id)
    return JSONResponse({"schemas": {p.id: schema_of(p) for p in Pending.from_state(dict(state))}})


def schema_of(pending: Pending) -> dict[str, Any] | None:
    """The full schema an answer to `pending` must fit, as the server checks it; None if none is known."""
    engine = None if is_reference(pending.response_schema) else pending.response_schema
    return answers.response_schema(pending.value) or engine
