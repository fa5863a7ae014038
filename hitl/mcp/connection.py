"""The one adapter around the `mcp` SDK's client: a short connection, for one listing or one round of a call.

Every listing and every round of a call opens its own connection (streamable HTTP, MCP 2026-07-28
where the server speaks it; its `server/discover` answer is remembered: no extra request), bounded
in time and in bytes, and closes it before anything waits for a person: a question the server asks
is answered by retrying the call with the answer (MCP's multi round-trip requests), so no session
is ever held across a pause, and any replica can go on days later. Everything a server can
do wrong ends here as a `ServerProblem` whose words say what happened and whether anything ran.
The SDK's names live here and nowhere else (`tests/unit/mcp/test_sdk_adapter.py` fails when they move).
"""

from __future__ import annotations

import functools
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolResult,
    DiscoverResult,
    ElicitRequest,
    ElicitResult,
    InputRequiredResult,
    InputResponses,
    RequestParamsMeta,
    Tool,
)
from pydantic import ValidationError

from hitl.mcp.servers import Limits, ServerProblem

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncIterator, Callable, Mapping

    from hitl.mcp.servers import Endpoint

__all__ = [
    "CallToolResult",
    "ElicitRequest",
    "ElicitResult",
    "InputRequiredResult",
    "Tool",
    "call_round",
    "list_tools",
]

MAX_PAGES = 20
"""The most pages of one tool listing read (a server that pages for ever is cut off there)."""


class ResponseTooLarge(Exception):  # noqa: N818  (raised inside the transport, turned into a ServerProblem)
    """A response body over the byte limit: not read further."""


class _CappedStream(httpx2.AsyncByteStream):
    """A response body read only up to `limit` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self.inner, self.limit = inner, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.limit:
                msg = f"more than {self.limit} bytes"
                raise ResponseTooLarge(msg)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


@functools.cache
def _tls() -> ssl.SSLContext:
    """One verifying TLS context per process: building one loads the CA bundle (about 0.1 s here)."""
    return httpx2.create_ssl_context()


class _CappedTransport(httpx2.AsyncBaseTransport):
    """Loopback-or-network HTTP whose responses are cut off at `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self.inner = httpx2.AsyncHTTPTransport(verify=_tls(), trust_env=False)
        self.limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.limit:
            await response.aclose()
            msg = f"{length} bytes"
            raise ResponseTooLarge(msg)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)  # noqa: S101  (an async transport's own)
        response.stream = _CappedStream(stream, self.limit)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


_discovered: dict[str, tuple[str, DiscoverResult]] = {}
"""Each server's version and `server/discover` answer, by URL: a later connection adopts them."""


@asynccontextmanager
async def _connected(endpoint: Endpoint, limits: Limits) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(
        headers=endpoint.headers,
        timeout=httpx2.Timeout(limits.timeout_seconds),
        transport=_CappedTransport(limits.max_response_bytes),
        trust_env=False,  # no proxy from the environment: the URL is the deployment's, as configured
    )
    known = _discovered.get(endpoint.url)
    pinned: dict[str, Any] = {"mode": known[0], "prior_discover": known[1]} if known else {}
    async with (
        http,
        Client(
            streamable_http_client(endpoint.url, http_client=http),
            read_timeout_seconds=limits.timeout_seconds,
            cache=None,
            **pinned,
        ) as client,
    ):
        if known is None and (found := client.session.discover_result) is not None:
            _discovered[endpoint.url] = (client.protocol_version, found)
        yield client


async def _bounded(endpoint: Endpoint, what: str, limits: Limits, work: Any) -> Any:  # noqa: ANN401
    """Run `work` (a coroutine function of a connected client) within the limits, its failures in words."""
    name, timeout = endpoint.server.name, limits.timeout_seconds
    try:
        with anyio.fail_after(timeout * 2 + 1):  # the handshake and the request, each bounded by `timeout`
            async with _connected(endpoint, limits) as client:
                return await work(client)
    except ServerProblem:
        _discovered.pop(endpoint.url, None)  # it may have changed: ask it again next time
        raise
    except BaseException as error:  # every way a server fails, said in words
        if isinstance(error, anyio.get_cancelled_exc_class()) and not isinstance(error, TimeoutError):
            raise
        _discovered.pop(endpoint.url, None)
        msg = f"{name} {_said(error, what, timeout)}"
        raise ServerProblem(msg) from None


def _said(error: BaseException, what: str, timeout: float) -> str:  # noqa: PLR0911  (one answer per kind)
    """How a failure reads to the model and the operator."""
    found = _leaves(error)
    if any(isinstance(e, ResponseTooLarge) for e in found):
        too_large = next(e for e in found if isinstance(e, ResponseTooLarge))
        return f"answered {what} with {too_large} (the limit is MCP_MAX_RESPONSE_BYTES); it was not read"
    if any(isinstance(e, TimeoutError | httpx2.TimeoutException) for e in found):
        return f"did not answer {what} within {timeout:g} s"
    if any(isinstance(e, httpx2.ConnectError | ConnectionError | OSError) for e in found):
        return f"could not be reached for {what} ({_first_words(found)})"
    if any(isinstance(e, httpx2.HTTPStatusError) for e in found):
        status = next(e for e in found if isinstance(e, httpx2.HTTPStatusError)).response.status_code
        return f"refused {what} with HTTP {status}"
    if any(isinstance(e, MCPError) for e in found):
        mcp_error = next(e for e in found if isinstance(e, MCPError))
        return f"answered {what} with an error: {_short(mcp_error.message)}"
    if any(isinstance(e, ValidationError | ValueError | KeyError | TypeError) for e in found):
        return f"answered {what} with something that is not MCP ({_first_words(found)})"
    return f"failed during {what} ({_first_words(found)})"


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    chained = [error]
    cause = error.__cause__ or error.__context__
    while cause is not None and len(chained) < 5:  # noqa: PLR2004  (a few links of the chain are enough)
        chained.append(cause)
        cause = cause.__cause__ or cause.__context__
    return chained


def _first_words(found: list[BaseException]) -> str:
    first = found[0]
    return _short(f"{type(first).__name__}: {first}")


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else f"{text[:limit]}…"


async def list_tools(endpoint: Endpoint, limits: Limits) -> list[Tool]:
    """Every tool `endpoint` lists now (all pages, up to `MAX_PAGES`), bypassing any cache.

    Raises:
        ServerProblem: the server could not be reached or answered badly.
    """
    result: list[Tool] = await _bounded(endpoint, "its tool list", limits, _all_tools)
    return result


async def _all_tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def call_round(  # noqa: PLR0913  (one round of a call: what, with what, answering what)
    endpoint: Endpoint,
    tool: str,
    arguments: dict[str, Any],
    *,
    limits: Limits,
    meta: Mapping[str, Any],
    answers: Mapping[str, ElicitResult] | None = None,
    request_state: str | None = None,
    relist: Callable[[list[Tool]], bool] | None = None,
) -> CallToolResult | InputRequiredResult | None:
    """One round of `tools/call`: the result, or the server's questions (`InputRequiredResult`).

    A first round carries no answers; a retry carries the answers to the last round's questions,
    keyed as the server keyed them, and its `request_state` as it sent it. With `relist`, the
    server's tools are listed first on the same connection and handed to it: when it says no, the
    call is not made (None).

    Raises:
        ServerProblem: the server could not be reached, timed out, or answered badly.
    """

    async def round_trip(client: Client) -> CallToolResult | InputRequiredResult | None:
        if relist is not None and not relist(await _all_tools(client)):
            return None
        result = await client.session.call_tool(
            tool,
            arguments,
            read_timeout_seconds=limits.timeout_seconds,
            input_responses=cast("InputResponses", dict(answers)) if answers else None,
            request_state=request_state,
            meta=cast("RequestParamsMeta", dict(meta)),
            allow_input_required=True,
        )
        if not isinstance(result, CallToolResult | InputRequiredResult):
            msg = f"a result of type {type(result).__name__}"
            raise TypeError(msg)
        return result

    return await _bounded(endpoint, f"the call of {tool}", limits, round_trip)
