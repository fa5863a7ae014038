"""A first-line reviewer's verdicts in the layer's store, once on SQLite and once on PostgreSQL.

`server.first_line.review.review` is what the gate calls inside the server: here it is called as the
gate calls it, on a store of the test's own. An approve is a decision like a person's (claimed,
signed, on the trail, stored applied, never reconciled); a node that runs again gets the same
verdict; two replicas racing on one call give one decision; the circuit breaker and every failure
of the model leave the call to people; a tampered verdict is never replayed as an approval.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import TYPE_CHECKING

import pytest
from langchain_core.tools import tool
from sqlalchemy import select, update

from hitl.contracts import answers
from hitl.model.first_line.review import DelegatedCall
from hitl.model.first_line.triage import Triage, TriageRule
from hitl.policy import quorum
from hitl.policy.first_line import FirstLineReviewer
from hitl.proof.receipt_keys import keyring
from hitl.proof.signed_receipts import check, signed_claims
from hitl.proof.verification import Evidence, verify
from server.decisions import store
from server.first_line import ledger
from server.first_line.review import interrupt_id_of, review
from server.ledger import storage
from server.ledger.storage import decided_interrupts, decisions, first_line_verdicts
from server.records import trail
from services.database import connect
from tests.services.test_races import together

if TYPE_CHECKING:
    from sqlalchemy import Engine

AGENT = "first-line-test"


@tool
def notify_customer(to: str, body: str) -> str:
    """Send a note to a customer."""
    return f"sent to {to}: {body}"


answers.register(AGENT, [notify_customer])
RULES = Triage(
    (
        TriageRule("notify_customer", "reject", "it promises something", when=r"promise"),
        TriageRule("notify_customer", "approve", "a routine note"),
    )
)
REVIEWER = FirstLineReviewer(
    name="ledger-test", instructions="approve routine notes", offline=RULES, sample_rate=1.0
)


@pytest.fixture
def engine(database_url, engines) -> Engine:
    """The test's database with the approval layer's tables."""
    engines.append(connect(database_url))
    return storage.ready(engines[-1])


def delegated(
    body: str = "your parcel left today", *, thread: str | None = None, reviewer: FirstLineReviewer = REVIEWER
) -> DelegatedCall:
    """A paused call as the gate puts it to the server, on a new thread (or `thread`)."""
    return DelegatedCall(
        thread_id=thread or str(uuid.uuid4()),
        graph_id=None,
        agent=AGENT,
        tool_call_id=f"call_{uuid.uuid4().hex[:24]}",
        name="notify_customer",
        args={"to": "a@example.com", "body": body},
        description="Note to a@example.com",
        required_role="reviewer",
        allowed_decisions=("approve", "reject"),
        requested_by=("requester1",),
        reviewer=reviewer,
    )


def test_an_approve_is_a_decision_like_a_persons_signed_and_on_the_trail(engine):
    """approve: one decision stored applied, its claim held, a receipt by model:<name>, verified, no role."""
    call = delegated()
    verdict = review(call, engine=engine)
    assert (verdict.decision, verdict.cause, verdict.reviewer) == ("approve", "model", "model:ledger-test")
    receipt = dict(verdict.receipt or {})
    assert (receipt["reviewer"], receipt["roles"], receipt["decision"]) == (
        "model:ledger-test",
        [],
        "approve",
    )
    assert receipt["first_line"]["model"] == "scripted:ledger-test"
    assert receipt["first_line"]["stood_for"] == "reviewer"
    assert receipt["message"] == "a routine note"
    assert check(receipt, keyring().jwks, call.thread_id) == []
    claims = signed_claims(receipt["signed"], keyring().jwks)
    assert claims["first_line"]["model"] == "scripted:ledger-test"
    assert claims["approver"] == {"identity": "model:ledger-test", "roles": []}
    with engine.connect() as conn:
        rows = list(conn.execute(select(decisions).where(decisions.c.thread_id == call.thread_id)))
        held = conn.execute(
            select(decided_interrupts.c.decision_id).where(
                decided_interrupts.c.interrupt_id == interrupt_id_of(call)
            )
        ).scalar_one()
    assert [(r.state, r.reviewer, r.role) for r in rows] == [("applied", "model:ledger-test", "model")]
    assert held == rows[0].decision_id
    assert [d.decision_id for d in store.due(now=10**12, engine=engine)] == []
    records, head = trail.read(call.thread_id, engine=engine)
    assert [(r["decision"], r["reviewer"]) for r in records] == [("approve", "model:ledger-test")]
    assert verify(Evidence(call.thread_id, keyring().jwks, records, head.as_json(), [receipt])).ok


def test_a_node_that_runs_again_gets_the_same_verdict(engine):
    """replay: asked twice about one call, the same receipt; one decision, one trail record."""
    call = delegated()
    first, again = review(call, engine=engine), review(call, engine=engine)
    assert again == first
    refer = delegated("we promise a voucher")
    assert review(refer, engine=engine) == review(refer, engine=engine)
    with engine.connect() as conn:
        assert (
            conn.execute(select(decisions.c.decision_id).where(decisions.c.thread_id == call.thread_id))
            .all()
            .__len__()
            == 1
        )
    assert len(trail.read(call.thread_id, engine=engine)[0]) == 1
    assert len(trail.read(refer.thread_id, engine=engine)[0]) == 1


def test_two_replicas_asking_at_once_give_one_decision(engine):
    """race: the same call reviewed in two threads at once: one decision, the same receipt for both."""
    call = delegated()
    first, second = together(lambda: review(call, engine=engine), lambda: review(call, engine=engine))
    assert first.receipt == second.receipt
    assert first.decision == "approve"
    with engine.connect() as conn:
        rows = conn.execute(
            select(decisions.c.decision_id).where(decisions.c.thread_id == call.thread_id)
        ).all()
    assert len(rows) == 1
    assert [r["decision"] for r in trail.read(call.thread_id, engine=engine)[0]] == ["approve"]


def test_an_answer_it_may_not_give_goes_to_people_with_its_reason(engine):
    """not allowed: an approve-only reviewer's reject is a referral (no decision), on the trail with why."""
    call = delegated("we promise a voucher")
    verdict = review(call, engine=engine)
    assert (verdict.decision, verdict.cause, verdict.receipt) == ("refer", "not_allowed", None)
    assert "it would reject this (it promises something)" in verdict.reason
    with engine.connect() as conn:
        assert conn.execute(select(decisions).where(decisions.c.thread_id == call.thread_id)).all() == []
    (record,) = trail.read(call.thread_id, engine=engine)[0]
    assert (record["decision"], record["reviewer"], record["first_line"]["cause"]) == (
        "referred",
        "model:ledger-test",
        "not_allowed",
    )


def test_a_reject_it_may_give_is_signed_as_its_reject(engine):
    """reject: a reviewer that may reject records a signed reject with its reason."""
    call = delegated(
        "we promise a voucher", reviewer=dataclasses.replace(REVIEWER, may=("approve", "reject"))
    )
    verdict = review(call, engine=engine)
    assert verdict.decision == "reject"
    assert (verdict.receipt or {})["decision"] == "reject"
    assert "Rejected by the first-line reviewer model:ledger-test" in verdict.decision_value()["message"]


def test_a_model_that_cannot_be_built_leaves_every_call_to_people(engine):
    """unbuildable: a provider that does not exist refers the call, saying why; nothing is decided."""
    call = delegated(reviewer=dataclasses.replace(REVIEWER, model="nosuchprovider:model-x"))
    verdict = review(call, engine=engine)
    assert (verdict.decision, verdict.cause) == ("refer", "unbuildable")
    assert "nosuchprovider:model-x cannot be built" in verdict.reason
    with engine.connect() as conn:
        assert conn.execute(select(decisions).where(decisions.c.thread_id == call.thread_id)).all() == []


def test_refusals_in_a_row_open_the_breaker_on_that_thread(engine):
    """breaker: 3 refusals in a row on a thread send its next call to people; other threads are not."""
    thread = str(uuid.uuid4())
    for _ in range(REVIEWER.refusals_in_a_row):
        assert review(delegated("we promise it", thread=thread), engine=engine).cause == "not_allowed"
    tripped = review(delegated(thread=thread), engine=engine)
    assert (tripped.decision, tripped.cause) == ("refer", "breaker")
    assert "circuit breaker is open" in tripped.reason
    assert review(delegated(), engine=engine).decision == "approve"


def test_refusals_in_an_hour_open_the_breaker_everywhere(engine):
    """breaker: M refusals in the last hour, on any thread, send every call to people; older ones do not."""
    hourly = dataclasses.replace(REVIEWER, name=f"hourly-{uuid.uuid4().hex[:8]}", refusals_per_hour=2)
    for _ in range(2):
        review(delegated("we promise it", reviewer=hourly), engine=engine)
    tripped = review(delegated(reviewer=hourly), engine=engine)
    assert (tripped.decision, tripped.cause) == ("refer", "breaker")
    assert "in the last hour" in tripped.reason
    with engine.begin() as conn:
        conn.execute(
            update(first_line_verdicts)
            .where(first_line_verdicts.c.reviewer == hourly.actor)
            .values(decided_at=first_line_verdicts.c.decided_at - 2 * ledger.HOUR)
        )
    assert review(delegated(reviewer=hourly), engine=engine).decision == "approve"


def test_a_tampered_verdict_is_never_replayed_as_an_approval(engine):
    """ledger: a row rewritten to approve (another call's receipt) replays as a referral, not an approve."""
    real, planted = delegated(), delegated("we promise it")
    approved = review(real, engine=engine)
    review(planted, engine=engine)
    with engine.begin() as conn:
        conn.execute(
            update(first_line_verdicts)
            .where(first_line_verdicts.c.tool_call_id == planted.tool_call_id)
            .values(decision="approve", receipt=json.dumps(approved.receipt))
        )
    replayed = review(planted, engine=engine)
    assert (replayed.decision, replayed.cause) == ("refer", "error")
    assert "does not verify" in replayed.reason


def test_its_approvals_are_sampled_for_people_and_a_persons_word_is_recorded_once(engine):
    """samples: an approve is sampled for its group; "should not have" is recorded once, on the trail."""
    call = delegated()
    review(call, engine=engine)
    listed = ledger.samples(frozenset({"reviewer"}), limit=200, engine=engine)
    assert call.tool_call_id in {s["tool_call_id"] for s in listed}
    assert call.tool_call_id not in {
        s["tool_call_id"] for s in ledger.samples(frozenset({"finance"}), engine=engine)
    }
    record = {
        "thread_id": call.thread_id,
        "tool_call_id": call.tool_call_id,
        "decision": "overturned",
        "outcome": "accepted",
    }
    assert ledger.review(
        call.thread_id, call.tool_call_id, "should_not_have", "reviewer1", record, engine=engine
    )  # type: ignore[arg-type]
    assert not ledger.review(call.thread_id, call.tool_call_id, "fine", "supervisor1", record, engine=engine)  # type: ignore[arg-type]
    checked = ledger.reviewed(call.thread_id, call.tool_call_id, engine=engine)
    assert checked is not None
    assert (checked.get("review"), checked.get("reviewed_by")) == ("should_not_have", "reviewer1")
    assert [r["decision"] for r in trail.read(call.thread_id, engine=engine)[0]] == ["approve", "overturned"]
    assert call.tool_call_id not in {
        s["tool_call_id"] for s in ledger.samples(frozenset({"reviewer"}), limit=200, engine=engine)
    }


def test_a_model_receipt_never_counts_toward_a_quorum(engine):
    """quorum: a receipt signed by model:<name> carrying approvals is no approver in the tally."""
    receipt = dict(review(delegated(), engine=engine).receipt or {})
    person = {
        **receipt,
        "reviewer": "supervisor1",
        "approvals": {"required": 2, "approved_by": ["supervisor1"]},
    }
    model = {**receipt, "approvals": {"required": 2, "approved_by": ["model:ledger-test"]}}
    assert quorum.tally([model]) == {}
    assert quorum.tally([person, model])[receipt["tool_call_id"]]["approved_by"] == ["supervisor1"]
