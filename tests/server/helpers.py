"""Small helpers the server tests share: start a conversation, read pending interrupts."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx
import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator


async def start(
    client, text: str, agent: str = "support", thread_id: str | None = None
) -> tuple[str, dict[str, Any]]:
    """Send `text` as `client` on a new thread (or `thread_id`), and return the thread after the run."""
    if thread_id is None:
        thread_id = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread_id, agent, input={"messages": [{"role": "user", "content": text}]})
    return thread_id, await client.threads.get(thread_id)


def pending_list(thread: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pending interrupt of a thread returned by `threads.get`."""
    return [i for batch in (thread.get("interrupts") or {}).values() for i in batch]


def only_pending(thread: dict[str, Any]) -> dict[str, Any]:
    """The one pending interrupt of a thread."""
    interrupts = pending_list(thread)
    assert len(interrupts) == 1, interrupts
    return interrupts[0]


def decisions(*answers: dict[str, Any]) -> dict[str, Any]:
    """A batched resume command."""
    return {"resume": {"decisions": list(answers)}}


APPROVE = {"type": "approve"}


@contextmanager
def refused(status: int, match: str = "") -> Iterator[None]:
    """Expect the server to refuse the enclosed call with HTTP `status` and a message matching `match`."""
    with pytest.raises(httpx.HTTPStatusError) as caught:
        yield
    error = caught.value
    assert error.response.status_code == status, error
    said = " ".join([str(error), *getattr(error, "__notes__", []), str(getattr(error, "body", ""))])
    assert re.search(match, said), said
