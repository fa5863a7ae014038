"""A write the engine makes marks its thread, and the mark alone reads it again, through the real server.

The counterpart of `test_inbox_marks` (refused writes mark nothing): here the server's watcher is idle
(`HITL_WATCH_INTERVAL` an hour), so the only reader of a changed thread is its mark. With a watcher
passing every second, its pass could read the change first ("repair") and settle the mark, so that
"marks" did not move: the test once failed that way on a loaded machine.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest

from agents.offline import phrases
from tests.conftest import add_order
from tests.devserver import DevServer, serving
from tests.server.helpers import start
from tests.server.test_inbox_marks import http, quiet, reads_by_why

if TYPE_CHECKING:
    from collections.abc import Iterator

    from services.registry import Services

pytestmark = pytest.mark.server
IDLE_WATCHER = "3600"
MARK_READ_SECONDS = 10.0


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[DevServer]:
    """This module's own `langgraph dev`, its watcher idle after its first pass."""
    idle = {"HITL_WATCH_INTERVAL": IDLE_WATCHER}
    with serving(tmp_path_factory.mktemp("inbox-marks-made"), idle) as running:
        yield running


@pytest.fixture(scope="module")
def server_services(server) -> Services:
    """The business services behind this module's server."""
    return server.services


async def test_a_write_the_engine_makes_is_marked_and_a_waited_run_is_listed_at_once(
    server, client_as, server_services
):
    """A PATCH the engine makes (200, the owner's own) is read again by its mark; runs/wait lists its pause.

    The caller that waited for the run (`runs/wait`) finds its pause in the inbox on its next request:
    the thread was read before the wait answered (`waited`), not by the page.
    """
    requester = client_as("requester1")
    before = (await reads_by_why(server))[0].get("waited", 0)
    thread_id, _ = await start(requester, phrases.refund_in_full(add_order(server_services, 300)))
    assert (await reads_by_why(server))[0]["waited"] > before
    async with http(server, "reviewer1") as reviewer:
        page = (await reviewer.get("/inbox", params={"limit": 500})).json()
    assert thread_id in {item["thread_id"] for item in page["items"]}
    await quiet(server)
    marks = (await reads_by_why(server))[0]["marks"]
    await requester.threads.update(thread_id, metadata={"topic": "late parcel"})
    deadline = time.monotonic() + MARK_READ_SECONDS
    now = marks
    while now == marks and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        now = (await reads_by_why(server))[0]["marks"]
    assert now > marks
