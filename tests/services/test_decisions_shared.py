"""Accepted decisions and their claims in the shared database, once on SQLite and once on PostgreSQL.

`server.decisions.store.accept` claims the answered interrupts, signs the receipts after the trail's
head, appends their records and stores the decision in one transaction: two answers to one
approval, in one process or in two, give one decision and one accepted record; a claim never
lapses while its decision stands; the same answer sent again is that decision again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from typing import TYPE_CHECKING

import pytest

from hitl.proof import audit_chain
from server.coordination import claims
from server.decisions import store
from server.decisions.decision import (
    GRACE_SECONDS,
    IDEMPOTENCY_HEADER,
    MAX_KEY_CHARS,
    Decision,
    Replayed,
    Request,
)
from server.decisions.pending import ResumeRefused
from server.identity.users import User
from server.ledger import storage
from server.records import trail
from services.database import connect
from tests.services.test_races import together

if TYPE_CHECKING:
    from pathlib import Path

    from sqlalchemy import Engine

RACE_IDS = 40
RACER = """
import json, random, sys, time
from pathlib import Path
from server.decisions import store
from server.decisions.pending import ResumeRefused
from services.database import connect
from tests.services.test_decisions_shared import accept

url, who, thread, ids = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[6:]
ready, start = Path(sys.argv[4]), Path(sys.argv[5])
random.shuffle(ids)  # each in its own order, so the two meet all along the list
engine = connect(url)
ready.touch()
while not start.exists():
    time.sleep(0.001)
won = []
for interrupt_id in ids:
    try:
        accept(engine, thread, [interrupt_id], who)
    except ResumeRefused:
        continue
    won.append(interrupt_id)
engine.dispose()
print(json.dumps(won))
"""
"""A process that answers `ids` one by one, shuffled, as `who` once `start` exists; prints the ids it won."""


@pytest.fixture
def engine(database_url, engines) -> Engine:
    """The test's business database with the approval layer's tables (closed with the test's engines)."""
    engines.append(connect(database_url))
    return storage.ready(engines[-1])


def ids(count: int) -> list[str]:
    """`count` new interrupt ids."""
    return [uuid.uuid4().hex for _ in range(count)]


def request(
    thread_id: str, interrupt_ids: list[str], who: str, answer: str = "approve", key: str | None = None
):
    """`who`'s resume approving (or `answer`ing) `interrupt_ids`, as the auth handler reads it."""
    command = {"resume": {i: {"decisions": [{"type": answer}]} for i in interrupt_ids}}
    config = {"configurable": {IDEMPOTENCY_HEADER: key}} if key else {}
    run = {
        "run_id": str(uuid.uuid4()),
        "assistant_id": "support",
        "kwargs": {"command": command, "config": config},
    }
    return Request.of(thread_id, User(identity=who, role="reviewer"), command, run), command


def accept(engine: Engine, thread_id: str, interrupt_ids: list[str], who: str, **given) -> Decision:
    """Accept `who`'s approval of `interrupt_ids` (one receipt each)."""
    sent, command = request(thread_id, interrupt_ids, who, **given)
    receipts = [
        {
            "interrupt_id": i,
            "tool_call_id": f"call-{i}",
            "agent": "support",
            "tool": "issue_refund",
            "requested_args": {"amount": 10},
            "decision": "approve",
            "final_args": {"amount": 10},
            "message": None,
            "reviewer": who,
            "roles": ["reviewer"],
            "decided_at": "2026-12-01T10:00:00+00:00",
        }
        for i in interrupt_ids
    ]
    return store.accept(sent, command, interrupt_ids, receipts, catalog=None, engine=engine)


def refused_by(call) -> str | None:
    """The status and message of the refusal `call` raised, or None when it was accepted."""
    try:
        call()
    except ResumeRefused as refusal:
        return f"{refusal.status} {refusal.message}"
    return None


def verified(engine: Engine, thread_id: str) -> list[dict]:
    """The thread's trail, asserted to be one unbroken chain ending at its head."""
    records, head = trail.read(thread_id, engine=engine)
    assert audit_chain.check(records, head.as_json()) == []
    assert len({r["prev_hash"] for r in records}) == len(records), "two records share a prev_hash"
    return records


def test_two_answers_at_once_one_decision(engine):
    """race, one process: of two answers at once, one is accepted, one gets 409 naming the winner."""
    thread_id = f"t-{uuid.uuid4().hex}"
    for _ in range(20):
        [interrupt_id] = ids(1)
        outcomes = together(
            lambda i=interrupt_id: refused_by(lambda: accept(engine, thread_id, [i], "alice")),
            lambda i=interrupt_id: refused_by(lambda: accept(engine, thread_id, [i], "bob")),
        )
        assert outcomes.count(None) == 1, outcomes
        [winner] = store.holding([interrupt_id], engine=engine)
        [message] = [m for m in outcomes if m is not None]
        assert message == f"409 This approval was already answered by {winner.reviewer}; it is being applied."
    records = verified(engine, thread_id)
    assert [r["outcome"] for r in records] == ["accepted"] * 20


def test_several_ids_are_claimed_all_or_nothing(engine):
    """all or nothing: a batch with one id decided claims none of its others and records nothing."""
    thread_id = f"t-{uuid.uuid4().hex}"
    first, second, third = ids(3)
    accept(engine, thread_id, [second], "alice")
    assert refused_by(lambda: accept(engine, thread_id, [first, second, third], "bob"))
    assert [d.reviewer for d in store.holding([first, second, third], engine=engine)] == ["alice"]
    assert len(verified(engine, thread_id)) == 1
    decision = accept(engine, thread_id, [first, third], "bob")
    assert decision.interrupt_ids == sorted([first, third])
    assert [r["interrupt_id"] for r in verified(engine, thread_id)] == [second, first, third]


def test_receipts_are_signed_after_the_head_they_follow(engine):
    """chain: each decision's receipts name the hash of the record before them; the trail verifies."""
    thread_id = f"t-{uuid.uuid4().hex}"
    one = accept(engine, thread_id, ids(1), "alice")
    two = accept(engine, thread_id, ids(2), "bob")
    records = verified(engine, thread_id)
    assert [r["signed"] for r in records] == [r["signed"] for r in (*one.receipts, *two.receipts)]
    assert two.command["update"]["approval_receipts"][0]["signed"] == two.receipts[0]["signed"]


def test_a_claim_never_lapses_while_its_decision_stands_and_is_released_when_given_up(engine):
    """no lapse: an hour later the approval is still taken; once given up, it may be answered again."""
    thread_id = f"t-{uuid.uuid4().hex}"
    [interrupt_id] = ids(1)
    decision = accept(engine, thread_id, [interrupt_id], "alice")
    with engine.begin() as conn:
        conn.execute(
            storage.decisions.update().values(accepted_at=time.time() - 3600, tried_at=time.time() - 3600)
        )
    assert refused_by(lambda: accept(engine, thread_id, [interrupt_id], "bob"))
    record = {"thread_id": thread_id, "decision": "not_applied", "outcome": "failed", "reviewer": "system"}
    store.give_up(decision, record, engine=engine)  # type: ignore[arg-type]
    assert store.stored(decision.decision_id, engine=engine).state == "failed"
    accept(engine, thread_id, [interrupt_id], "bob")
    assert [r["outcome"] for r in verified(engine, thread_id)] == ["accepted", "failed", "accepted"]


def test_the_same_answer_sent_again_is_that_decision(engine):
    """re-send: the same person's same answer (or Idempotency-Key) is the first decision; another is not."""
    thread_id = f"t-{uuid.uuid4().hex}"
    [interrupt_id] = ids(1)
    first = accept(engine, thread_id, [interrupt_id], "alice", key="k-1")
    with pytest.raises(Replayed, match="already accepted"):
        accept(engine, thread_id, [interrupt_id], "alice")
    again, _ = request(thread_id, [interrupt_id], "alice", key="k-1")
    assert first.sent_again_by(again, "alice")
    other, _ = request(thread_id, [interrupt_id], "alice", answer="reject")
    assert not first.sent_again_by(other, "alice")
    reused, _ = request(thread_id, [interrupt_id], "alice", answer="reject", key="k-1")
    with pytest.raises(ResumeRefused, match="Idempotency-Key 'k-1' was sent before with another answer"):
        first.sent_again_by(reused, "alice")
    bob, _ = request(thread_id, [interrupt_id], "bob")
    assert not first.sent_again_by(bob, "alice")
    assert len(verified(engine, thread_id)) == 1


def test_a_run_takes_a_decision_over_once_after_its_grace(engine):
    """take over: within the grace nobody; after it, one of two rivals; the attempts count."""
    thread_id = f"t-{uuid.uuid4().hex}"
    decision = accept(engine, thread_id, ids(1), "alice")
    assert not store.take_over(decision, "run-early", engine=engine)
    later = time.time() + GRACE_SECONDS + 1
    outcomes = together(
        lambda: store.take_over(decision, "run-a", now=later, engine=engine),
        lambda: store.take_over(decision, "run-b", now=later, engine=engine),
    )
    assert sorted(outcomes) == [False, True]
    taken = store.stored(decision.decision_id, engine=engine)
    assert (taken.attempts, taken.run_id) == (2, "run-a" if outcomes[0] else "run-b")
    assert store.due(later, engine=engine) == []
    assert [d.decision_id for d in store.due(later + 3 * GRACE_SECONDS, engine=engine)] == [
        decision.decision_id
    ]


def test_idempotency_keys_must_be_short_printable_text():
    """bad input: an empty, overlong or non-printable Idempotency-Key is a 422 naming the rule."""
    for key in ("x" * (MAX_KEY_CHARS + 1), "a\nb", 7):
        command = {"resume": {"a" * 32: {"decisions": [{"type": "approve"}]}}}
        run = {"kwargs": {"config": {"configurable": {IDEMPOTENCY_HEADER: key}}}}
        with pytest.raises(ResumeRefused, match="Idempotency-Key must be printable text"):
            Request.of("t", User(identity="alice", role="reviewer"), command, run)


def test_two_processes_decide_each_approval_once_on_one_chain(database_url, engine, tmp_path: Path):
    """replicas: two processes answering the same 40 approvals on one thread: each decided once, one chain."""
    interrupt_ids = ids(RACE_IDS)
    thread_id = f"t-{uuid.uuid4().hex}"
    start = tmp_path / "start"
    racers = []
    for who in ("alice", "bob"):
        ready = tmp_path / f"{who}.ready"
        command = [
            sys.executable,
            "-c",
            RACER,
            database_url,
            who,
            thread_id,
            str(ready),
            str(start),
            *interrupt_ids,
        ]
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
    assert not set(won["alice"]) & set(won["bob"])
    assert sorted(won["alice"] + won["bob"]) == sorted(interrupt_ids)
    with engine.connect() as conn:
        held = {i: claims.holder_of(conn, i) for i in interrupt_ids}
    by_decision = {d.decision_id: d.reviewer for d in store.holding(interrupt_ids, engine=engine)}
    assert {i: by_decision[d] for i, d in held.items()} == {i: who for who, mine in won.items() for i in mine}
    records = verified(engine, thread_id)
    assert sorted(r["interrupt_id"] for r in records) == sorted(interrupt_ids)


def test_refusals_and_decisions_written_at_once_form_one_chain(engine):
    """one chain: 30 rounds of a decision and a refusal record written together never share a prev_hash."""
    thread_id = f"t-{uuid.uuid4().hex}"
    for _ in range(30):
        refusal = {"thread_id": thread_id, "decision": "refused", "outcome": "refused", "reviewer": "bob"}
        together(
            lambda: accept(engine, thread_id, ids(1), "alice"),
            lambda r=refusal: trail.write([r], engine=engine),
        )
    records = verified(engine, thread_id)
    assert sorted(r["outcome"] for r in records) == ["accepted"] * 30 + ["refused"] * 30
