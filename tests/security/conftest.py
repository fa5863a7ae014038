"""Fixtures of the attack suite: the side-effect ledger of the session's server, raw HTTP as any user."""

from __future__ import annotations

import time

import httpx
import pytest

from server.http.outgoing import tls
from tests.security.outcomes import Ledger, headers


@pytest.fixture(scope="session")
def ledger(server) -> Ledger:
    """Side effects of the session's server, read from its database and workspace."""
    return Ledger(server)


@pytest.fixture
async def http_as(server):
    """`http_as("reviewer1")` (or `None` for anonymous): a raw HTTP client of the session's server."""
    opened: list[httpx.AsyncClient] = []

    def make(user: str | None) -> httpx.AsyncClient:
        client = httpx.AsyncClient(base_url=server.url, headers=headers(user), timeout=60, verify=tls())
        opened.append(client)
        return client

    yield make
    for client in opened:
        await client.aclose()


@pytest.fixture(scope="package", autouse=True)
def leave_no_pending_approvals(server):
    """After the suite: withdraw every approval it left waiting (hundreds), then delete its threads.

    The session's server is shared with the server and web tests that follow, whose reviewers'
    inboxes list the oldest approvals first: the suite's leftovers would push theirs off the page.
    A thread with a pending approval is not deleted until it is withdrawn (recorded as such).
    """
    yield
    with httpx.Client(base_url=server.url, headers=headers("supervisor1"), timeout=60, verify=tls()) as http:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            threads = http.post("/threads/search", json={"limit": 1000, "select": ["thread_id", "status"]})
            if not threads.json():
                return
            for thread in threads.json():
                path = f"/threads/{thread['thread_id']}"
                if http.delete(path).status_code == httpx.codes.CONFLICT:
                    http.post(f"{path}/withdraw", json={"reason": "the attack suite is done"})
            time.sleep(0.5)
        left = http.post("/threads/search", json={"limit": 10}).json()
        pytest.fail(f"threads left after withdrawing and deleting for 2 minutes: {left}")
