"""Replica sets for the replica tests: 2 real `langhost serve` replicas on the local PostgreSQL + Redis.

Each test module gets its own set (`server.runtime.replicas.ReplicaSet`) with fresh databases and the
environment its `replica_env` fixture gives, so a module that kills a replica or shortens deadlines
leaves the others alone. The set is stopped by PID and its databases dropped afterwards.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from sqlalchemy import create_engine

from server.http.outgoing import tls
from server.runtime.replicas import LANGHOST, ReplicaSet
from services.registry import Services
from tests.devserver import TEST_USERS, TOKENS, dev_users

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from sqlalchemy import Engine

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def replica_env() -> dict[str, str]:
    """What a test module sets for its replicas (a module overrides this fixture)."""
    return {}


@pytest.fixture(scope="module")
def replicas(tmp_path_factory, replica_env) -> Iterator[ReplicaSet]:
    """Two replicas sharing one runtime database, business database, Redis, workspace and seal key."""
    if not LANGHOST.exists():
        pytest.fail(f"{LANGHOST} is missing: `make .venv-replicas/.installed` installs the replica engine")
    env = {
        "HITL_USERS": f"{dev_users()},{TEST_USERS}",
        "HITL_DEV_MODE": "true",
        "MODEL": "scripted",
        **replica_env,
    }
    running = ReplicaSet(f"hitl_test_{uuid.uuid4().hex[:8]}", tmp_path_factory.mktemp("replicas"), env=env)
    running.create_databases(fresh=True)
    try:
        running.start(2)
        yield running
    finally:
        running.stop()
        running.drop_databases()


@pytest.fixture(scope="module")
def business(replicas) -> Iterator[Services]:
    """The shared PostgreSQL business database, as the tests read it (as its own role)."""
    services = Services.open(replicas.business_url)
    yield services
    services.engine.dispose()


@pytest.fixture(scope="module")
def layer(replicas) -> Iterator[Engine]:
    """The approval layer's own PostgreSQL database, as the tests read it."""
    engine = create_engine(replicas.layer_url)
    yield engine
    engine.dispose()


def http(url: str, user: str) -> httpx.AsyncClient:
    """A plain HTTP client of replica `url` acting as dev user `user`."""
    return httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {TOKENS[user]}"}, timeout=60, verify=tls()
    )


async def until(check: Callable[[], Awaitable[Any]], seconds: float = 60, every: float = 0.05) -> Any:
    """Poll `check` until it returns something truthy (bounded); its result."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := await check():
            return result
        await asyncio.sleep(every)
    pytest.fail(f"condition not reached in {seconds} s")


async def inbox_threads(client: httpx.AsyncClient) -> set[str]:
    """The thread ids in `client`'s inbox (first page of 500)."""
    response = await client.get("/inbox", params={"limit": 500})
    response.raise_for_status()
    return {row["thread_id"] for row in response.json()["items"]}


async def pause_refund(client: httpx.AsyncClient, order_id: str) -> tuple[str, str]:
    """As `client` (a requester), ask for a full refund of `order_id`; the thread and its interrupt id."""
    from agents.offline import phrases  # noqa: PLC0415

    thread_id = (await client.post("/threads", json={})).raise_for_status().json()["thread_id"]
    body = {
        "assistant_id": "support",
        "input": {"messages": [{"role": "user", "content": phrases.refund_in_full(order_id)}]},
    }
    (await client.post(f"/threads/{thread_id}/runs/wait", json=body)).raise_for_status()
    thread = (await client.get(f"/threads/{thread_id}")).raise_for_status().json()
    [interrupt] = [i for batch in (thread.get("interrupts") or {}).values() for i in batch]
    return thread_id, interrupt["id"]


def approve(interrupt_id: str) -> dict[str, Any]:
    """A run body that approves the one refund of `interrupt_id`."""
    return {
        "assistant_id": "support",
        "command": {"resume": {interrupt_id: {"decisions": [{"type": "approve"}]}}},
    }


async def audit(client: httpx.AsyncClient, thread_id: str) -> list[dict[str, Any]]:
    """The thread's audit trail."""
    return (await client.get(f"/audit/{thread_id}")).raise_for_status().json()["records"]
