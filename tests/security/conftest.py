"""Fixtures of the attack suite: the side-effect ledger of the session's server, raw HTTP as any user."""

from __future__ import annotations

import httpx
import pytest

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
        client = httpx.AsyncClient(base_url=server.url, headers=headers(user), timeout=60)
        opened.append(client)
        return client

    yield make
    for client in opened:
        await client.aclose()
