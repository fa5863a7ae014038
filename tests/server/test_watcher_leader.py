"""The watcher among replicas: only the holder of the `watcher` lease acts in a pass.

Two watchers (as two replicas would run) over one business database and a stand-in inbox
table with one waiting thread: in each pass exactly one of them looks at the thread; when
the leader stops renewing and its lease expires, the other takes over with a higher token.
No server needed: the index and the per-thread work are replaced, the lease is real.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

from hitl.settings import Settings
from server.coordination import watcher
from server.coordination.leadership import Lease
from server.coordination.watcher import Watcher
from services.database import connect

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from sqlalchemy import Engine

LEASE_SECONDS = 0.6


class OneThreadIndex:
    """Stands in for the inbox table: one waiting thread, new in every pass; counts the refreshes."""

    def __init__(self) -> None:
        self.refreshes = 0
        self.syncs = 0
        self.entry = type("Entry", (), {"thread": {"thread_id": "t-1"}, "pending": [], "escalations": {}})()

    async def refresh(self, _client: object) -> None:
        self.refreshes += 1

    async def sync(self, _client: object) -> None:
        self.syncs += 1

    def to_watch(self, _now: object, _unanswerable: object) -> dict[str, set[str]]:
        return {"t-1": {"new"}}

    async def entries(self, _client: object, thread_ids: Any) -> AsyncIterator[Any]:
        for _ in thread_ids:
            yield self.entry

    def announced(self, _thread_id: str, _ids: object) -> list[dict[str, Any]]:
        return []

    def groups_waiting(self) -> dict[str, int]:
        return {}

    def owners_asked(self) -> set[str]:
        return set()


@pytest.fixture
def engine(tmp_path) -> Iterator[Engine]:
    """One business database shared by both watchers."""
    opened = connect(f"sqlite:///{tmp_path / 'business.db'}")
    yield opened
    opened.dispose()


@pytest.fixture
def index(monkeypatch) -> OneThreadIndex:
    stand_in = OneThreadIndex()
    monkeypatch.setattr(watcher, "TABLE", stand_in)
    return stand_in


def replica(engine: Engine, acted: list[str], name: str) -> Watcher:
    """A watcher leading by a lease of its own holder on `engine`; records its name when it acts."""
    running = Watcher(Settings(hitl_notify_url=""), Lease(watcher.LEASE_NAME, LEASE_SECONDS, engine=engine))

    async def watch(_client: object, _entry: object, _now: object) -> None:
        acted.append(name)

    running.watch = watch  # type: ignore[method-assign]
    return running


async def test_only_the_leader_acts_and_a_follower_takes_over(engine, index):
    """leadership: one acts per pass, both repair the table; after expiry the other leads, token + 1."""
    acted: list[str] = []
    a, b = replica(engine, acted, "a"), replica(engine, acted, "b")
    for _ in range(5):
        await asyncio.gather(a.tick(), b.tick())
    assert len(acted) == 5, acted
    assert len(set(acted)) == 1, acted
    assert (index.refreshes, index.syncs) == (10, 0)
    replicas = {"a": a, "b": b}
    leading = acted[0]
    following = "b" if leading == "a" else "a"
    leader, follower = replicas[leading], replicas[following]
    assert leader.lease.token == 1
    assert follower.lease.token is None

    acted.clear()
    await asyncio.sleep(LEASE_SECONDS + 0.1)  # the leader stops renewing: its lease expires
    await follower.tick()
    await leader.tick()
    assert acted == [following]
    assert follower.lease.token == 2
    assert leader.lease.token is None


async def test_a_new_leader_reloads_the_notices_sent(engine, index):
    """takeover: a watcher that becomes leader forgets its cache of notices sent, to read the store again."""
    acted: list[str] = []
    a = replica(engine, acted, "a")
    a.announced = {"stale-key"}
    await a.tick()
    assert a.announced is None
    assert index.refreshes == 1


async def test_an_act_is_done_once_and_never_by_a_deposed_leader(engine):
    """fencing: the leader's act is recorded once; after a takeover the old leader's attempt is refused."""
    old = Lease(watcher.LEASE_NAME, LEASE_SECONDS, engine=engine)
    new = Lease(watcher.LEASE_NAME, LEASE_SECONDS, engine=engine)
    assert await old.hold() == 1
    assert await old.act_once("escalated:i-1")
    assert not await old.act_once("escalated:i-1")  # done before
    assert not await new.act_once("escalated:i-2")  # never led
    await asyncio.sleep(LEASE_SECONDS + 0.1)
    assert await new.hold() == 2  # `old` paused past its lease and was replaced, but still holds token 1
    assert old.token == 1
    assert not await old.act_once("escalated:i-2")  # fenced: the database knows token 1 is gone
    assert await new.act_once("escalated:i-2")
    assert await asyncio.to_thread(new.acts, "escalated:") == {"escalated:i-1", "escalated:i-2"}
