"""LangSmith's bookkeeping of each async middleware hook, run in place while nothing is traced.

LangChain wraps every `awrap_model_call` and `awrap_tool_call` of an agent's middleware in
LangSmith's `traceable`, which hands its run setup and its run end to a worker thread
(`run_in_executor`) on every call, tracing on or off: two thread hand-offs per hook and call,
about 30 of them per approval cycle of a Deep Agent, each a wake-up of a pool thread and a
callback on the event loop. With tracing off that work is a few dictionary reads, so the
server runs it in place through LangSmith's public override (`set_runtime_overrides`); a
traced call (`LANGSMITH_TRACING`, or `tracing_context(enabled=True)`) still goes to the thread,
as LangSmith does it. Installed once per process by the server's app, for every graph it serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import langsmith
from langsmith.utils import tracing_is_enabled

if TYPE_CHECKING:
    import contextvars
    from collections.abc import Awaitable, Callable

    DefaultToThread = Callable[..., Awaitable[Any]]


async def in_place_when_untraced(
    default: DefaultToThread,
    ctx: contextvars.Context,
    func: Callable[..., Any],
    /,
    *args: Any,  # noqa: ANN401  (LangSmith's own arguments, passed on)
    **kwargs: Any,  # noqa: ANN401
) -> Any:  # noqa: ANN401  (what `func` returns)
    """`func(*args, **kwargs)` inside `ctx`: in place while tracing is off, else LangSmith's way."""
    if ctx.run(tracing_is_enabled):
        return await default(ctx, func, *args, **kwargs)
    return ctx.run(func, *args, **kwargs)


def install() -> None:
    """Run LangSmith's per-hook bookkeeping in place while tracing is off, in this process."""
    langsmith.set_runtime_overrides(aio_to_thread=in_place_when_untraced)
