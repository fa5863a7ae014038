"""No client input gets a 5xx: JSON bodies are checked once, before any route, and refusals keep their status.

`ClientErrors` wraps every route the server has (its own and langgraph_api's, like
`server.http.app.TokenRequired`, inside it). A body that looks like JSON must parse (orjson, as
the API parses it) and nest at most `MAX_JSON_DEPTH` levels; otherwise it is a 422 naming
the problem before any handler, ours or the API's, walks it (a 100,000-deep array blew
Python's recursion limit in three of them). A route that calls the API for its caller (MCP's
`tools/call` runs the assistant through the in-process client) and gets a 4xx answers that
4xx, not the 500 an uncaught `httpx.HTTPStatusError` would become. Not for what a valid body
may say: that is each route's allowlist.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import httpx
import orjson
from starlette.responses import JSONResponse

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects a request body may have (the API's own bodies need < 15)."""
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
JSON_START = (b"{", b"[")


class ClientErrors:
    """Refuse malformed or too deep JSON bodies (422); pass a wrapped 4xx on as itself."""

    def __init__(self, app: ASGIApp) -> None:
        """Guard `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the body of a request that has one, then run the route; a refusal inside keeps its status."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("method") in BODY_METHODS:
            chunks, body = await read_body(receive)
            if (problem := json_problem(body, str(scope.get("path") or ""))) is not None:
                await JSONResponse({"detail": problem}, status_code=422)(scope, receive, send)
                return
            receive = replaying(chunks, receive)
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except (httpx.HTTPStatusError, BaseExceptionGroup) as error:
            refusal = client_refusal(error)
            if started or refusal is None:
                raise
            said = {"detail": _detail(refusal)}
            await JSONResponse(said, status_code=refusal.status_code)(scope, receive, send)


def client_refusal(error: BaseException) -> httpx.Response | None:
    """The 4xx answer behind `error`: an `httpx.HTTPStatusError`, alone or as the one error of a group.

    Starlette's `BaseHTTPMiddleware` (langgraph_api has some) can wrap a route's exception in
    an exception group of one.
    """
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, httpx.HTTPStatusError) and 400 <= error.response.status_code < 500:  # noqa: PLR2004
        return error.response
    return None


def json_problem(body: bytes, path: str = "") -> str | None:
    """What is wrong with a body that looks like JSON (starts with `{` or `[`), or None.

    Bodies that do not look like JSON (forms, empty) are the route's to judge. A route in
    `UNCHECKED_FIELDS` also gets the types of the fields the API reads without checking them.
    """
    if body.lstrip()[:1] not in JSON_START:
        return None
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        return f"The request body is not valid JSON: {error}."
    depth = nesting(document)
    if depth > MAX_JSON_DEPTH:
        return f"The request body nests {depth} levels deep; the limit is {MAX_JSON_DEPTH}."
    return next(
        (p for route, check in UNCHECKED_FIELDS if route.match(path) and (p := check(document))), None
    )


def _run_fields(document: Any) -> str | None:  # noqa: ANN401  (any JSON value)
    """A run's `checkpoint_id` (which the SDK sends and the API's schema omits) is text."""
    given = document.get("checkpoint_id") if isinstance(document, dict) else None
    if given is not None and not isinstance(given, str):
        return "checkpoint_id must be text (a checkpoint's id)."
    return None


def _mcp_fields(document: Any) -> str | None:  # noqa: ANN401  (any JSON value)
    """An MCP JSON-RPC message: `method` text, `params` an object; a tool call's name text, args an object."""
    if not isinstance(document, dict):
        return None  # the API refuses it, in its words
    if document.get("method") is not None and not isinstance(document["method"], str):
        return "method must be text."
    params = document.get("params")
    if params is None:
        return None
    if not isinstance(params, dict):
        return "params must be an object."
    for key, kind, words in (
        ("name", str, "text"),
        ("arguments", dict, "an object"),
        ("context", dict, "an object"),
    ):
        if params.get(key) is not None and not isinstance(params[key], kind):
            return f"params.{key} must be {words}."
    return None


UNCHECKED_FIELDS: tuple[tuple[re.Pattern[str], Callable[[Any], str | None]], ...] = (
    (re.compile(r"^(/threads/[^/]+)?/runs(/wait|/stream)?/?$"), _run_fields),
    (re.compile(r"^/mcp/?$"), _mcp_fields),
)
"""Routes whose bodies the API reads a field of without checking its type (a 500 before): path, check."""


def nesting(document: Any) -> int:  # noqa: ANN401  (any JSON value)
    """How deeply arrays and objects nest in `document` (0 for a scalar), counted without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


async def read_body(receive: Receive) -> tuple[list[Message], bytes]:
    """Every message of the request body (already bounded by `TokenRequired`), and the body."""
    chunks: list[Message] = []
    more = True
    while more:
        message = await receive()
        chunks.append(message)
        more = message["type"] == "http.request" and bool(message.get("more_body"))
    return chunks, b"".join(m.get("body", b"") for m in chunks if m["type"] == "http.request")


def replaying(chunks: list[Message], receive: Receive) -> Receive:
    """A `receive` that gives `chunks` again, then what `receive` gives (a disconnect)."""
    replay = iter(chunks)

    async def replayed() -> Message:
        return next(replay, None) or await receive()

    return replayed


class HeldAnswer:
    """A `send` that keeps the response's status and (small) body, and holds the answer back until `finish`.

    A middleware that records what a route did (`server.admission.assistants`,
    `server.admission.state_writes`)
    writes the record before `finish`, so the caller hears of the change once it is on the record.
    Every body part is held, not only the last: a streaming layer in between (starlette's
    `BaseHTTPMiddleware`) sends the whole body with `more_body` and then an empty last part, and a
    client that has its Content-Length would read the answer before the record was written. The start
    is held too: a 204 has no body, so a client takes the answer as whole once its start arrives.
    """

    def __init__(self, send: Send) -> None:
        """Hold the response (its start and its body) for `send`."""
        self.send = send
        self.status = 0
        self.body = b""
        self.held: list[Message] = []

    async def __call__(self, message: Message) -> None:
        """Keep the status and body; hold the start and every body part back."""
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        elif message["type"] == "http.response.body":
            if len(self.body) < 1_000_000:  # noqa: PLR2004  (an assistant is far smaller)
                self.body += message.get("body", b"")
        else:
            await self.send(message)
            return
        self.held.append(message)

    async def finish(self) -> None:
        """Send the answer held back."""
        held, self.held = self.held, []
        for message in held:
            await self.send(message)

    def json(self) -> dict[str, Any]:
        """The body as a JSON object ({} for anything else)."""
        try:
            said = orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return {}
        return said if isinstance(said, dict) else {}


def _detail(response: httpx.Response) -> str:
    """The refusal's own words: its JSON `detail`, else its text."""
    try:
        said = response.json()
    except (ValueError, httpx.ResponseNotRead):
        return response.text[:2000] or response.reason_phrase
    detail = said.get("detail") if isinstance(said, dict) else None
    return str(detail if detail is not None else said)[:2000]
