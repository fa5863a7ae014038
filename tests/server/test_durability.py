"""Pending approvals survive the death of `langgraph dev`: killed, restarted in the same directory.

Each test runs its own server in its own directory (a restart is the point), acting as the dev
users: requester1 asks, supervisor1 decides. The embedded runtime saves its thread and run
records only every 10 s; `server.runtime.checkpointer` and `server.runtime.recovery` must make up the rest.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sqlite3
import time
from typing import TYPE_CHECKING

import pytest

from agents.offline import phrases
from tests.conftest import add_order
from tests.devserver import DEV_TOKENS, sdk_client, start_dev_server, stop
from tests.server.helpers import APPROVE, decisions, only_pending, start

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.server, pytest.mark.long]

PENDING = 20
RECORDS = ".langgraph_api/.langgraph_ops.pckl"
"""Where the embedded runtime saves its thread and run records (every 10 s, and on a clean stop)."""


def client(server, user: str):
    return sdk_client(url=server.url, headers={"Authorization": f"Bearer {DEV_TOKENS[user]}"})


def refunded(services, orders: list[str]) -> int:
    return sum(len(services.payments.refunds_for(order_id)) for order_id in orders)


def humans(state: dict) -> int:
    return sum(message["type"] == "human" for message in state["values"]["messages"])


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
async def test_twenty_pending_approvals_survive_a_restart(tmp_path, how):
    """20 pending refunds survive SIGKILL right after the last one paused, and a clean SIGTERM.

    Before the SIGKILL the runtime saved its records after the 20 threads were made and before
    their runs were (what a save amid the requests leaves): such a record knows no graph, and
    recovery gives each thread back the graph its checkpoints name. After the restart all 20 are
    listed as interrupted, still owned by requester1 and each with its refund pending; each approve
    then refunds exactly once, and no turn was replayed.
    """
    first = start_dev_server(tmp_path)
    requester = client(first, "requester1")
    try:
        services = first.services
        orders = [add_order(services, 101 + n) for n in range(PENDING)]
        made: list[str | None] = [None] * PENDING
        if how == signal.SIGKILL:
            made = [(await requester.threads.create())["thread_id"] for _ in orders]
            await saved_after(tmp_path / RECORDS, time.time_ns())
        texts = [phrases.refund_in_full(order_id) for order_id in orders]
        asks = [start(requester, text, thread_id=t) for text, t in zip(texts, made, strict=True)]
        started = await asyncio.gather(*asks)
    finally:
        stop(first.process, how)
        await requester.aclose()
    assert [thread["status"] for _, thread in started] == ["interrupted"] * PENDING
    threads = dict(zip(orders, (thread_id for thread_id, _ in started), strict=True))

    second = start_dev_server(tmp_path)
    requester, supervisor = client(second, "requester1"), client(second, "supervisor1")
    try:
        listed = await requester.threads.search(status="interrupted", limit=100)
        assert {t["thread_id"] for t in listed} == set(threads.values())
        for order_id, thread_id in threads.items():
            thread = await supervisor.threads.get(thread_id)
            assert thread["metadata"]["owner"] == "requester1"
            assert thread["metadata"]["graph_id"] == "support"
            action = only_pending(thread)["value"]["action_requests"][0]
            assert (action["name"], action["args"]["order_id"]) == ("issue_refund", order_id)
        assert refunded(services, orders) == 0

        results = await asyncio.gather(
            *(supervisor.runs.wait(t, "support", command=decisions(APPROVE)) for t in threads.values())
        )

        for (order_id, thread_id), result in zip(threads.items(), results, strict=True):
            assert (
                f"Refunded {services.orders.get(order_id)['amount']:g} on order {order_id}"
                in (result["messages"][-1]["content"])
            )
            assert len(services.payments.refunds_for(order_id)) == 1
            assert humans(await supervisor.threads.get_state(thread_id)) == 1
        assert refunded(services, orders) == PENDING
    finally:
        stop(second.process)
        await requester.aclose()
        await supervisor.aclose()


async def test_a_run_the_crash_cut_off_is_not_replayed(tmp_path):
    """A run the crash cut off is closed or continued, never applied again.

    The records were last saved while two approvals were still queued; both ran, then the server
    was killed. After the restart thread A's later e-mail stays pending and is not sent without a
    decision; thread B, cut off mid-step, continues and finishes its refund once.
    """
    first = start_dev_server(tmp_path)
    services = first.services
    order_a, order_b = add_order(services, 240), add_order(services, 260)
    requester, supervisor = client(first, "requester1"), client(first, "supervisor1")
    records = tmp_path / RECORDS
    try:
        (thread_a, _), (thread_b, _) = [
            await start(requester, phrases.refund_in_full(o)) for o in (order_a, order_b)
        ]
        # Queued for 25 s, so the runtime's next 10-second save records both approvals as pending
        # (the next after both were made: one between the two would not know run B).
        run_a, run_b = [
            await supervisor.runs.create(t, "support", command=decisions(APPROVE), after_seconds=25)
            for t in (thread_a, thread_b)
        ]
        await saved_after(records, time.time_ns())
        shutil.copy(records, tmp_path / "records-at-the-crash")
        for thread_id, run in ((thread_a, run_a), (thread_b, run_b)):
            assert (await supervisor.runs.get(thread_id, run["run_id"]))["status"] == "pending"
        for thread_id, run in ((thread_a, run_a), (thread_b, run_b)):
            await supervisor.runs.join(thread_id, run["run_id"])
        await requester.runs.wait(
            thread_a,
            "support",
            input={"messages": [{"role": "user", "content": phrases.email_customer(order_a)}]},
        )
        assert only_pending(await supervisor.threads.get(thread_a))["value"]["action_requests"][0][
            "name"
        ] == ("send_email")
    finally:
        stop(first.process, signal.SIGKILL)
        await requester.aclose()
        await supervisor.aclose()
    # The crash came before the next save; thread B's run died just after its first step.
    shutil.copy(tmp_path / "records-at-the-crash", records)
    cut_after_first_step(tmp_path / "data" / "checkpoints.db", thread_b, run_b["run_id"])

    second = start_dev_server(tmp_path)
    supervisor = client(second, "supervisor1")
    email_a = services.orders.get(order_a)["customer_email"]
    try:
        await supervisor.runs.join(thread_b, run_b["run_id"])
        assert (await supervisor.runs.get(thread_b, run_b["run_id"]))["status"] == "success"
        thread = await supervisor.threads.get(thread_a)
        assert thread["status"] == "interrupted"
        assert only_pending(thread)["value"]["action_requests"][0]["name"] == "send_email"
        assert services.outbox.sent_to(email_a) == []
        assert (await supervisor.threads.get(thread_b))["status"] == "idle"
        state_b = await supervisor.threads.get_state(thread_b)
        assert f"Refunded 260 on order {order_b}" in state_b["values"]["messages"][-1]["content"]
        assert humans(state_b) == 1
        assert [len(services.payments.refunds_for(o)) for o in (order_a, order_b)] == [1, 1]

        await supervisor.runs.wait(thread_a, "support", command=decisions(APPROVE))
        assert len(services.outbox.sent_to(email_a)) == 1
    finally:
        stop(second.process)
        await supervisor.aclose()


async def saved_after(records: Path, moment_ns: int) -> None:
    """Wait (bounded: 60 s) until the runtime has saved its records after `moment_ns`."""
    deadline = time.monotonic() + 60
    while not await asyncio.to_thread(modified_after, records, moment_ns):
        if time.monotonic() > deadline:
            pytest.fail(f"the dev server did not save {records} within 60 s")
        await asyncio.sleep(0.2)


def modified_after(path: Path, moment_ns: int) -> bool:
    return path.exists() and path.stat().st_mtime_ns > moment_ns


def cut_after_first_step(checkpoints: Path, thread_id: str, run_id: str) -> None:
    """Forget every checkpoint `run_id` wrote on `thread_id` after its first, as if it died there."""
    with sqlite3.connect(checkpoints) as db:
        rows = db.execute(
            "SELECT checkpoint_id, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread_id,),
        ).fetchall()
        written = sorted(cid for cid, meta in rows if json.loads(meta).get("run_id") == run_id)
        assert len(written) > 1, written
        for table in ("checkpoints", "writes"):
            db.execute(
                f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id > ?",  # noqa: S608
                (thread_id, written[0]),
            )
