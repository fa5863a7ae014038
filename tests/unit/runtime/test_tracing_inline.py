"""LangSmith's per-hook bookkeeping runs in place while tracing is off, in a worker thread when on.

LangChain wraps each async middleware hook in `traceable` as below; the loop's default executor
counts what is handed to a thread.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

import langsmith
import pytest
from langsmith import Client, traceable, tracing_context

from server.runtime import tracing_inline
from tests.fresh_interpreter import last_line

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

HOOK_CALLS = 5
INSTALLED_BY_THE_APP = """
import server.http.app
from langsmith._runtime_overrides import get_runtime_overrides
print(getattr(get_runtime_overrides().aio_to_thread, "__name__", None))
"""
LOOPBACK = Client(api_url="http://127.0.0.1:9", api_key="not-a-key", info={}, auto_batch_tracing=False)
"""A client that could only reach loopback; local tracing sends nothing."""


class CountingExecutor(ThreadPoolExecutor):
    """The loop's default executor, counting the calls handed to its threads."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.handed = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        self.handed += 1
        return super().submit(fn, *args, **kwargs)


@traceable(name="ApprovalGate.awrap_tool_call")
async def hook(value: int) -> int:
    """What LangChain wraps: a middleware's async hook."""
    await asyncio.sleep(0)
    return value + 1


@pytest.fixture
def installed() -> Iterator[None]:
    tracing_inline.install()
    try:
        yield
    finally:
        langsmith.set_runtime_overrides()


def handed_to_threads(*, traced: bool | Literal["local"] | None) -> tuple[int, list[int]]:
    """Thread hand-offs and results of `HOOK_CALLS` hook calls, tracing as `traced` says."""
    executor = CountingExecutor()

    async def calls() -> list[int]:
        asyncio.get_running_loop().set_default_executor(executor)
        with tracing_context(enabled=traced, client=LOOPBACK):
            return [await hook(i) for i in range(HOOK_CALLS)]

    try:
        results = asyncio.run(calls())
    finally:
        executor.shutdown()
    return executor.handed, results


@pytest.mark.usefixtures("installed")
def test_untraced_hooks_hand_nothing_to_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGSMITH_TRACING", raising=False)
    monkeypatch.delenv("LANGCHAIN_TRACING_V2", raising=False)
    assert handed_to_threads(traced=False) == (0, [1, 2, 3, 4, 5])
    assert handed_to_threads(traced=None) == (0, [1, 2, 3, 4, 5])


@pytest.mark.usefixtures("installed")
def test_traced_hooks_keep_langsmith_s_worker_thread() -> None:
    handed, results = handed_to_threads(traced="local")  # traced, sent nowhere
    assert results == [1, 2, 3, 4, 5]
    assert handed == 2 * HOOK_CALLS  # the run's setup and its end, as LangSmith does it


def test_without_it_every_hook_call_hands_two_to_threads() -> None:
    """What the override removes: still there in LangSmith (this fails once LangSmith stops it)."""
    langsmith.set_runtime_overrides()
    assert handed_to_threads(traced=False) == (2 * HOOK_CALLS, [1, 2, 3, 4, 5])


def test_the_server_app_installs_it() -> None:
    """In a fresh interpreter: this one may have imported the app (and reset LangSmith) already."""
    assert last_line(INSTALLED_BY_THE_APP) == "in_place_when_untraced"
