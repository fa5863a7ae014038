"""A fill of paused runs through the real server: every interrupted thread keeps its inbox rows.

Readers of the runtime run side by side (the marks every 0.25 s, the watcher's repair, a waited
request) and each awaits between reading a thread and writing its rows; under a fill one of them
held a thread's `busy` record while another wrote its pause, then deleted the pause's rows after
the mark had settled and the watermark had passed it: the thread was lost to the inbox for good
(1-17 of 600 in the runs measured before `hitl_inbox_read`). Rows are compared here with the
runtime's interrupted threads once the server has gone quiet, and the counts with `count(*)`.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, func, select

from agents.offline import phrases
from server.ledger.storage import inbox, inbox_counts
from tests.conftest import add_order
from tests.devserver import DevServer, serving, user_clients
from tests.server.test_inbox_marks import quiet

if TYPE_CHECKING:
    from collections.abc import Iterator

    from langgraph_sdk.client import LangGraphClient

pytestmark = [pytest.mark.server, pytest.mark.long]
RUNS = 600
IN_FLIGHT = 100
"""Runs started and not yet paused: the bench's fill window (`fill_window`)."""
SENDERS = 8
AMOUNT = 450.0
FILL_SECONDS = 240.0
"""A fill measured at 35-80 s on 2 shared cores; the test's own limit (`timeout`) is 300 s."""


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[DevServer]:
    """This module's own `langgraph dev`, its watcher passing every second (as `test_inbox_marks`)."""
    with serving(tmp_path_factory.mktemp("inbox-fill"), {"HITL_WATCH_INTERVAL": "1"}) as running:
        yield running


async def fill(client: LangGraphClient, server: DevServer) -> None:
    """`RUNS` refunds that pause for a reviewer, at most `IN_FLIGHT` not yet paused, `SENDERS` at a time."""
    orders = [add_order(server.services, AMOUNT) for _ in range(RUNS)]
    slots = asyncio.Semaphore(SENDERS)

    async def pause(order_id: str) -> None:
        async with slots:
            thread = await client.threads.create()
            request = {"messages": [{"role": "user", "content": phrases.refund_amount(AMOUNT, order_id)}]}
            await client.runs.create(thread["thread_id"], "support", input=request)

    sent: list[asyncio.Task[None]] = []
    deadline = time.monotonic() + FILL_SECONDS
    paused = 0
    while paused < RUNS:
        assert time.monotonic() < deadline, f"{paused}/{RUNS} paused after {FILL_SECONDS:.0f} s"
        while len(sent) < RUNS and len(sent) - paused < IN_FLIGHT:
            sent.append(asyncio.create_task(pause(orders[len(sent)])))
        await asyncio.sleep(0.25)
        paused = await client.threads.count(status="interrupted")
        assert await client.threads.count(status="error") == 0
    await asyncio.gather(*sent)


async def interrupted_ids(client: LangGraphClient) -> set[str]:
    found: set[str] = set()
    while page := await client.threads.search(status="interrupted", limit=1000, offset=len(found)):
        found |= {str(t["thread_id"]) for t in page}
    return found


async def test_every_thread_paused_in_a_fill_has_its_rows_and_the_counts_are_count(server):
    """fill: 600 pauses; once quiet, `hitl_inbox` has rows of just the interrupted threads; counts == rows."""
    async with user_clients(server.url) as make:
        requester, reviewer = make("requester1"), make("reviewer1")
        await fill(requester, server)
        await quiet(server)
        waiting = await interrupted_ids(requester)
        page = await reviewer.http.get("/inbox", params={"limit": 1})
    engine = create_engine(server.layer_url)
    try:
        with engine.connect() as conn:
            listed = set(conn.scalars(select(inbox.c.thread_id).distinct()))
            rows = conn.scalar(select(func.count()).select_from(inbox))
            counted = conn.scalar(select(func.coalesce(func.sum(inbox_counts.c.n), 0)))
    finally:
        engine.dispose()
    assert len(waiting) == RUNS
    assert sorted(waiting - listed) == [], "interrupted threads without inbox rows"
    assert sorted(listed - waiting) == [], "inbox rows of threads no longer interrupted"
    assert (rows, counted, page["total"]) == (RUNS, RUNS, RUNS)
