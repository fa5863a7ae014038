"""What a first-line reviewer made of each call put to it, kept in the layer's store beside the trail.

One row per (thread, tool call): its verdict, why, how long it took, and its signed receipt. The
row is written in the transaction that records the decision (or the referral's trail record), so
a node that runs again gets the same verdict from `recorded`, on any replica. The circuit breaker
(`breaker`) and the samples people check afterwards (`samples`, `review`) read the same rows: state
shared by every replica, never a process's memory. Blocking: callers off the event loop.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from hitl.contracts.records import AuditRecord
from hitl.model.first_line.review import Verdict
from hitl.proof.receipt_keys import keyring
from hitl.proof.signed_receipts import check
from server.ledger import storage
from server.ledger.storage import first_line_verdicts
from server.records import trail

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine, Row

    from hitl.contracts.records import FirstLineReview, FirstLineStamp
    from hitl.model.first_line.review import DelegatedCall
    from hitl.policy.first_line import FirstLineReviewer

HOUR = 3600.0
REVIEWS = ("fine", "should_not_have")
"""A person's word on a first-line decision afterwards."""


@dataclass(frozen=True)
class Entry:
    """One verdict as the ledger keeps it."""

    call: DelegatedCall
    verdict: Verdict
    stood_for: str
    latency_ms: float
    refusal: bool
    sampled: bool
    decided_at: float

    def values(self) -> dict[str, Any]:
        """The row's columns."""
        call, verdict = self.call, self.verdict
        return {
            "thread_id": call.thread_id,
            "tool_call_id": call.tool_call_id,
            "reviewer": verdict.reviewer,
            "agent": call.agent,
            "tool": call.name,
            "stood_for": self.stood_for,
            "model": verdict.model,
            "decision": verdict.decision,
            "cause": verdict.cause,
            "reason": verdict.reason,
            "args": json.dumps(call.args, sort_keys=True, default=str, ensure_ascii=False),
            "latency_ms": self.latency_ms,
            "decided_at": self.decided_at,
            "refusal": int(self.refusal),
            "sampled": int(self.sampled),
            "receipt": None if verdict.receipt is None else json.dumps(verdict.receipt, default=str),
        }


def sampled(thread_id: str, tool_call_id: str, rate: float) -> bool:
    """Whether an approve of this call is put before a person afterwards: by its id, so always the same."""
    digest = hashlib.sha256(f"{thread_id}:{tool_call_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def insert(conn: Connection, entry: Entry) -> None:
    """Write `entry` in the caller's transaction (the first verdict on a call stands)."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    conn.execute(
        dialect.insert(first_line_verdicts)
        .values(**entry.values())
        .on_conflict_do_nothing(index_elements=["thread_id", "tool_call_id"])
    )


def refer(entry: Entry, stamp: FirstLineStamp, *, engine: Engine | None = None) -> None:
    """Record a referral: its row, and its line in the thread's trail, in one transaction."""
    call, verdict = entry.call, entry.verdict
    record = AuditRecord(
        thread_id=call.thread_id,
        interrupt_id="",
        tool_call_id=call.tool_call_id,
        agent=call.agent,
        tool=call.name,
        requested_args=dict(call.args),
        decision="referred",
        final_args=None,
        message=verdict.reason,
        reviewer=verdict.reviewer,
        roles=[],
        decided_at=_iso(entry.decided_at),
        outcome="accepted",
        first_line=stamp,
    )

    def once() -> None:
        with storage.using(engine).begin() as conn:
            head = trail.lock_head(conn, call.thread_id)  # writers on this thread queue here
            if _row(conn, call.thread_id, call.tool_call_id) is not None:
                return  # an earlier try (or another replica) recorded this call's verdict
            insert(conn, entry)
            trail.append(conn, head, [record])

    storage.retrying(once, f"first-line verdict on thread {call.thread_id}")


def looked_up(
    call: DelegatedCall, *, now: float, engine: Engine | None = None
) -> tuple[Verdict | None, str | None]:
    """What the ledger says before the model is asked, in one read: the call's verdict, or why it may not."""
    with storage.using(engine).connect() as conn:
        row = _row(conn, call.thread_id, call.tool_call_id)
        if row is not None:
            return _replayed(call, row), None
        return None, _breaker(conn, call.reviewer, call.thread_id, now)


def recorded(call: DelegatedCall, *, engine: Engine | None = None) -> Verdict | None:
    """The verdict recorded on this call, if any; one whose receipt does not verify is a referral."""
    with storage.using(engine).connect() as conn:
        row = _row(conn, call.thread_id, call.tool_call_id)
    return None if row is None else _replayed(call, row)


def _replayed(call: DelegatedCall, row: Row[Any]) -> Verdict:
    """A recorded verdict as the gate gets it again; one whose receipt does not verify is a referral."""
    receipt = json.loads(row.receipt) if row.receipt else None
    verdict = Verdict(row.decision, row.reason, row.reviewer, row.model, row.cause, receipt)
    if row.decision == "refer":
        return verdict
    problems = check(receipt, keyring().jwks, call.thread_id) if isinstance(receipt, dict) else ["no receipt"]
    bound = isinstance(receipt, dict) and (
        receipt.get("decision"),
        receipt.get("tool_call_id"),
        receipt.get("reviewer"),
    ) == (row.decision, call.tool_call_id, row.reviewer)
    if problems or not bound:
        why = "; ".join(problems) or "its receipt is for another decision"
        return Verdict(
            "refer", f"its recorded verdict does not verify ({why})", row.reviewer, row.model, "error"
        )
    return verdict


def breaker(
    reviewer: FirstLineReviewer, thread_id: str, *, now: float, engine: Engine | None = None
) -> str | None:
    """Why the reviewer's circuit breaker is open for a call on `thread_id`, in words; None when closed.

    Open after `refusals_in_a_row` calls in a row on this thread it did not approve, or
    `refusals_per_hour` in the last hour on any thread; each within the last hour.
    """
    with storage.using(engine).connect() as conn:
        return _breaker(conn, reviewer, thread_id, now)


def _breaker(conn: Connection, reviewer: FirstLineReviewer, thread_id: str, now: float) -> str | None:
    since = now - HOUR
    table = first_line_verdicts.c
    latest = list(
        conn.execute(
            select(table.refusal)
            .where(
                table.reviewer == reviewer.actor,
                table.thread_id == thread_id,
                table.decided_at >= since,
                table.cause != "breaker",
            )
            .order_by(table.decided_at.desc())
            .limit(reviewer.refusals_in_a_row)
        )
    )
    hourly = conn.execute(
        select(func.count()).where(
            table.reviewer == reviewer.actor, table.decided_at >= since, table.refusal == 1
        )
    ).scalar_one()
    if len(latest) >= reviewer.refusals_in_a_row and all(r.refusal for r in latest):
        return (
            f"its circuit breaker is open: the last {reviewer.refusals_in_a_row} calls on this thread it did "
            "not approve, so people decide here for an hour"
        )
    if hourly >= reviewer.refusals_per_hour:
        return (
            f"its circuit breaker is open: it did not approve {hourly} calls in the last hour "
            f"(its limit is {reviewer.refusals_per_hour}), so people decide for now"
        )
    return None


def samples(
    groups: frozenset[str], *, limit: int = 50, engine: Engine | None = None
) -> list[FirstLineReview]:
    """The sampled approvals nobody has checked yet, oldest first, of the deciders in `groups`."""
    table = first_line_verdicts.c
    with storage.using(engine).connect() as conn:
        rows = conn.execute(
            select(first_line_verdicts)
            .where(
                table.sampled == 1,
                table.review.is_(None),
                table.decision == "approve",
                table.stood_for.in_(sorted(groups)),
            )
            .order_by(table.decided_at)
            .limit(limit)
        )
        return [as_review(row) for row in rows]


def reviewed(thread_id: str, tool_call_id: str, *, engine: Engine | None = None) -> FirstLineReview | None:
    """The first-line decision on this call, as people check it; None when there is none."""
    with storage.using(engine).connect() as conn:
        row = _row(conn, thread_id, tool_call_id)
    return None if row is None or row.decision == "refer" else as_review(row)


def review(  # noqa: PLR0913  (which decision, whose word, and its record)
    thread_id: str,
    tool_call_id: str,
    word: str,
    person: str,
    record: AuditRecord,
    *,
    engine: Engine | None = None,
) -> bool:
    """Record `person`'s `word` on a first-line decision and its trail record, once; False if given before."""
    table = first_line_verdicts.c

    def once() -> bool:
        with storage.using(engine).begin() as conn:
            head = trail.lock_head(conn, thread_id)
            done = conn.execute(
                update(first_line_verdicts)
                .where(
                    table.thread_id == thread_id,
                    table.tool_call_id == tool_call_id,
                    table.review.is_(None),
                    table.decision != "refer",
                )
                .values(review=word, reviewed_by=person, reviewed_at=time.time())
            )
            if done.rowcount != 1:
                return False
            trail.append(conn, head, [record])
            return True

    return storage.retrying(once, f"first-line review on thread {thread_id}")


def as_review(row: Row[Any]) -> FirstLineReview:
    """A row as `GET /first-line/samples` lists it."""
    found: FirstLineReview = {
        "thread_id": row.thread_id,
        "tool_call_id": row.tool_call_id,
        "agent": row.agent,
        "tool": row.tool,
        "args": json.loads(row.args),
        "decision": row.decision,
        "reason": row.reason,
        "reviewer": row.reviewer,
        "model": row.model,
        "stood_for": row.stood_for,
        "decided_at": _iso(row.decided_at),
    }
    if row.review:
        found["review"] = row.review
        found["reviewed_by"] = str(row.reviewed_by)
    return found


def _row(conn: Connection, thread_id: str, tool_call_id: str) -> Row[Any] | None:
    table = first_line_verdicts.c
    return conn.execute(
        select(first_line_verdicts).where(table.thread_id == thread_id, table.tool_call_id == tool_call_id)
    ).first()


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()
