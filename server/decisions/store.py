"""Accepted decisions: recorded in one transaction with their claim, receipts and audit records.

`accept` locks the thread's audit head, claims the answered interrupts (`server.coordination.claims`), signs
the receipts after that head, appends their records and stores the decision with the command
that applies it, or does none of it. From then on the decision is a promise: the run that
carries it, a re-send of the same answer (`replayable`, `take_over`) or the reconciler
(`server.coordination.reconciler`) applies it, and nobody can decide those interrupts again. Blocking
functions (the database) are wrapped for the event loop where `server.http.auth` calls them.
Not for checking an answer (`server.decisions.checks`) or running it (the engine).
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select, update

from hitl.gate.trusted_state import seal_allowance, seal_receipt
from hitl.policy.allowances import STATE_KEY as ALLOWANCES_KEY
from server.coordination import claims
from server.decisions.checks import INTERRUPT_ID, ResumeRefused
from server.records import audit, trail
from server.records.receipts import sign
from server.runtime import storage
from server.runtime.storage import decided_interrupts, decisions

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sqlalchemy import Connection, Engine, Row

    from hitl.contracts.shapes import Allowance, ApprovalReceipt, AuditRecord
    from hitl.policy.overrides import PolicyCatalog
    from server.decisions.checks import Pending
    from server.identity.users import User

GRACE_SECONDS = 5.0
"""How long a decision's run may take to appear before a re-send or the reconciler runs it again."""
MAX_KEY_CHARS = 200
IDEMPOTENCY_HEADER = "idempotency-key"
"""The request header (copied into the run's `configurable` by `http.configurable_headers`)."""


class _Held(Exception):  # noqa: N818  (a control-flow signal inside `accept`)
    """Another decision holds an interrupt: the transaction rolls back."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


class Replayed(ResumeRefused):
    """The sender's own earlier answer: already applied, or being applied now (not a new attempt)."""


def answer_sha256(command: Mapping[str, Any]) -> str:
    """SHA-256 of what a resume command asks, as sent: its resume, update and goto, in canonical JSON."""
    asked = {k: command.get(k) for k in ("resume", "update", "goto") if command.get(k) is not None}
    text = json.dumps(asked, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Request:
    """One resume as sent: who, on which thread, what (as a hash and a copy), and for which run."""

    thread_id: str
    reviewer: str
    role: str
    sent: dict[str, Any]
    answer_sha256: str
    idempotency_key: str | None = None
    run_id: str | None = None
    assistant_id: str | None = None

    @classmethod
    def of(
        cls, thread_id: str, user: User, command: Mapping[str, Any], run: Mapping[str, Any] | None
    ) -> Request:
        """The request `user` sends with `command`, in the run being admitted (`run`, if any).

        Raises:
            ResumeRefused: 422 for an Idempotency-Key that is not a short printable text.
        """
        run = run or {}
        kwargs = run.get("kwargs")
        config = kwargs.get("config") if isinstance(kwargs, dict) else None
        configurable = config.get("configurable") if isinstance(config, dict) else None
        key = configurable.get(IDEMPOTENCY_HEADER) if isinstance(configurable, dict) else None
        if key is not None and not (
            isinstance(key, str) and 0 < len(key) <= MAX_KEY_CHARS and key.isprintable()
        ):
            msg = f"Idempotency-Key must be printable text of 1 to {MAX_KEY_CHARS} characters."
            raise ResumeRefused(422, msg)
        sent = {k: copy.deepcopy(v) for k, v in command.items() if k in {"resume", "update", "goto"}}
        return cls(
            thread_id=thread_id,
            reviewer=user.identity,
            role=user.role,
            sent=sent,
            answer_sha256=answer_sha256(sent),
            idempotency_key=key,
            run_id=None if run.get("run_id") is None else str(run["run_id"]),
            assistant_id=None if run.get("assistant_id") is None else str(run["assistant_id"]),
        )


@dataclass(frozen=True)
class Decision:
    """An accepted decision as stored."""

    decision_id: str
    thread_id: str
    reviewer: str
    role: str
    answer_sha256: str
    idempotency_key: str | None
    sent: dict[str, Any]
    command: dict[str, Any]
    receipts: list[ApprovalReceipt]
    assistant_id: str | None
    run_id: str | None
    state: str
    attempts: int
    accepted_at: float
    tried_at: float
    interrupt_ids: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, row: Row[Any], interrupt_ids: list[str]) -> Decision:
        """The decision stored in `row`."""
        return cls(
            decision_id=row.decision_id,
            thread_id=row.thread_id,
            reviewer=row.reviewer,
            role=row.role,
            answer_sha256=row.answer_sha256,
            idempotency_key=row.idempotency_key,
            sent=json.loads(row.sent),
            command=json.loads(row.command),
            receipts=json.loads(row.receipts),
            assistant_id=row.assistant_id,
            run_id=row.run_id,
            state=row.state,
            attempts=int(row.attempts),
            accepted_at=float(row.accepted_at),
            tried_at=float(row.tried_at),
            interrupt_ids=sorted(interrupt_ids),
        )

    def sent_again_by(self, request: Request) -> bool:
        """Whether `request` is this decision sent again: same person, same answer (or same Idempotency-Key).

        Raises:
            ResumeRefused: 422 when the same person's Idempotency-Key names another answer.
        """
        if request.reviewer != self.reviewer:
            return False
        if request.idempotency_key and request.idempotency_key == self.idempotency_key:
            if request.answer_sha256 != self.answer_sha256:
                msg = (
                    f"Idempotency-Key {request.idempotency_key!r} was sent before with another answer "
                    "(accepted then); send a new key for a new answer."
                )
                raise ResumeRefused(422, msg)
            return True
        return request.answer_sha256 == self.answer_sha256

    def describe(self) -> str:
        """The decision in words: who decided what, when."""
        what = ", ".join(f"{r.get('decision')} of {r.get('tool')}" for r in self.receipts) or "an answer"
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.accepted_at))
        return f"{self.reviewer}'s {what}, accepted at {when}"


def targets(resume: object, pending: list[Pending]) -> list[str]:
    """The interrupts a resume answers: the ids it names, else the ones pending (a bare answer)."""
    if (
        isinstance(resume, dict)
        and resume
        and all(isinstance(k, str) and INTERRUPT_ID.match(k) for k in resume)
    ):
        return sorted(resume)
    return sorted(p.id for p in pending)


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
) -> Decision:
    """Record the decision in one transaction: claims, signed receipts, audit records, the command to apply.

    `command` is the checked resume command; the stored one adds the sealed receipts (and
    `allowed`) to its update. `recorded_too` are audit records that follow the receipts'.

    Raises:
        ResumeRefused: 409 when another decision holds one of the interrupts (nothing recorded);
            `Replayed` when that decision is this same answer from the same person.
    """
    database = _database(engine)
    decision_id = uuid.uuid4().hex

    def once() -> Decision | str:
        try:
            with database.begin() as conn:
                return record(conn)
        except _Held as held:  # leaving the block rolled the claims back
            return held.holder

    def record(conn: Connection) -> Decision:
        head = trail.lock_head(conn, request.thread_id)
        if (earlier := _stored(conn, decision_id)) is not None:
            return earlier  # an earlier try committed before its connection was lost
        if (holder := claims.claim(conn, interrupt_ids, decision_id)) is not None:
            raise _Held(holder)
        signed = sign(request.thread_id, receipts, catalog, head.hash)
        accepted = _with_receipts(command, request.thread_id, signed, allowed or [])
        trail.append(conn, head, [*audit.as_records(request.thread_id, signed), *(recorded_too or [])])
        now = time.time()
        conn.execute(
            decisions.insert().values(
                decision_id=decision_id,
                thread_id=request.thread_id,
                reviewer=request.reviewer,
                role=request.role,
                answer_sha256=request.answer_sha256,
                idempotency_key=request.idempotency_key,
                sent=json.dumps(request.sent, default=str),
                command=json.dumps(accepted, default=str),
                receipts=json.dumps(signed, default=str),
                assistant_id=request.assistant_id,
                run_id=request.run_id,
                state="accepted",
                attempts=1,
                accepted_at=now,
                tried_at=now,
            )
        )
        stored_now = _stored(conn, decision_id)
        if stored_now is None:  # pragma: no cover  (just inserted in this transaction)
            raise _Held(decision_id)
        return stored_now

    outcome = storage.retrying(once, f"decision on thread {request.thread_id}")
    if isinstance(outcome, Decision):
        return outcome
    holder = stored(outcome, engine=database)
    if holder is not None and holder.sent_again_by(request):
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


def settle(decision_id: str, state: str, *, engine: Engine | None = None) -> None:
    """Mark the decision `applied` (its interrupts were answered by a run)."""
    with _database(engine).begin() as conn:
        conn.execute(update(decisions).where(decisions.c.decision_id == decision_id).values(state=state))


def give_up(decision: Decision, record: AuditRecord, *, engine: Engine | None = None) -> None:
    """Mark the decision `failed`, release its claims (its interrupts may be answered again) and audit it."""
    with _database(engine).begin() as conn:
        head = trail.lock_head(conn, decision.thread_id)
        done = conn.execute(
            update(decisions)
            .where(decisions.c.decision_id == decision.decision_id, decisions.c.state == "accepted")
            .values(state="failed")
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
