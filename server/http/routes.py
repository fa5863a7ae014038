"""Custom HTTP routes mounted beside the LangGraph API; they see the authenticated user.

The audit trail, the inbox, metrics and analytics (`server.insight.observability`), people's check of a
first-line reviewer's decisions (`server.first_line.samples`), and the built web app at `/app` (public
files, like its `/app-config`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from langgraph_sdk import get_client
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.staticfiles import StaticFiles

from hitl.contracts.published_schema import ANSWER_SCHEMAS
from hitl.settings import get_settings
from server.coordination import inbox
from server.decisions import allowances, answer_schemas, withdrawals
from server.first_line import samples as first_line_samples
from server.identity.access import as_server
from server.identity.users import directory, is_loopback, request_user
from server.insight import observability
from server.records import audit, receipts

if TYPE_CHECKING:
    from starlette.datastructures import URLPath
    from starlette.requests import Request
    from starlette.types import ASGIApp, Receive, Scope, Send


async def audit_trail(request: Request) -> JSONResponse:
    """GET /audit/{thread_id}: every decision and refused attempt, oldest first (staff: also once deleted)."""
    thread_id = request.path_params["thread_id"]
    if not await audit.readable(thread_id, request_user(request)):
        return JSONResponse({"detail": f"Thread {thread_id} not found."}, status_code=404)
    records, head = await audit.trail_with_head(thread_id)
    return JSONResponse({"records": records, "head": head})


async def audit_verification(request: Request) -> JSONResponse:
    """GET /audit/{thread_id}/verification: which receipts verify (`server.records.receipts`)."""
    return await receipts.verification(request, request_user(request))


async def inbox_page(request: Request) -> JSONResponse:
    """GET /inbox?agent=&tool=&limit=&cursor=: pending approvals the caller may decide, oldest first.

    A parameter this server cannot read is a 400 naming it, never a 500.
    """
    try:
        query = inbox.InboxQuery.from_params(request.query_params)
    except ValueError as error:
        return JSONResponse({"detail": f"Bad inbox query: {error}"}, status_code=400)
    with as_server():
        page = await inbox.page_of(get_client(), request_user(request), query)
    return JSONResponse(page)


ROUTES: list[BaseRoute] = [
    Route("/audit/{thread_id}", audit_trail, methods=["GET"]),
    Route("/audit/{thread_id}/verification", audit_verification, methods=["GET"]),
    Route("/inbox", inbox_page, methods=["GET"]),
    Route("/threads/{thread_id}/allowances/revoke", allowances.revoke, methods=["POST"]),
    Route("/threads/{thread_id}/withdraw", withdrawals.withdraw, methods=["POST"]),
    Route(ANSWER_SCHEMAS, answer_schemas.page, methods=["GET"]),
    *observability.ROUTES,
    *first_line_samples.ROUTES,
]


WEB_DIST = Path(__file__).resolve().parents[2] / "web" / "dist"
"""Where `npm run build` (run by `make dev`) puts the reviewer web app."""


class PublicRoute(BaseRoute):
    """A GET/HEAD route every visitor reaches without a token: the web app's files and sign-in config.

    With `enable_custom_route_auth`, langgraph_api wraps the `app` attribute of each custom route
    in its auth middleware (`apply_middleware` in `langgraph_api/server.py`). A browser cannot
    send a bearer token for the page that asks for it, so this route exposes the inner route's
    `app` to be wrapped but dispatches to the inner route itself. Other methods do not match
    here and fall through to the authenticated API. Every other route in `ROUTES` stays
    authenticated; `tests/web/test_app_serving.py` checks both sides.
    """

    def __init__(self, route: Route | Mount) -> None:
        """Serve `route` without authentication."""
        self.route = route
        self.app: ASGIApp = route.app  # what the server wraps in auth; never called

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        """The inner route's match, for reads only."""
        if scope["type"] != "http" or scope.get("method") not in {"GET", "HEAD"}:
            return Match.NONE, {}
        return self.route.matches(scope)

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:  # noqa: ANN401
        """The inner route's URL for `name`."""
        return self.route.url_path_for(name, **path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Dispatch to the inner route, whose app carries no auth middleware."""
        await self.route.handle(scope, receive, send)


class WebApp:
    """The built web app from `WEB_DIST`, or a page saying how to build it (checked per request)."""

    def __init__(self, directory: Path) -> None:
        """Serve `directory`; it may not exist yet."""
        self.directory = directory
        self.files = StaticFiles(directory=directory, html=True, check_dir=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a file of the build, or explain that there is no build yet."""
        if (self.directory / "index.html").is_file():
            await self.files(scope, receive, send)
            return
        response = HTMLResponse(
            "<!doctype html><title>Web app not built</title>"
            "<h1>The reviewer web app is not built yet</h1>"
            f"<p>No <code>{self.directory}/index.html</code>. Run <code>make dev</code> (it builds "
            "<code>web/dist</code> when needed), or <code>cd web &amp;&amp; npm ci &amp;&amp; npm run build"
            "</code>. The API works without it.</p>",
            status_code=503,
        )
        await response(scope, receive, send)


async def app_config(request: Request) -> JSONResponse:
    """GET /app-config: what the sign-in page offers; no secret unless in dev mode and over loopback.

    Dev users and their tokens are offered only with HITL_DEV_MODE=true and to a page opened
    from this machine; everyone else gets the same answer as outside dev mode.
    """
    if not (get_settings().hitl_dev_mode and is_loopback(request.client.host if request.client else None)):
        return JSONResponse({"dev_users": []})
    users = []
    for entry in filter(None, (e.strip() for e in get_settings().hitl_users.split(","))):
        token = entry.split(":", 2)[-1]
        user = directory().authenticate(token)
        if user is not None:
            users.append({"name": user.identity, "role": user.role, "token": token})
    return JSONResponse({"dev_users": users})


async def server_info(request: Request) -> Response:
    """GET /info: what langgraph-api's own /info says (its version, LangGraph's, feature flags; no secret).

    `http.disable_meta` keeps the engine's unauthenticated /metrics and /docs shut, and /info with
    them; clients (Agent Chat UI, LangGraph Studio) read /info to tell that a server is there.
    """
    from langgraph_api.api.meta import meta_info  # noqa: PLC0415  (only inside the server)

    return cast("Response", await meta_info(cast("Any", request)))


async def app_without_slash(request: Request) -> RedirectResponse:
    """GET /app: on to /app/, where the app's relative asset paths resolve."""
    return RedirectResponse(str(request.url.replace(path=f"{request.url.path}/")))


ROUTES += [
    PublicRoute(Route("/info", server_info, methods=["GET"])),
    PublicRoute(Route("/app-config", app_config, methods=["GET"])),
    PublicRoute(Route("/.well-known/jwks.json", receipts.jwks, methods=["GET"])),
    PublicRoute(Route("/app", app_without_slash, methods=["GET"])),
    PublicRoute(Mount("/app", app=WebApp(WEB_DIST), name="web-app")),
]
