"""A decision as the server keeps it: the answer as its sender sent it, and what it became once accepted.

`Request` is one answer on its way in (who, on which thread, its canonical hash, its
`Idempotency-Key`, the run that would apply it); `Decision` an accepted one as stored, which
tells whether a later request is the same answer sent again. Pure data; `store` keeps them.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from server.decisions.checks import INTERRUPT_ID
from server.decisions.pending import ResumeRefused

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sqlalchemy import Row

    from hitl.contracts.records import ApprovalReceipt
    from server.decisions.pending import Pending
    from server.identity.users import User


GRACE_SECONDS = 5.0
"""How long a decision's run may take to appear before a re-send or the reconciler runs it again."""


MAX_KEY_CHARS = 200


IDEMPOTENCY_HEADER = "idempotency-key"
"""The request header (copied into the run's `configurable` by `http.configurable_headers`)."""


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
    """An accepted decision as stored: a row's word, which only `provenance.vouch` turns into a decider."""

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
    seal: str | None = None
    """The server's seal over the answer, the command and the claims (`server.decisions.provenance`)."""

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
            seal=getattr(row, "seal", None),
        )

    def sent_again_by(self, request: Request, decider: str) -> bool:
        """Whether `request` is this decision sent again: by `decider`, same answer (or Idempotency-Key).

        `decider` is whom the decision's signed receipts name (`provenance.vouch`), not the row's word.

        Raises:
            ResumeRefused: 422 when the same person's Idempotency-Key names another answer.
        """
        if request.reviewer != decider:
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
