"""Accepted decisions: recorded in one transaction with their claim, receipts and audit records.

One concept, a decision's row from its acceptance to its end (taken over, settled, given up,
refused, forgotten), so long. `accept` locks the thread's audit head, claims the answered
interrupts (`server.coordination.claims`), signs the receipts after that head, appends their
records and stores the decision with the command that applies it, sealed
(`server.decisions.provenance`), or does none of it. From then on the decision is a promise: the
run that carries it, a re-send of the same answer (`take_over`) or the reconciler
(`server.coordination.reconciler`) applies it, and nobody can decide those interrupts again.
Blocking (the database): `pipeline` calls it off the event loop. Not for what a decision is
(`decision`), checking an answer (`checks`) or running it (the engine).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select, update

from hitl.gate.trusted_state import seal_allowance, seal_receipt
from hitl.policy.allowances import STATE_KEY as ALLOWANCES_KEY
from server.coordination import claims, inbox_table_rows
from server.decisions.decision import GRACE_SECONDS, Decision, Replayed, Request
from server.decisions.pending import ResumeRefused
from server.decisions.provenance import seal_of
from server.insight import metrics
from server.ledger import storage
from server.ledger.storage import decided_interrupts, decisions
from server.records import audit, trail
from server.records.receipts import sign

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy import Connection, Engine, Row

    from hitl.contracts.records import Allowance, ApprovalReceipt, AuditRecord
    from hitl.policy.overrides import PolicyCatalog


logger = logging.getLogger(__name__)


class _Held(Exception):  # noqa: N818  (a control-flow signal inside `accept`)
    """Another decision holds an interrupt: the transaction rolls back."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


# The parts of accepting, each timed apart (`hitl_gate_seconds{phase="resume.*"}`; the bench reports them).
_lock_head = metrics.timed("resume.audit_head")(trail.lock_head)
_claim = metrics.timed("resume.claim")(claims.claim)
_sign = metrics.timed("resume.sign")(sign)
_append = metrics.timed("resume.audit_append")(trail.append)


def _database(engine: Engine | None) -> Engine:
    return storage.using(engine)


def _load(conn: Connection, rows: list[Row[Any]]) -> list[Decision]:
    ids = [r.decision_id for r in rows]
    held: dict[str, list[str]] = {i: [] for i in ids}
    for interrupt_id, decision_id in conn.execute(
        select(decided_interrupts.c.interrupt_id, decided_interrupts.c.decision_id).where(
            decided_interrupts.c.decision_id.in_(ids)
        )
    ):
        held[decision_id].append(interrupt_id)
    return [Decision.of(r, held[r.decision_id]) for r in rows]


def accept(  # noqa: PLR0913  (what was decided, on what, under which policy, and what it allows)
    request: Request,
    command: dict[str, Any],
    interrupt_ids: list[str],
    receipts: list[ApprovalReceipt],
    *,
    catalog: PolicyCatalog | None,
    allowed: list[Allowance] | None = None,
    recorded_too: list[AuditRecord] | None = None,
    engine: Engine | None = None,
    applied_by_graph: Callable[[Connection, list[ApprovalReceipt]], None] | None = None,
) -> Decision:
    """Record the decision in one transaction: claims, signed receipts, audit records, the command to apply.

    `command` is the checked resume command; the stored one adds the sealed receipts (and
    `allowed`) to its update. `recorded_too` are audit records that follow the receipts'.
    `applied_by_graph`: a decision the graph applies itself, in the run that asked (a first-line
    reviewer's, `server.first_line`): stored `applied` (no run or reconciler applies it again), and
    this is called with the transaction and the signed receipts to record its own part in it.

    Raises:
        ResumeRefused: 409 when another decision holds one of the interrupts (nothing recorded);
            `Replayed` when that decision is this same answer from the same person.
    """
    database = _database(engine)
    decision_id = uuid.uuid4().hex
    unannounced: list[dict[str, Any]] = []

    def once() -> Decision | str:
        try:
            with database.begin() as conn:
                return record(conn)
        except _Held as held:  # leaving the block rolled the claims back
            return held.holder

    def record(conn: Connection) -> Decision:
        head = _lock_head(conn, request.thread_id)
        if (earlier := _stored(conn, decision_id)) is not None:
            return earlier  # an earlier try committed before its connection was lost
        if (holder := _claim(conn, interrupt_ids, decision_id)) is not None:
            raise _Held(holder)
        unannounced[:] = inbox_table_rows.remove(conn, request.thread_id, interrupt_ids)  # out with the claim
        signed = _sign(request.thread_id, receipts, catalog, head.hash)
        accepted = _with_receipts(command, request.thread_id, signed, allowed or [])
        _append(conn, head, [*audit.as_records(request.thread_id, signed), *(recorded_too or [])])
        now = time.time()
        sent, applied, kept = (json.dumps(v, default=str) for v in (request.sent, accepted, signed))
        conn.execute(
            decisions.insert().values(
                decision_id=decision_id,
                thread_id=request.thread_id,
                reviewer=request.reviewer,
                role=request.role,
                answer_sha256=request.answer_sha256,
                idempotency_key=request.idempotency_key,
                sent=sent,
                command=applied,
                receipts=kept,
                seal=seal_of(  # over the JSON as stored, read back as `Decision.of` reads it
                    decision_id,
                    request.thread_id,
                    interrupt_ids,
                    json.loads(sent),
                    json.loads(applied),
                    json.loads(kept),
                ),
                assistant_id=request.assistant_id,
                run_id=request.run_id,
                state="accepted" if applied_by_graph is None else "applied",
                attempts=1,
                accepted_at=now,
                tried_at=now,
            )
        )
        if applied_by_graph is not None:
            applied_by_graph(conn, signed)
        stored_now = _stored(conn, decision_id)
        if stored_now is None:  # pragma: no cover  (just inserted in this transaction)
            raise _Held(decision_id)
        return stored_now

    outcome = storage.retrying(once, f"decision on thread {request.thread_id}")
    if isinstance(outcome, Decision):
        metrics.requested(unannounced)  # asked and decided before the watcher announced them
        return outcome
    holder = stored(outcome, engine=database)
    if holder is not None and holder.sent_again_by(
        request, holder.reviewer
    ):  # its words only: a 409 either way
        raise Replayed(409, f"This answer was already accepted ({holder.describe()}); it is being applied.")
    who = holder.reviewer if holder is not None else "someone else"
    raise ResumeRefused(409, f"This approval was already answered by {who}; it is being applied.")


def record_signed(
    thread_id: str,
    receipts: list[ApprovalReceipt],
    catalog: PolicyCatalog | None,
    *,
    engine: Engine | None = None,
) -> list[ApprovalReceipt]:
    """Sign `receipts` after the thread's head and append their records, in one transaction; the signed ones.

    For decisions that claim nothing and apply nothing (`server.decisions.withdrawals`).
    """
    with _database(engine).begin() as conn:
        head = trail.lock_head(conn, thread_id)
        signed = sign(thread_id, receipts, catalog, head.hash)
        trail.append(conn, head, audit.as_records(thread_id, signed))
    return signed


@metrics.timed("resume.seal")
def _with_receipts(
    command: dict[str, Any], thread_id: str, signed: list[ApprovalReceipt], allowed: list[Allowance]
) -> dict[str, Any]:
    """`command` with the sealed receipts (and allowances) in its update: what the graph gets."""
    given = command.get("update")
    update: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    update["approval_receipts"] = [
        *update.get("approval_receipts", []),
        *(seal_receipt(r, thread_id) for r in signed),
    ]
    if allowed:
        update[ALLOWANCES_KEY] = {a["id"]: seal_allowance(a) for a in allowed}
    return {**command, "update": update}


def _stored(conn: Connection, decision_id: str) -> Decision | None:
    row = conn.execute(select(decisions).where(decisions.c.decision_id == decision_id)).first()
    return _load(conn, [row])[0] if row is not None else None


def stored(decision_id: str, *, engine: Engine | None = None) -> Decision | None:
    """The decision `decision_id`, if recorded."""
    with _database(engine).connect() as conn:
        return _stored(conn, decision_id)


def holding(
    interrupt_ids: list[str], *, thread_id: str | None = None, engine: Engine | None = None
) -> list[Decision]:
    """The decisions that hold any of `interrupt_ids` (on `thread_id` only, when given).

    A resume names interrupts by id; an id from another thread must never find that thread's
    decision (it is refused as unknown there, by the checks).
    """
    if not interrupt_ids:
        return []
    with _database(engine).connect() as conn:
        ids = select(decided_interrupts.c.decision_id).where(
            decided_interrupts.c.interrupt_id.in_(interrupt_ids)
        )
        query = select(decisions).where(decisions.c.decision_id.in_(ids))
        if thread_id is not None:
            query = query.where(decisions.c.thread_id == thread_id)
        return _load(conn, list(conn.execute(query)))


def latest_of(request: Request, *, engine: Engine | None = None) -> Decision | None:
    """The sender's latest decision on the thread with this answer (or Idempotency-Key), if any."""
    same = decisions.c.answer_sha256 == request.answer_sha256
    if request.idempotency_key:
        same = same | (decisions.c.idempotency_key == request.idempotency_key)
    with _database(engine).connect() as conn:
        row = conn.execute(
            select(decisions)
            .where(decisions.c.thread_id == request.thread_id, decisions.c.reviewer == request.reviewer, same)
            .order_by(decisions.c.accepted_at.desc())
            .limit(1)
        ).first()
        return _load(conn, [row])[0] if row is not None else None


def take_over(
    decision: Decision, run_id: str | None, *, now: float | None = None, engine: Engine | None = None
) -> bool:
    """Make `run_id` the run applying `decision`, if its last run had `GRACE_SECONDS` to appear and did not.

    A compare-and-set on the run it names: of two re-sends (or a re-send and the reconciler)
    only one takes it over.
    """
    now = time.time() if now is None else now
    row = decisions.c
    statement = (
        update(decisions)
        .where(
            row.decision_id == decision.decision_id,
            row.state == "accepted",
            row.tried_at <= now - GRACE_SECONDS,
            func.coalesce(row.run_id, "") == (decision.run_id or ""),
        )
        .values(run_id=run_id, attempts=row.attempts + 1, tried_at=now)
    )

    def once() -> bool:
        with _database(engine).begin() as conn:
            return conn.execute(statement).rowcount == 1

    return storage.retrying(once, f"decision {decision.decision_id}")


def attempted(decision_id: str, *, now: float | None = None, engine: Engine | None = None) -> None:
    """Count one more attempt at applying a still accepted decision that failed before any run started."""
    statement = (
        update(decisions)
        .where(decisions.c.decision_id == decision_id, decisions.c.state == "accepted")
        .values(attempts=decisions.c.attempts + 1, tried_at=time.time() if now is None else now)
    )
    with _database(engine).begin() as conn:
        conn.execute(statement)


def settle(decision_id: str, state: str, *, engine: Engine | None = None) -> None:
    """Mark the decision `applied` (its interrupts were answered by a run)."""
    with _database(engine).begin() as conn:
        conn.execute(update(decisions).where(decisions.c.decision_id == decision_id).values(state=state))


def give_up(decision: Decision, record: AuditRecord, *, engine: Engine | None = None) -> None:
    """Mark the decision `failed`, release its claims (its interrupts may be answered again) and audit it."""
    _close(decision, record, "failed", ("accepted",), engine)


def refuse(decision: Decision, why: str, *, engine: Engine | None = None) -> None:
    """Refuse a stored decision its signatures do not stand behind (`provenance.vouch`): never applied.

    Marked `refused` whatever its state, its claims released (its interrupts answerable again),
    audited on the thread's trail, counted (`hitl_decisions_unverified_total`) and logged as an error.
    """
    logger.error(
        "decision %s on thread %s does not verify and is not applied: %s (its row names %s, %s)",
        decision.decision_id,
        decision.thread_id,
        why,
        decision.reviewer,
        decision.role,
    )
    metrics.UNVERIFIED.inc()
    message = f"decision {decision.decision_id} was refused: {why}; the approval may be answered again."
    record = audit.not_applied(
        decision.thread_id, decision.interrupt_ids, [], message, refusal=f"does not verify: {why}"
    )
    _close(decision, record, "refused", ("accepted", "applied", "failed"), engine)


def _close(
    decision: Decision, record: AuditRecord, state: str, states: tuple[str, ...], engine: Engine | None
) -> None:
    with _database(engine).begin() as conn:
        head = trail.lock_head(conn, decision.thread_id)
        done = conn.execute(
            update(decisions)
            .where(decisions.c.decision_id == decision.decision_id, decisions.c.state.in_(states))
            .values(state=state)
        )
        if done.rowcount == 1:
            claims.release(conn, decision.decision_id)
            trail.append(conn, head, [record])


def due(now: float | None = None, *, limit: int = 100, engine: Engine | None = None) -> list[Decision]:
    """Accepted decisions not known to be applied whose latest run had its grace (backing off per attempt)."""
    now = time.time() if now is None else now
    with _database(engine).connect() as conn:
        rows = list(
            conn.execute(
                select(decisions)
                .where(decisions.c.state == "accepted", decisions.c.tried_at <= now - GRACE_SECONDS)
                .order_by(decisions.c.tried_at)
                .limit(limit)
            )
        )
        found = _load(conn, rows)
    return [d for d in found if d.tried_at <= now - GRACE_SECONDS * 2 ** min(d.attempts - 1, 5)]


def forget(before: float, *, engine: Engine | None = None) -> None:
    """Delete settled decisions accepted before `before` (seconds since the epoch), with their claims."""
    old = select(decisions.c.decision_id).where(
        decisions.c.state != "accepted", decisions.c.accepted_at < before
    )
    with _database(engine).begin() as conn:
        conn.execute(delete(decided_interrupts).where(decided_interrupts.c.decision_id.in_(old)))
        conn.execute(delete(decisions).where(decisions.c.decision_id.in_(old)))
