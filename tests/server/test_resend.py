"""The same answer sent again is the same decision (`server.decisions.store`), through the real server.

A client that lost the first answer's reply (a timeout, a 500) sends it again, with the same
Idempotency-Key or the same body: after it was applied it is told so (409, nothing done again,
nothing recorded again); when its run never ran, the re-send becomes that run, with the first
answer's receipts. A key sent again with another answer is refused. Another person's answer
to a decided approval stays a refused attempt on the record.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from agents.offline import phrases
from server.http.outgoing import tls
from tests.devserver import TOKENS
from tests.server.helpers import only_pending, start

pytestmark = pytest.mark.server


def body(interrupt_id: str, answer: str = "approve", **more) -> dict:
    """A run that answers `interrupt_id`'s one refund with `answer`."""
    return {
        "assistant_id": "support",
        "command": {"resume": {interrupt_id: {"decisions": [{"type": answer}]}}},
        **more,
    }


async def paused(requester, order_id: str) -> tuple[str, str]:
    """A refund of `order_id` waiting for approval: its thread and interrupt."""
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id))
    return thread_id, only_pending(thread)["id"]


def as_user(server, user: str) -> httpx.AsyncClient:
    """A plain HTTP client of the server as `user`."""
    return httpx.AsyncClient(
        base_url=server.url, headers={"Authorization": f"Bearer {TOKENS[user]}"}, timeout=60, verify=tls()
    )


async def accepted(client: httpx.AsyncClient, thread_id: str) -> list[dict]:
    """The thread's audit records, (decision, reviewer, outcome)."""
    records = (await client.get(f"/audit/{thread_id}")).json()["records"]
    return [(r["decision"], r["reviewer"], r["outcome"]) for r in records]


async def test_an_approval_sent_again_after_it_was_applied_is_told_so(
    server, requester, server_order, server_services
):
    """re-send: same key or body, 409 "Already applied", nothing again; another person: refused, audited."""
    order_id = server_order(450)
    thread_id, interrupt_id = await paused(requester, order_id)
    key = {"Idempotency-Key": f"k-{order_id}"}
    async with as_user(server, "supervisor1") as supervisor, as_user(server, "reviewer1") as reviewer:
        first = await supervisor.post(f"/threads/{thread_id}/runs/wait", json=body(interrupt_id), headers=key)
        assert first.status_code == 200, first.text
        for headers in (key, {}):
            again = await supervisor.post(
                f"/threads/{thread_id}/runs/wait", json=body(interrupt_id), headers=headers
            )
            assert again.status_code == 409, again.text
            assert again.json()["detail"].startswith("Already applied: supervisor1's approve of issue_refund")
        other = await reviewer.post(f"/threads/{thread_id}/runs/wait", json=body(interrupt_id))
        assert other.status_code == 409, other.text
        assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [450.0]
        assert await accepted(supervisor, thread_id) == [
            ("approve", "supervisor1", "accepted"),
            ("refused", "reviewer1", "refused"),
        ]
        assert (await supervisor.get(f"/audit/{thread_id}/verification")).json()["ok"]


async def test_an_idempotency_key_sent_again_with_another_answer_is_refused(server, requester, server_order):
    """key reuse: the first answer stands; the same key with a reject is 422 naming the key."""
    order_id = server_order(450)
    thread_id, interrupt_id = await paused(requester, order_id)
    key = {"Idempotency-Key": f"k-{order_id}"}
    async with as_user(server, "supervisor1") as supervisor:
        first = await supervisor.post(f"/threads/{thread_id}/runs/wait", json=body(interrupt_id), headers=key)
        assert first.status_code == 200, first.text
        other = await supervisor.post(
            f"/threads/{thread_id}/runs/wait", json=body(interrupt_id, "reject"), headers=key
        )
        assert other.status_code == 422, other.text
        assert f"Idempotency-Key 'k-{order_id}' was sent before with another answer" in other.json()["detail"]
        bad = await supervisor.post(
            f"/threads/{thread_id}/runs/wait", json=body(interrupt_id), headers={"Idempotency-Key": "x" * 300}
        )
        assert bad.status_code == 422, bad.text


async def test_an_approval_whose_run_never_ran_is_applied_once_by_its_resend(
    server, requester, server_order, server_services
):
    """lost run: accepted, its run (delayed: a supervisor may) cancelled before it ran; the re-send runs it.

    The same receipts, one refund, one accepted record, a verified trail.
    """
    order_id = server_order(450)
    thread_id, interrupt_id = await paused(requester, order_id)
    key = {"Idempotency-Key": f"k-{order_id}"}
    async with as_user(server, "supervisor1") as supervisor, as_user(server, "requester1") as owner:
        later = body(interrupt_id, after_seconds=3600)
        first = await supervisor.post(f"/threads/{thread_id}/runs", json=later, headers=key)
        assert first.status_code == 200, first.text
        run_id = first.json()["run_id"]
        cancelled = await owner.post(f"/threads/{thread_id}/runs/{run_id}/cancel")
        assert cancelled.status_code in {200, 202, 204}, cancelled.text
        told = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            again = await supervisor.post(
                f"/threads/{thread_id}/runs/wait", json=body(interrupt_id), headers=key
            )
            told.append(again.status_code if again.status_code == 200 else again.json()["detail"][:40])
            if again.status_code == 200 or again.json()["detail"].startswith("Already applied"):
                break
            await asyncio.sleep(1)
        assert told[0] != 200, told  # within the grace the first run may still appear
        assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [450.0], told
        assert await accepted(supervisor, thread_id) == [  # a supervisor's delayed resume is on the record
            ("approve", "supervisor1", "accepted"),
            ("state_write", "supervisor1", "accepted"),
        ]
        state = (await supervisor.get(f"/threads/{thread_id}/state")).json()
        receipts = [r for r in state["values"]["approval_receipts"] if r["interrupt_id"] == interrupt_id]
        assert len(receipts) == 1, receipts
        assert (await supervisor.get(f"/audit/{thread_id}/verification")).json()["ok"]
