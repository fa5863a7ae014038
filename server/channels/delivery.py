"""Delivering to a channel off the watcher's and the request's path: retried with backoff, never fatal.

Each delivery runs as its own background task, so a slow or failing Slack or SMTP server
never holds up a watcher pass, a button press or a run. Not for deciding what to send.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import httpx

from server.http import outgoing

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)
ATTEMPTS = 4
FIRST_BACKOFF_SECONDS = 0.5
TIMEOUT_SECONDS = 10.0
_RUNNING: set[asyncio.Task[bool]] = set()
"""Deliveries in flight (the event loop keeps only weak references to tasks)."""


class DeliveryError(Exception):
    """One attempt that did not deliver; the message says why."""


async def with_retries(what: str, attempt: Callable[[], Awaitable[None]]) -> bool:
    """Run `attempt` up to `ATTEMPTS` times, pausing twice as long each time; whether it ever succeeded."""
    for number in range(1, ATTEMPTS + 1):
        try:
            await attempt()
        except Exception as error:  # noqa: BLE001  (any failure of a channel is retried, then logged)
            if number == ATTEMPTS:
                logger.warning("channel: %s failed after %d attempts: %s", what, number, error)
                return False
            logger.info("channel: %s failed (attempt %d), retrying: %s", what, number, error)
            await asyncio.sleep(FIRST_BACKOFF_SECONDS * 2 ** (number - 1))
        else:
            return True
    return False


def in_background(
    what: str,
    attempt: Callable[[], Awaitable[None]],
    then: Callable[[bool], Awaitable[None]] | None = None,
) -> asyncio.Task[bool]:
    """Start delivering `what` with retries in a task of its own; the caller goes on at once.

    `then(delivered)` runs after the last attempt (`server.coordination.outbox` marks the notice there).
    """

    async def delivering() -> bool:
        delivered = await with_retries(what, attempt)
        if then is not None:
            try:
                await then(delivered)
            except Exception:  # the outbox tries again later: never an unhandled task error
                logger.exception("channel: could not record the outcome of %s", what)
        return delivered

    task = asyncio.create_task(delivering(), name=f"hitl-channel: {what}")
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
    return task


def post_json(url: str, body: dict[str, Any]) -> Callable[[], Awaitable[None]]:
    """One attempt at POSTing `body` as JSON to `url` (a non-2xx answer is a failure)."""

    async def attempt() -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS, verify=outgoing.tls()) as http:
            response = await http.post(url, json=body)
        if response.is_error:
            msg = f"HTTP {response.status_code} from {url}: {response.text[:200]}"
            raise DeliveryError(msg)

    return attempt
