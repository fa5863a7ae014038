"""Pause notifications: the small JSON notice the watcher POSTs to `HITL_NOTIFY_URL`.

Off when the URL is empty. Delivered at least once through `server.coordination.outbox` (retried, never
fatal to the run or the watcher), with its `notice_id` for the receiver to dedupe on.
"""

from __future__ import annotations

from typing import Any


def pause_notice(
    item: dict[str, Any], public_url: str, event: str = "approval_pending", notice_id: str = ""
) -> dict[str, Any]:
    """The notice for one inbox row (`inbox.items_of`); `notice_id` is stable across deliveries."""
    return {
        "notice_id": notice_id,
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
