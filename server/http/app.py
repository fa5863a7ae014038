"""The custom HTTP app the server mounts (`http.app` in `langgraph.json`).

Its lifespan refuses to start with published dev tokens outside dev mode or with the layer's store in
the business connection's reach (moving an older release's records out first), sends the graphs' own
audit records to the server's trail, lets the gates put delegated calls to a first-line reviewer,
recovers the dev server after a crash and starts the watcher (notices, deadlines, the reconciler); its routes
(`server.http.routes`) serve the audit trail, the inbox and the web app. Its middleware,
`TokenRequired`, wraps every route the server has (its own and langgraph_api's), so only
the allowlisted public paths answer a caller without a known token.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from langgraph_sdk import Auth, get_client
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.responses import JSONResponse

from hitl.policy.served import filed_cards
from hitl.settings import get_settings
from server.admission.assistants import ROUTES as ASSISTANT_ROUTES
from server.admission.assistants import AssistantChangeCheck
from server.admission.bodies import ClientErrors
from server.admission.deletions import AssistantDeletionCheck, DeletionRecords
from server.admission.state_writes import StateWriteCheck
from server.channels.routes import ROUTES as CHANNEL_ROUTES
from server.channels.routes import SLACK_ACTIONS
from server.coordination import broadcast
from server.coordination.inbox_table import TABLE
from server.coordination.watcher import Watcher
from server.first_line import review as first_line
from server.http.auth import authenticate
from server.http.inbox_marks import MarksOnSuccess
from server.http.routes import ROUTES
from server.identity.answerers import check_policies
from server.identity.tokens import token_of
from server.identity.users import is_dev_token, is_loopback
from server.insight import heap_probe
from server.ledger import move
from server.ledger.apart import check_store_apart
from server.records import audit
from server.runtime import engine_compat, mcp_servers, startup_heap, tracing_inline
from server.runtime.recovery import recover_after_crash
from server.runtime.start_checks import check_settings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)
PUBLIC_PATHS = frozenset({"/ok", "/info", "/app", "/app-config", "/.well-known/jwks.json"})
"""What answers GET without a token: the health check, the server's versions (as langgraph-api's /info),
the web app's entry and its sign-in config, and the public keys of signed receipts."""
PUBLIC_PREFIXES = ("/app/",)
"""The web app's files."""
SIGNED_ROUTES = frozenset({("POST", SLACK_ACTIONS)})
"""(method, path) that authenticate by their own signature, not a token: Slack's button presses."""


class TokenRequired:
    """Refuse with 401, before any route runs, a request outside `PUBLIC_PATHS` without a known token.

    langgraph_api serves some routes without its auth middleware (`/metrics`, `/docs`,
    `/openapi.json`, `/info` unless `http.disable_meta`; under `langgraph dev` also
    `/internal/*` and `/deploy`), and a custom route cannot shadow them; this app's own
    middleware runs around all of them. A published `dev-*` token is refused unless it comes
    over loopback. The server's own in-process calls (`root_path` `/noauth`, which no
    request can set) and CORS preflights pass; the routes behind still check as before.
    """

    def __init__(self, app: ASGIApp) -> None:
        """Guard `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a public, in-process or authenticated request on; answer 401 to the rest."""
        if scope["type"] != "http" or _passes_unchecked(scope):
            await self.app(scope, receive, send)
            return
        limited = await _within_size(scope, receive, send)
        if limited is None:
            return
        receive = limited
        if (scope.get("method"), scope.get("path")) in SIGNED_ROUTES:  # size-limited, then its own check
            await self.app(scope, receive, send)
            return
        authorization = Headers(scope=scope).get("authorization")
        headers = dict(scope.get("headers") or [])
        client = scope.get("client")
        detail = None
        try:
            if is_dev_token(token_of(authorization, headers) or "") and not is_loopback(
                client[0] if client else None
            ):
                detail = "Development tokens work only from this machine; send your own token."
            else:
                await authenticate(authorization, headers)
        except Auth.exceptions.HTTPException as refusal:
            detail = str(refusal.detail)
        if detail is not None:
            await JSONResponse({"detail": detail}, status_code=401)(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def _within_size(scope: Scope, receive: Receive, send: Send) -> Receive | None:
    """The request's `receive`, or None after answering 413 to a body over `MAX_REQUEST_BYTES`.

    A declared length is judged at once; a body without one is read (up to the limit) and
    replayed to the app.
    """
    limit = get_settings().max_request_bytes
    declared = Headers(scope=scope).get("content-length")
    if declared is not None and declared.isdigit() and int(declared) <= limit:
        return receive
    size, chunks, more = 0, [], True
    while more and size <= limit and declared is None:
        message = await receive()
        if message["type"] != "http.request":
            return receive
        chunks.append(message)
        size += len(message.get("body", b""))
        more = bool(message.get("more_body"))
    if declared is not None or size > limit:
        shown = declared if declared is not None else f"over {limit}"
        body = {"detail": f"The request body is {shown} bytes; the limit is {limit} (MAX_REQUEST_BYTES)."}
        await JSONResponse(body, status_code=413)(scope, receive, send)
        return None
    replay = iter(chunks)

    async def replayed() -> Message:
        return next(replay, None) or await receive()

    return replayed


def _passes_unchecked(scope: Scope) -> bool:
    path, method = str(scope.get("path") or ""), scope.get("method")
    root_path = str(scope.get("root_path") or "")
    if root_path == "/noauth" or root_path.startswith("/noauth/"):
        return True
    if method in {"GET", "HEAD"} and (path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)):
        return True
    return method == "OPTIONS" and "access-control-request-method" in Headers(scope=scope)


@asynccontextmanager
async def lifespan(_app: Starlette) -> AsyncIterator[None]:
    """Check the users, recover what a crash of `langgraph dev` left behind, start the watcher."""
    # A malformed HITL_USERS or HITL_OIDC_*, dev tokens out of dev mode, unshared settings on a replica or
    # a PostgreSQL database that does not answer stop it (`make dev` asks the same: start_checks). Before
    # the first await: `langgraph dev` refuses blocking calls once its loop runs on, and
    # recover_after_crash makes a folder.
    check_settings()
    audit.keep_graph_records()
    first_line.start()  # the gates put delegated calls to the first-line reviewer (`server.first_line`)
    await recover_after_crash()  # first: it holds the run queue from the first instant
    await asyncio.to_thread(move.move_out)  # an older release's records, out of the business database
    await asyncio.to_thread(check_store_apart)
    check_policies(filed_cards())  # every approval of a served agent has someone who may answer it
    mcp_listing = mcp_servers.list_at_start(filed_cards())  # beside the start: a server down delays nothing
    heap_probe.install(asyncio.get_running_loop())  # only with HITL_HEAP_PROBE set (the benchmarks)
    frozen = startup_heap.freeze()  # the graphs are loaded: langgraph-api's lifespan runs before this one
    logger.info("startup heap: %d objects frozen out of full garbage collections", frozen)
    async with broadcast.shared(TABLE):
        watcher = asyncio.create_task(Watcher().run(), name="hitl-watcher")
        marks = asyncio.create_task(TABLE.keep_marks_read(get_client()), name="hitl-inbox-marks")
        try:
            yield
        finally:
            watcher.cancel()
            marks.cancel()
            if mcp_listing is not None:
                mcp_listing.cancel()


engine_compat.apply()
tracing_inline.install()

app = Starlette(
    routes=[*ROUTES, *CHANNEL_ROUTES, *ASSISTANT_ROUTES],
    lifespan=lifespan,
    middleware=[
        Middleware(TokenRequired),
        Middleware(ClientErrors),
        Middleware(MarksOnSuccess),
        Middleware(StateWriteCheck),
        Middleware(AssistantChangeCheck),
        Middleware(DeletionRecords),
        Middleware(AssistantDeletionCheck),
    ],
)
