"""Who stands behind a stored decision: rebuilt from its signatures, never from the row's word.

The reconciler and the take-over of a re-sent answer apply decisions kept as rows in the layer's
store; whoever could write such a row must not thereby decide. `vouch` trusts only what the
server signed: each receipt a JWS under a key the server lists, every field as signed, bound to
the decision's thread and to exactly the interrupts it claims, its record in the thread's
trail, which verifies; the row's command and answer under the server's seal (`seal_of`, made
as the decision was accepted). It returns the decider the signatures name (a quorum counts the
receipts' signers, `hitl.policy.quorum.tally`). Blocking: it reads the trail. Not for applying
a decision (`server.coordination.reconciler`, `server.decisions.pipeline`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hitl.proof.receipt_keys import keyring
from hitl.proof.seal import seal, verify
from hitl.proof.signed_receipts import SIGNED_FIELD, check
from hitl.proof.verification import Evidence
from hitl.proof.verification import verify as verify_thread
from server.identity.users import ROLES, User, from_memberships
from server.records import trail

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from hitl.contracts.records import ApprovalReceipt
    from server.decisions.decision import Decision

PURPOSE = "decision"


class UnvouchedError(Exception):
    """A stored decision its signatures do not stand behind; the message says why."""


@dataclass(frozen=True)
class Voucher:
    """What the signatures of a stored decision say: who decided it, with which receipts."""

    user: User
    receipts: list[ApprovalReceipt]


def seal_of(  # noqa: PLR0913, PLR0917  (everything a decision binds)
    decision_id: str,
    thread_id: str,
    interrupt_ids: list[str],
    sent: dict[str, Any],
    command: dict[str, Any],
    receipts: list[Any],
) -> str:
    """The server's seal over what a decision applies: its answer as sent and as accepted, its claims."""
    return seal(PURPOSE, thread_id, _parts(decision_id, interrupt_ids, sent, command, receipts))


def _parts(
    decision_id: str,
    interrupt_ids: list[str],
    sent: dict[str, Any],
    command: dict[str, Any],
    receipts: list[Any],
) -> list[Any]:
    tokens = [r.get(SIGNED_FIELD) for r in receipts if isinstance(r, dict)]
    return [decision_id, sorted(interrupt_ids), sent, command, tokens]


def vouch(decision: Decision, *, engine: Engine | None = None) -> Voucher:
    """The decider and receipts `decision`'s signatures name, or `UnvouchedError` saying what fails.

    Raises:
        UnvouchedError: no receipt, a receipt that does not verify or binds another thread or
            interrupt, receipts of several people, a record missing from the thread's trail or
            a trail that does not verify, or a command or answer without the server's seal.
    """
    receipts = decision.receipts
    if not receipts:
        raise UnvouchedError("it carries no signed receipt")
    jwks = keyring().jwks
    for receipt in receipts:
        if problems := check(receipt, jwks, decision.thread_id):
            msg = f"a receipt does not verify: {'; '.join(problems)}"
            raise UnvouchedError(msg)
    signed_for = {str(r.get("interrupt_id")) for r in receipts}
    if signed_for != set(decision.interrupt_ids):
        claimed = ", ".join(decision.interrupt_ids) or "none"
        msg = f"its receipts answer {', '.join(sorted(signed_for))}, its claims {claimed}"
        raise UnvouchedError(msg)
    people = {str(r.get("reviewer")) for r in receipts}
    if len(people) != 1:
        msg = f"its receipts name several deciders ({', '.join(sorted(people))})"
        raise UnvouchedError(msg)
    parts = _parts(
        decision.decision_id, decision.interrupt_ids, decision.sent, decision.command, list(receipts)
    )
    if not verify(PURPOSE, decision.thread_id, parts, decision.seal):
        raise UnvouchedError("its answer and command are not as the server sealed them")
    _in_the_trail(decision, receipts, engine)
    (identity,) = people
    return Voucher(
        user=from_memberships(identity, _role(receipts[0].get("roles")), receipts[0].get("roles")),
        receipts=list(receipts),
    )


def _in_the_trail(decision: Decision, receipts: list[ApprovalReceipt], engine: Engine | None) -> None:
    """Each receipt's record is in the thread's trail, and that trail verifies."""
    records, head = trail.read(decision.thread_id, engine=engine)
    report = verify_thread(Evidence(decision.thread_id, keyring().jwks, records, head.as_json()))
    if not report.ok:
        problems = [*report.trail_problems, *(p for r in report.receipts for p in r.problems)]
        msg = f"the thread's trail does not verify: {'; '.join(problems[:3])}"
        raise UnvouchedError(msg)
    recorded = {r.get(SIGNED_FIELD) for r in records}
    if missing := [r for r in receipts if r.get(SIGNED_FIELD) not in recorded]:
        msg = f"{len(missing)} of its receipts have no record in the thread's trail"
        raise UnvouchedError(msg)


def _role(roles: object) -> Any:  # noqa: ANN401  (a `Role`)
    """The highest role of a receipt's signed roles (a supervisor's receipt lists reviewer too)."""
    named = [r for r in ROLES if isinstance(roles, list) and r in roles]
    return named[-1] if named else "requester"
