"""Claims on approvals in the shared database, once on SQLite and once on PostgreSQL.

Two answers to one approval, in one process or in two, give one claim; an answer to several
interrupts claims all or none; a claim lapses after `HOLD_SECONDS` and only then may another
take it over.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import select

from server import claims
from server.resume_gate import ResumeRefused
from services.database import approval_claims, connect
from tests.services.test_races import together

if TYPE_CHECKING:
    from pathlib import Path

    from sqlalchemy import Engine

RACE_IDS = 50
RACER = """
import json, random, sys, time
from pathlib import Path
from server import claims
from server.resume_gate import ResumeRefused
from services.database import connect

url, who, ready, start, ids = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5:]
random.shuffle(ids)  # each in its own order, so the two meet all along the list
engine = connect(url)
ready.touch()
while not start.exists():
    time.sleep(0.001)
won = []
for interrupt_id in ids:
    try:
        claims.take_now([interrupt_id], who, engine=engine)
    except ResumeRefused:
        continue
    won.append(interrupt_id)
engine.dispose()
print(json.dumps(won))
"""
"""A process that claims `ids` one by one, shuffled, as `who` once `start` exists; prints the ids it won."""


@pytest.fixture
def engine(database_url, engines) -> Engine:
    """The test's business database (closed with the test's other engines)."""
    engines.append(connect(database_url))
    return engines[-1]


def ids(count: int) -> list[str]:
    """`count` new interrupt ids."""
    return [uuid.uuid4().hex for _ in range(count)]


def holders(engine: Engine, interrupt_ids: list[str]) -> dict[str, str]:
    """Who holds a claim on each of `interrupt_ids` (lapsed or not)."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(approval_claims.c.interrupt_id, approval_claims.c.claimed_by).where(
                approval_claims.c.interrupt_id.in_(interrupt_ids)
            )
        )
        return {interrupt_id: who for interrupt_id, who in rows}  # noqa: C416  (a Result is no mapping source)


def refused_by(call) -> str | None:
    """The status and message of the refusal `call` raised, or None when it claimed."""
    try:
        call()
    except ResumeRefused as refusal:
        return f"{refusal.status} {refusal.message}"
    return None


def test_two_claims_at_once_one_wins(engine):
    """race, one process: of two claims released together, one wins and one gets 409 naming it."""
    for _ in range(20):
        [interrupt_id] = ids(1)
        outcomes = together(
            lambda i=interrupt_id: refused_by(lambda: claims.take_now([i], "alice", engine=engine)),
            lambda i=interrupt_id: refused_by(lambda: claims.take_now([i], "bob", engine=engine)),
        )
        assert outcomes.count(None) == 1, outcomes
        winner = holders(engine, [interrupt_id])[interrupt_id]
        [message] = [m for m in outcomes if m is not None]
        assert message == f"409 Interrupt {interrupt_id} is already being answered by {winner}."


async def test_take_is_async_and_refuses_a_second_answer(engine):
    """async: `take` claims off the event loop; a second answer by anyone gets 409."""
    interrupt_ids = ids(2)
    await claims.take(interrupt_ids, "alice", engine=engine)
    with pytest.raises(ResumeRefused, match="already being answered by alice"):
        await claims.take(interrupt_ids[1:], "bob", engine=engine)
    with pytest.raises(ResumeRefused, match="already being answered by alice"):
        await claims.take(interrupt_ids[:1], "alice", engine=engine)


def test_several_ids_are_claimed_all_or_nothing(engine):
    """all or nothing: a batch with one id taken claims none of its others; a free batch claims all."""
    first, second, third = ids(3)
    claims.take_now([second], "alice", engine=engine)
    message = refused_by(lambda: claims.take_now([first, second, third], "bob", engine=engine))
    assert message == f"409 Interrupt {second} is already being answered by alice."
    assert holders(engine, [first, second, third]) == {second: "alice"}
    claims.take_now([first, third], "bob", engine=engine)
    assert holders(engine, [first, second, third]) == {first: "bob", second: "alice", third: "bob"}


def test_a_lapsed_claim_is_taken_over_and_a_fresh_one_is_not(engine):
    """hold: within `HOLD_SECONDS` a claim stands; after it, another answer takes it over."""
    [interrupt_id] = ids(1)
    start = time.time()
    claims.take_now([interrupt_id], "alice", engine=engine, now=start)
    fresh = start + claims.HOLD_SECONDS - 1
    assert refused_by(lambda: claims.take_now([interrupt_id], "bob", engine=engine, now=fresh))
    lapsed = start + claims.HOLD_SECONDS + 1
    claims.take_now([interrupt_id], "bob", engine=engine, now=lapsed)
    assert holders(engine, [interrupt_id]) == {interrupt_id: "bob"}
    assert refused_by(lambda: claims.take_now([interrupt_id], "alice", engine=engine, now=lapsed + 1))


def test_long_lapsed_claims_are_deleted(engine, monkeypatch):
    """pruning: claims lapsed for longer than `KEPT_SECONDS` are deleted; recent ones stay."""
    old, recent = ids(2)
    start = time.time()
    claims.take_now([old], "alice", engine=engine, now=start - claims.KEPT_SECONDS - 60)
    monkeypatch.setattr(claims, "_pruned_at", 0.0)
    claims.take_now([recent], "alice", engine=engine, now=start)
    assert holders(engine, [old, recent]) == {recent: "alice"}


def test_two_processes_claim_each_id_exactly_once(database_url, engine, tmp_path: Path):
    """replicas: two OS processes racing over the same 50 ids win each id exactly once between them."""
    interrupt_ids = ids(RACE_IDS)
    start = tmp_path / "start"
    racers = []
    for who in ("replica-a", "replica-b"):
        ready = tmp_path / f"{who}.ready"
        command = [sys.executable, "-c", RACER, database_url, who, str(ready), str(start), *interrupt_ids]
        racers.append((who, ready, subprocess.Popen(command, stdout=subprocess.PIPE, text=True)))
    deadline = time.monotonic() + 60
    while not all(ready.exists() for _, ready, _ in racers):
        assert time.monotonic() < deadline, "the racing processes did not start"
        assert all(p.poll() is None for _, _, p in racers), "a racing process exited early"
        time.sleep(0.01)
    start.touch()
    won = {}
    for who, _, process in racers:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        won[who] = json.loads(out)
    assert not set(won["replica-a"]) & set(won["replica-b"])
    assert sorted(won["replica-a"] + won["replica-b"]) == sorted(interrupt_ids)
    assert holders(engine, interrupt_ids) == {i: who for who, mine in won.items() for i in mine}
