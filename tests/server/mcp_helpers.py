"""What the MCP server tests share: fresh invoices in billing's database, the pending question, the trail."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from tests.server.helpers import pending_list

if TYPE_CHECKING:
    from services.registry import Services


def new_invoice(services: Services, amount: float = 120, owner: str | None = "requester1") -> str:
    """An open invoice of `amount` for `owner` in the business database billing serves; its id."""
    invoice_id = f"INV-{uuid.uuid4().int % 10**9:09d}"
    services.invoices.add(invoice_id, order_id="A1024", amount=amount, owner=owner)
    return invoice_id


def questions(thread: dict[str, Any]) -> list[dict[str, Any]]:
    """The MCP servers' questions pending on a thread (`mcp_elicitation` interrupts)."""
    return [i for i in pending_list(thread) if (i.get("value") or {}).get("type") == "mcp_elicitation"]


def only_question(thread: dict[str, Any]) -> dict[str, Any]:
    """The one pending MCP question of a thread."""
    found = questions(thread)
    assert len(found) == 1, pending_list(thread)
    return found[0]


async def last_reply(client, thread_id: str) -> str:
    """The last message of a thread's state, as text."""
    state = await client.threads.get_state(thread_id)
    content = state["values"]["messages"][-1]["content"]
    return content if isinstance(content, str) else str(content)


async def trail(client, thread_id: str) -> list[dict[str, Any]]:
    """The thread's audit records, oldest first."""
    return (await client.http.get(f"/audit/{thread_id}"))["records"]


async def until(check, seconds: float = 60):
    """Poll `check` (a coroutine function) until it returns something truthy, within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := await check():
            return result
        await asyncio.sleep(0.2)
    pytest.fail("condition not reached in time")


async def until_idle(client, thread_id: str) -> dict[str, Any]:
    """The thread once its run has ended (bounded)."""

    async def idle() -> dict[str, Any] | None:
        thread = await client.threads.get(thread_id)
        return thread if thread["status"] == "idle" else None

    return await until(idle)
