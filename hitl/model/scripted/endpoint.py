"""An OpenAI-compatible HTTP endpoint for the scripted model, with provider failures on demand.

`hitl openai-scripted --port PORT` serves it on loopback, so the agents can run through
`langchain-openai` (`MODEL=openai:scripted OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`) without a
network. It is a test double of a provider, not a model server for real use.

Faults: `POST /faults {"fault": ..., "times": n}` arms one for the next n completions (any
client; with `"tool": name`, only those that offer that tool, e.g. a first-line reviewer's
verdict), the header `X-Scripted-Fault` fails one request; `GET /faults` counts what was served
(requests, streamed ones, faults).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hitl.model.scripted.wire import WireRequestError, answer, chunks, completion

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from starlette.requests import Request

    from hitl.model.scripted.script import ScriptFn

Fault = Literal["rate_limit", "server_error", "timeout", "malformed_arguments"]
FAULTS: tuple[str, ...] = get_args(Fault)
FAULT_HEADER = "X-Scripted-Fault"
MAX_ARMED = 100
RETRY_AFTER_MS = "20"
"""What a 429 or 500 asks the client to wait; `openai` honours it, so retries stay quick in tests."""


@dataclass
class FaultBoard:
    """Faults armed for the next completions (or those offering one tool), and a count of what was served."""

    armed: list[Fault] = field(default_factory=list)
    served: Counter[str] = field(default_factory=Counter)
    stall_seconds: float = 30.0
    armed_for: dict[str, list[Fault]] = field(default_factory=dict)
    """Faults for the next completions that offer a tool of this name (a first-line reviewer's verdict)."""

    def next_fault(self, request: Request, body: object = None) -> Fault | None:
        """The fault this request gets: its header's, else the next armed for a tool it offers, or for any."""
        named = request.headers.get(FAULT_HEADER)
        if named in FAULTS:
            return named  # type: ignore[return-value]
        for tool in _offered(body):
            if self.armed_for.get(tool):
                return self.armed_for[tool].pop(0)
        return self.armed.pop(0) if self.armed else None

    def report(self) -> dict[str, Any]:
        """What is armed and what was served so far."""
        return {
            "armed": list(self.armed),
            "armed_for": {tool: list(faults) for tool, faults in self.armed_for.items() if faults},
            "served": dict(self.served),
            "stall_seconds": self.stall_seconds,
        }


def _offered(body: object) -> list[str]:
    """The names of the tools a chat-completions body offers."""
    tools = body.get("tools") if isinstance(body, dict) else None
    functions = [t.get("function") for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    return [f["name"] for f in functions if isinstance(f, dict) and isinstance(f.get("name"), str)]


def make_app(board: FaultBoard | None = None, scripts: Sequence[ScriptFn] | None = None) -> Starlette:
    """The endpoint as an ASGI app; `board` holds its faults (a new one when None).

    It answers with `scripts` (None: every script the agents built in this process declared).
    """
    provider = ScriptedProvider(board or FaultBoard(), None if scripts is None else tuple(scripts))
    return Starlette(
        routes=[
            Route("/v1/models", provider.models, methods=["GET"]),
            Route("/v1/chat/completions", provider.chat_completions, methods=["POST"]),
            Route("/faults", provider.report, methods=["GET"]),
            Route("/faults", provider.arm, methods=["POST"]),
            Route("/faults", provider.clear, methods=["DELETE"]),
        ]
    )


@dataclass(frozen=True)
class ScriptedProvider:
    """The endpoint's routes over one fault board."""

    faults: FaultBoard
    scripts: tuple[ScriptFn, ...] | None = None

    async def models(self, _: Request) -> Response:
        """`GET /v1/models`: the one model there is."""
        model = {"id": "scripted", "object": "model", "created": 0, "owned_by": "hitl-agent-server"}
        return JSONResponse({"object": "list", "data": [model]})

    async def chat_completions(self, request: Request) -> Response:
        """`POST /v1/chat/completions`, streamed when the body asks, failing when a fault says so."""
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "invalid_request_error", "the body is not JSON")
        fault = self.faults.next_fault(request, body)
        streamed = isinstance(body, dict) and bool(body.get("stream"))
        self.faults.served.update(
            ["requests", *(["streamed"] if streamed else []), *([fault] if fault else [])]
        )
        if fault == "rate_limit":
            return _error(429, "rate_limit_exceeded", "Rate limit reached for scripted (a fault on request).")
        if fault == "server_error":
            return _error(500, "server_error", "The scripted provider failed (a fault on request).")
        if fault == "timeout":
            await asyncio.sleep(self.faults.stall_seconds)
        try:
            reply = answer(body, self.scripts)
        except WireRequestError as error:
            return _error(400, "invalid_request_error", str(error))
        if fault == "malformed_arguments":
            reply = reply.malformed()
        if not body.get("stream"):
            return JSONResponse(completion(reply))
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))

        async def events() -> AsyncIterator[str]:
            for chunk in chunks(reply, include_usage=include_usage):
                yield json.dumps(chunk)
            yield "[DONE]"

        return EventSourceResponse(events(), ping=None)  # type: ignore[arg-type]

    async def arm(self, request: Request) -> Response:
        """`POST /faults {"fault", "times", "stall_seconds", "tool"}`: fail the next completions."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("fault") not in FAULTS:
            return _error(400, "invalid_request_error", f"'fault' must be one of {', '.join(FAULTS)}")
        times = body.get("times", 1)
        if not isinstance(times, int) or not 1 <= times <= MAX_ARMED:
            return _error(400, "invalid_request_error", f"'times' must be an integer from 1 to {MAX_ARMED}")
        tool = body.get("tool")
        if tool is not None and not (isinstance(tool, str) and tool):
            return _error(400, "invalid_request_error", "'tool', when given, must name a tool")
        if isinstance(stall := body.get("stall_seconds"), int | float):
            self.faults.stall_seconds = float(stall)
        armed = self.faults.armed if tool is None else self.faults.armed_for.setdefault(tool, [])
        armed.extend([body["fault"]] * times)
        return JSONResponse(self.faults.report())

    async def report(self, _: Request) -> Response:
        """`GET /faults`: what is armed, what was served."""
        return JSONResponse(self.faults.report())

    async def clear(self, _: Request) -> Response:
        """`DELETE /faults`: nothing armed, counts back to zero."""
        self.faults.armed.clear()
        self.faults.armed_for.clear()
        self.faults.served.clear()
        return JSONResponse(self.faults.report())


def _error(status: int, code: str, message: str) -> JSONResponse:
    """An error body in OpenAI's shape, which `openai` turns into a typed exception."""
    kind = "invalid_request_error" if status == 400 else code  # noqa: PLR2004
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    headers = {"retry-after-ms": RETRY_AFTER_MS} if status >= 429 else {}  # noqa: PLR2004
    return JSONResponse(body, status_code=status, headers=headers)


def serve(port: int, host: str = "127.0.0.1") -> None:
    """Serve the endpoint until interrupted, with the scripts declared so far (`served.load_graphs`)."""
    import uvicorn  # noqa: PLC0415  (only needed to serve)

    uvicorn.run(make_app(), host=host, port=port, log_level="warning")
