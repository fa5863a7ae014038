"""Custom HTTP routes mounted beside the LangGraph API; they see the authenticated user.

The audit trail now; the inbox and the built web app join as they land.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langgraph_sdk import get_client
from starlette.responses import JSONResponse
from starlette.routing import Route

from server import audit, inbox
from server.access import as_server
from server.users import User

if TYPE_CHECKING:
    from starlette.requests import Request


def request_user(request: Request) -> User:
    """The caller, as the server's auth resolved them (`enable_custom_route_auth`)."""
    return User(identity=request.user.identity, role=request.user["role"])


async def audit_trail(request: Request) -> JSONResponse:
    """GET /audit/{thread_id}: every decision and refused attempt, oldest first."""
    user = request_user(request)
    thread_id = request.path_params["thread_id"]
    client = get_client()
    try:
        with as_server():
            thread = await client.threads.get(thread_id)
    except Exception:  # noqa: BLE001  (any lookup failure reads as "no such thread" to the caller)
        return JSONResponse({"detail": f"Thread {thread_id} not found."}, status_code=404)
    if not user.is_staff and (thread.get("metadata") or {}).get("owner") != user.identity:
        return JSONResponse({"detail": f"Thread {thread_id} not found."}, status_code=404)
    return JSONResponse({"records": await audit.trail(client, thread_id)})


async def inbox_page(request: Request) -> JSONResponse:
    """GET /inbox?agent=&tool=&limit=&cursor=: pending approvals the caller may decide, oldest first."""
    params = request.query_params
    try:
        limit = int(params.get("limit", "50"))
        query = inbox.InboxQuery(
            agent=params.get("agent") or None,
            tool=params.get("tool") or None,
            limit=limit,
            after=inbox.InboxQuery.decode_cursor(params.get("cursor")),
        )
    except ValueError as error:
        return JSONResponse({"detail": f"Bad inbox query: {error}"}, status_code=422)
    if not 1 <= limit <= MAX_PAGE:
        return JSONResponse({"detail": f"limit must be between 1 and {MAX_PAGE}"}, status_code=422)
    with as_server():
        page = await inbox.page_of(get_client(), request_user(request), query)
    return JSONResponse(page)


MAX_PAGE = 500
ROUTES = [
    Route("/audit/{thread_id}", audit_trail, methods=["GET"]),
    Route("/inbox", inbox_page, methods=["GET"]),
]
