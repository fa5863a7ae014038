"""Refused writes mark nothing, and an inbox page re-reads no thread, through the real server (issue 54.3).

A DELETE the server refuses (409: the thread holds a pending approval) or a PATCH the engine
answers 404 (another person's thread) changes nothing, so the inbox table has nothing to read
again: `hitl_inbox_marked_threads` stays 0 and `hitl_inbox_threads_reread_total` does not move,
while a reviewer's `GET /inbox` still lists every pause. A write the engine makes is still read
(`test_inbox_marks_made`).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from agents.offline import phrases
from server.http.outgoing import tls
from tests.conftest import add_order
from tests.devserver import DEV_TOKENS, DevServer, serving
from tests.server.helpers import start

if TYPE_CHECKING:
    from collections.abc import Iterator

    from services.registry import Services

pytestmark = pytest.mark.server
PAUSED = 4
REFUSED_WRITES = 1000
AT_ONCE = 8
QUIET_SECONDS = 2.5
"""Two watcher passes and ten reads of the marks with nothing read again: nothing left to catch up on."""
WATCH_INTERVAL = "1"
SETTLE_SECONDS = 150.0


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[DevServer]:
    """This module's own `langgraph dev`: its counters move only with what these tests do.

    Its watcher passes every second, so the first pass over new pauses (which reads them) is over
    before the quiet the tests wait for.
    """
    with serving(tmp_path_factory.mktemp("inbox-marks"), {"HITL_WATCH_INTERVAL": WATCH_INTERVAL}) as running:
        yield running


@pytest.fixture(scope="module")
def server_services(server) -> Services:
    """The business services behind this module's server."""
    return server.services


def http(server: DevServer, user: str) -> httpx.AsyncClient:
    token = {"Authorization": f"Bearer {DEV_TOKENS[user]}"}
    return httpx.AsyncClient(base_url=server.url, headers=token, timeout=60, verify=tls())


async def reads_by_why(server: DevServer) -> tuple[dict[str, float], float]:
    """Threads read again so far by why, and threads marked now, from GET /hitl/metrics."""
    async with http(server, "reviewer1") as client:
        answer = await client.get("/hitl/metrics")
    assert answer.status_code == 200, answer.text
    reread: dict[str, float] = {}
    marked = -1.0
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            if sample.name == "hitl_inbox_threads_reread_total":
                reread[sample.labels["why"]] = sample.value
            elif sample.name == "hitl_inbox_marked_threads":
                marked = sample.value
    assert marked >= 0, "GET /hitl/metrics has no hitl_inbox_marked_threads"
    return reread, marked


async def inbox_reads(server: DevServer) -> tuple[float, float]:
    """Threads read again so far (every why) and threads marked now."""
    reread, marked = await reads_by_why(server)
    return sum(reread.values()), marked


async def quiet(server: DevServer) -> float:
    """The reread count once nothing is marked and nothing is read again for `QUIET_SECONDS`."""
    deadline = time.monotonic() + SETTLE_SECONDS
    reread, marked = await inbox_reads(server)
    while time.monotonic() < deadline:
        await asyncio.sleep(QUIET_SECONDS)
        now, marked = await inbox_reads(server)
        if now == reread and marked == 0:
            return now
        reread = now
    msg = f"the inbox never went quiet: {marked} threads marked, {reread} read again"
    raise AssertionError(msg)


async def trails(server: DevServer, thread_ids: list[str]) -> dict[str, list[dict]]:
    async with http(server, "supervisor1") as client:
        found = {}
        for thread_id in thread_ids:
            answer = await client.get(f"/audit/{thread_id}")
            assert answer.status_code == 200, answer.text
            found[thread_id] = answer.json()["records"]
        return found


async def flood(server: DevServer, thread_ids: list[str]) -> list[int]:
    """`REFUSED_WRITES` writes, half DELETEs by the owner, half PATCHes by another requester; the statuses."""
    slots = asyncio.Semaphore(AT_ONCE)
    async with http(server, "requester1") as owner, http(server, "requester2") as other:

        async def write(n: int) -> int:
            thread_id = thread_ids[n % len(thread_ids)]
            async with slots:
                if n % 2:
                    answer = await other.patch(f"/threads/{thread_id}", json={"metadata": {"topic": f"x{n}"}})
                else:
                    answer = await owner.delete(f"/threads/{thread_id}")
            return answer.status_code

        return await asyncio.gather(*(write(n) for n in range(REFUSED_WRITES)))


async def test_a_thousand_refused_writes_mark_nothing_and_a_page_rereads_no_thread(
    server, client_as, server_services
):
    """1,000 refused writes (409 DELETEs, 404 PATCHes): no thread marked, none read again by a page or after.

    The reviewer's page still lists every pause; no refund, no trail record, every thread still paused.
    """
    requester = client_as("requester1")
    orders = [add_order(server_services, 300) for _ in range(PAUSED)]
    paused = [(await start(requester, phrases.refund_in_full(order)))[0] for order in orders]
    before = await trails(server, paused)
    reread = await quiet(server)

    statuses = await flood(server, paused)

    assert sorted(set(statuses)) == [404, 409], statuses
    assert statuses.count(409) == statuses.count(404) == REFUSED_WRITES // 2
    after_flood, marked = await reads_by_why(server)
    assert marked == 0  # a refused write marks nothing
    async with http(server, "reviewer1") as reviewer:
        page = await reviewer.get("/inbox", params={"limit": 500})
    assert page.status_code == 200, page.text
    assert set(paused) <= {item["thread_id"] for item in page.json()["items"]}
    await asyncio.sleep(QUIET_SECONDS)
    after_page, marked = await reads_by_why(server)
    assert sum(after_flood.values()) == reread, after_flood  # no thread read again during the flood
    assert after_page == after_flood  # nor by the page, nor after it
    assert marked == 0
    assert await trails(server, paused) == before
    assert all(server_services.payments.refunds_for(order) == [] for order in orders)
    for thread_id in paused:
        assert (await requester.threads.get(thread_id))["status"] == "interrupted"
