"""The approval cycle through a replica's published port: ask for a refund, find it, answer it, verify it.

Plain HTTP with a user's bearer token, as the web app and the SDK send it. The refund phrase is
the scripted model's (`agents.offline.phrases`), so the stack needs no model key. Not for what
the answers are checked against (`deploy.check.steps`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from agents.offline import phrases

if TYPE_CHECKING:
    from collections.abc import Callable

RUN_SECONDS = 180.0
T = TypeVar("T")


class CheckFailedError(AssertionError):
    """What the deployment was checked for did not hold."""


def expect(condition: object, failure: str) -> None:
    """Raise CheckFailedError(`failure`) unless `condition` holds."""
    if not condition:
        raise CheckFailedError(failure)


def until(check: Callable[[], T], what: str, seconds: float = 180, every: float = 1) -> T:
    """Poll `check` until it returns something truthy (its result), or fail naming `what`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if result := check():
                return result
        except (httpx.HTTPError, OSError):
            pass
        time.sleep(every)
    msg = f"{what}: not within {seconds:.0f} s"
    raise CheckFailedError(msg)


class Replica:
    """One replica's published port, as one user."""

    def __init__(self, url: str, token: str) -> None:
        """A client of `url` sending `token`."""
        self.url = url
        self.client = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=RUN_SECONDS
        )

    def close(self) -> None:
        """Close the connection pool."""
        self.client.close()

    def ask_refund(self, order_id: str) -> tuple[str, str]:
        """Ask for a full refund of `order_id` and wait for the run; the thread and its pending interrupt."""
        thread_id = self.client.post("/threads", json={}).raise_for_status().json()["thread_id"]
        body = {
            "assistant_id": "support",
            "input": {"messages": [{"role": "user", "content": phrases.refund_in_full(order_id)}]},
        }
        self.client.post(f"/threads/{thread_id}/runs/wait", json=body).raise_for_status()
        thread = self.thread(thread_id)
        interrupts = [i for batch in (thread.get("interrupts") or {}).values() for i in batch]
        expect(
            thread["status"] == "interrupted" and len(interrupts) == 1,
            f"the refund of {order_id} did not pause for one approval "
            f"(thread {thread_id}: {thread['status']}, {len(interrupts)} interrupts)",
        )
        return thread_id, str(interrupts[0]["id"])

    def ask(self, text: str) -> tuple[str, str]:
        """Send `text` to support and wait for the run; the thread and its one pending interrupt.

        Raises:
            CheckFailedError: the run did not pause for exactly one approval.
        """
        thread_id = self.client.post("/threads", json={}).raise_for_status().json()["thread_id"]
        body = {"assistant_id": "support", "input": {"messages": [{"role": "user", "content": text}]}}
        self.client.post(f"/threads/{thread_id}/runs/wait", json=body).raise_for_status()
        thread = self.thread(thread_id)
        interrupts = [i for batch in (thread.get("interrupts") or {}).values() for i in batch]
        expect(
            thread["status"] == "interrupted" and len(interrupts) == 1,
            f"{text!r} did not pause for one approval (thread {thread_id}: {thread['status']})",
        )
        return thread_id, str(interrupts[0]["id"])

    def thread(self, thread_id: str) -> dict[str, Any]:
        """The thread's record."""
        return dict(self.client.get(f"/threads/{thread_id}").raise_for_status().json())

    def inbox(self) -> set[str]:
        """The threads this user's inbox lists (first page of 500)."""
        page = self.client.get("/inbox", params={"limit": 500}).raise_for_status().json()
        return {item["thread_id"] for item in page["items"]}

    def approve(self, thread_id: str, interrupt_id: str) -> httpx.Response:
        """Approve the one pending refund of the thread and wait for the run it starts."""
        body = {
            "assistant_id": "support",
            "command": {"resume": {interrupt_id: {"decisions": [{"type": "approve"}]}}},
        }
        return self.client.post(f"/threads/{thread_id}/runs/wait", json=body)

    def verified(self, thread_id: str) -> dict[str, Any]:
        """GET /audit/{thread}/verification: the trail's and the receipts' verdict."""
        return dict(self.client.get(f"/audit/{thread_id}/verification").raise_for_status().json())

    def ok(self) -> bool:
        """Whether GET /ok answers {"ok": true}."""
        return bool(httpx.get(f"{self.url}/ok", timeout=5).json().get("ok"))
