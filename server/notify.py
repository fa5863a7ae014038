"""Pause notifications: a small JSON notice POSTed to `HITL_NOTIFY_URL`, retried, never fatal.

Off when the URL is empty. A failure is logged after the last attempt; it never reaches
the run or the watcher that sent it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx

from server import metrics

logger = logging.getLogger(__name__)
ATTEMPTS = 3
FIRST_BACKOFF_SECONDS = 0.5


async def send_notice(url: str, notice: dict[str, Any], *, client: httpx.AsyncClient | None = None) -> bool:
    """POST `notice` to `url`, up to `ATTEMPTS` times with growing pauses; True if delivered."""
    own = client is None
    http = client or httpx.AsyncClient(timeout=5)
    try:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                response = await http.post(url, json=notice)
                response.raise_for_status()
            except httpx.HTTPError as error:
                if attempt == ATTEMPTS:
                    logger.warning("notice to %s failed after %d attempts: %s", url, attempt, error)
                    metrics.notice(str(notice.get("event")), sent=False)
                    return False
                await asyncio.sleep(FIRST_BACKOFF_SECONDS * 2 ** (attempt - 1))
            else:
                metrics.notice(str(notice.get("event")), sent=True)
                return True
        return False
    finally:
        if own:
            await http.aclose()


def pause_notice(item: dict[str, Any], public_url: str, event: str = "approval_pending") -> dict[str, Any]:
    """The notice for one inbox row (see `server.inbox.items_of`)."""
    return {
        "event": event,
        "thread_id": item["thread_id"],
        "interrupt_id": item["interrupt_id"],
        "agent": item["agent"],
        "tool": item["tool"],
        "required_role": item["required_role"],
        "description": item["description"],
        "inbox": f"{public_url.rstrip('/')}/inbox",
        "link": f"{public_url.rstrip('/')}/app/#/threads/{item['thread_id']}",
    }
