"""Tool calls whose arguments are not valid JSON: ask the model once more, then say why nothing ran.

A provider may cut a reply short or garble a call's arguments; `langchain-openai` keeps such a
call in `invalid_tool_calls`, which nothing runs, so the run would end on an empty message. This
is not a retry for provider errors (429, 5xx, timeouts): the chat model's own `max_retries` does that.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware, ModelResponse
from langchain_core.messages import AIMessage

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from langchain.agents.middleware import ModelRequest

ATTEMPTS = 2
"""Model calls per turn while every call of the reply is malformed (the first and one more)."""


class MalformedCallRetry(AgentMiddleware):  # type: ignore[type-arg]
    """Ask again when a reply's tool calls are all malformed; after the last attempt, say so."""

    def __init__(self, attempts: int = ATTEMPTS) -> None:
        """`attempts` model calls at most for one turn (at least one)."""
        super().__init__()
        self.attempts = max(1, attempts)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        """The first reply with a call that can run (or with none), else the last one explained."""
        response = handler(request)
        for _ in range(self.attempts - 1):
            if not _malformed(response):
                return response
            response = handler(request)
        return _explained(response, self.attempts)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """`wrap_model_call` for async runs (the server's)."""
        response = await handler(request)
        for _ in range(self.attempts - 1):
            if not _malformed(response):
                return response
            response = await handler(request)
        return _explained(response, self.attempts)


def _reply(response: ModelResponse[Any]) -> AIMessage | None:
    return next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)


def _malformed(response: ModelResponse[Any]) -> bool:
    reply = _reply(response)
    return reply is not None and bool(reply.invalid_tool_calls) and not reply.tool_calls


def _explained(response: ModelResponse[Any], attempts: int) -> ModelResponse[Any]:
    """The reply as it came, then one sentence for the person: which calls, what was wrong."""
    reply = _reply(response)
    if reply is None or not _malformed(response):
        return response
    names = ", ".join(sorted({str(c.get("name") or "a tool") for c in reply.invalid_tool_calls}))
    error = str(reply.invalid_tool_calls[0].get("error") or "")
    detail = re.search(r"JSONDecodeError:? ([^\n]+)", error)
    reason = f" ({detail.group(1).strip()})" if detail else ""
    tries = {1: "", 2: ", twice in a row"}.get(attempts, f", {attempts} times in a row")
    words = (
        f"Nothing was run: the model sent arguments for {names} that are not valid JSON{reason}{tries}. "
        "Please ask again."
    )
    return ModelResponse(
        result=[*response.result, AIMessage(content=words)],
        structured_response=response.structured_response,
    )
