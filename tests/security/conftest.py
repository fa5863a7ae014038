"""Fixtures of the attack suite: the side-effect ledger of the session's server, raw HTTP as any user."""

from __future__ import annotations

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
    """After the suite: delete every thread it left (hundreds wait for approvals).

    The session's server is shared with the server and web tests that follow, whose reviewers'
    inboxes list the oldest approvals first: the suite's leftovers would push theirs off the page.
    """
    yield
    with httpx.Client(base_url=server.url, headers=headers("supervisor1"), timeout=60, verify=tls()) as http:
        for _ in range(20):  # 500 at a time; the suite leaves far fewer than 10,000
            threads = http.post("/threads/search", json={"limit": 500}).json()
            if not threads:
                return
            for thread in threads:
                http.delete(f"/threads/{thread['thread_id']}").raise_for_status()
        pytest.fail("threads kept coming back after deletion")
