"""The story of one call put to a first-line reviewer, from the gate's question to a recorded verdict.

`review` reads top to bottom and is what the gate calls (`keep_in` registers it at start-up):
1. **replay**: a call already decided gets its recorded verdict (a node that runs again);
2. **breaker**: while its circuit breaker is open, people decide;
3. **classify**: the policy's model, within its timeout; a timeout, an error, an answer that does
   not parse or a model that cannot be built leave the call to people;
4. **bound its answer**: an answer its policy does not let it give (a reject, when it may only
   approve) leaves the call to people, with its reason;
5. **decide** as `model:<name>` through the same checks (`checks.check_resume` on the value the gate
   would have asked), acceptance, signing and trail (`store.accept`, `audit.receipts`) as a person's,
   keyed by the tool call: one outcome on any replica; the ledger's row in the same transaction.
A referral is recorded with its reason (the ledger's row and a trail record); the gate shows it on
the card. Blocking: the gate calls it off the event loop.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import TYPE_CHECKING, Any

from hitl.model.first_line import review as door
from hitl.model.first_line.classifier import ClassifierFailure, build
from hitl.model.first_line.review import Verdict
from hitl.model.first_line.verdict import ReviewedCall
from hitl.settings import get_settings
from server.admission.overrides import card_for
from server.decisions import store
from server.decisions.checks import check_resume
from server.decisions.decision import Request, answer_sha256
from server.decisions.pending import Pending, ResumeRefused
from server.first_line import ledger
from server.identity.users import User
from server.insight import metrics
from server.records import audit
from server.records.receipts import revision_of

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from hitl.contracts.records import ApprovalReceipt, FirstLineStamp
    from hitl.model.first_line.review import DelegatedCall
    from hitl.model.first_line.verdict import FirstLineVerdict
    from hitl.policy.overrides import PolicyCatalog

logger = logging.getLogger(__name__)
_accept = metrics.timed("first_line.accept")(store.accept)
"""`store.accept`, timed as `hitl_gate_seconds{phase="first_line.accept"}` (the bench reports it)."""


def start(engine: Engine | None = None) -> None:
    """Let the gates of this process put delegated calls to `review` (on the layer's store, or `engine`)."""
    door.keep_in(lambda call: review(call, engine=engine))


def review(call: DelegatedCall, *, engine: Engine | None = None) -> Verdict:
    """What becomes of `call`: approved or rejected by the model (signed, recorded), or left to people."""
    started = time.perf_counter()
    try:
        return _review(call, engine)
    finally:
        metrics.FIRST_LINE_SECONDS.labels(
            agent=metrics.label(call.agent), tool=metrics.label(call.name)
        ).observe(time.perf_counter() - started)


def _review(call: DelegatedCall, engine: Engine | None) -> Verdict:
    replayed, open_because = ledger.looked_up(call, now=time.time(), engine=engine)
    if replayed is not None:
        return replayed
    reviewer = call.reviewer
    card = card_for(call.graph_id) if call.graph_id else None
    catalog = card.catalog if card is not None else None
    if open_because is not None:
        return _refer(call, catalog, _verdict(call, "refer", open_because, "breaker"), 0.0, engine=engine)
    asked = time.perf_counter()
    try:
        classifier = build(reviewer, get_settings())
        model = classifier.model_id
        said: FirstLineVerdict | None = classifier.classify(
            ReviewedCall(reviewer.name, call.agent, call.name, call.description, call.args)
        )
        failure = None
    except ClassifierFailure as failed:
        model, said, failure = reviewer.model, None, failed
    latency_ms = (time.perf_counter() - asked) * 1000
    metrics.GATE_SECONDS.labels(phase="first_line.classify").observe(latency_ms / 1000)
    if failure is not None or said is None:
        why = failure.message if failure else "no answer"
        unanswered = _verdict(call, "refer", why, failure.cause if failure else "error", model)
        return _refer(call, catalog, unanswered, latency_ms, engine=engine)
    decision, reason, cause = reviewer.bounded(said.decision, said.reason)
    if decision == "refer":
        return _refer(call, catalog, _verdict(call, "refer", reason, cause, model), latency_ms, engine=engine)
    return _decide(call, catalog, said, model=model, latency_ms=latency_ms, engine=engine)


def _decide(  # noqa: PLR0913  (the call, its rules, the model's answer, and where it is recorded)
    call: DelegatedCall,
    catalog: PolicyCatalog | None,
    said: FirstLineVerdict,
    *,
    model: str,
    latency_ms: float,
    engine: Engine | None,
) -> Verdict:
    """Accept the model's approve or reject as `model:<name>`, exactly as a person's decision is accepted."""
    reviewer = call.reviewer
    pending = Pending(id=interrupt_id_of(call), value=_asked(call))
    answer: dict[str, Any] = {"type": said.decision}
    if said.decision == "reject":
        answer["message"] = f"Rejected by the first-line reviewer {reviewer.actor}: {said.reason}"
    command = {"resume": {pending.id: answer}}
    user = decider(call)
    try:
        accepted = check_resume(
            command["resume"], [pending], user=user, owner=None, max_bytes=get_settings().max_resume_bytes
        )
    except ResumeRefused as refusal:  # the bounds let it through, the checks did not: a person decides
        why = f"its {said.decision} was refused: {refusal.message}"
        return _refer(
            call, catalog, _verdict(call, "refer", why, "not_allowed", model), latency_ms, engine=engine
        )
    stamp = _stamp(call, catalog, model, latency_ms)
    receipts = [_as_models(r, stamp, said.reason) for r in audit.receipts(accepted, user)]
    sent = {"resume": command["resume"]}
    request = Request(
        thread_id=call.thread_id,
        reviewer=reviewer.actor,
        role="model",
        sent=sent,
        answer_sha256=answer_sha256(sent),
    )
    now = time.time()
    sample = said.decision == "approve" and ledger.sampled(
        call.thread_id, call.tool_call_id, reviewer.sample_rate
    )

    def alongside(conn: Connection, signed: list[ApprovalReceipt]) -> None:
        verdict = Verdict(said.decision, said.reason, reviewer.actor, model, "model", dict(signed[0]))
        entry = ledger.Entry(
            call, verdict, call.required_role, latency_ms, said.decision != "approve", sample, now
        )
        ledger.insert(conn, entry)

    try:
        decision = _accept(
            request,
            command,
            [pending.id],
            receipts,
            catalog=catalog,
            engine=engine,
            applied_by_graph=alongside,
        )
    except ResumeRefused:  # another replica decided this call first: its verdict stands
        return ledger.recorded(call, engine=engine) or _verdict(
            call, "refer", "decided elsewhere", "error", model
        )
    metrics.observe(audit.as_records(call.thread_id, decision.receipts))
    _count(call, said.decision, "model")
    signed = decision.receipts[0]
    return Verdict(said.decision, said.reason, reviewer.actor, model, "model", dict(signed))


def _refer(
    call: DelegatedCall,
    catalog: PolicyCatalog | None,
    verdict: Verdict,
    latency_ms: float,
    *,
    engine: Engine | None,
) -> Verdict:
    """Leave `call` to people with the verdict's reason: recorded (its row and a trail record), counted."""
    stamp: FirstLineStamp = {**_stamp(call, catalog, verdict.model, latency_ms), "cause": verdict.cause}  # type: ignore[typeddict-item]
    refusal = verdict.cause != "breaker"
    entry = ledger.Entry(
        call, verdict, call.required_role, latency_ms, refusal, sampled=False, decided_at=time.time()
    )
    ledger.refer(entry, stamp, engine=engine)
    if verdict.cause not in {"model", "breaker"}:
        logger.warning(
            "first-line reviewer %s left a %s call to people: %s", verdict.reviewer, call.name, verdict.reason
        )
    _count(call, "refer", verdict.cause)
    return ledger.recorded(call, engine=engine) or verdict


def interrupt_id_of(call: DelegatedCall) -> str:
    """The claim a first-line decision holds: one per thread and tool call, shaped as an interrupt id."""
    return hashlib.sha256(f"first-line:{call.thread_id}:{call.tool_call_id}".encode()).hexdigest()[:32]


def decider(call: DelegatedCall) -> User:
    """The first-line reviewer as the checks see it: its own name, in the groups it stands in front of only.

    A `User` in exactly its `stands_for` groups (its role is `reviewer` when it stands for reviewers,
    else the lowest, `requester`, which decides nothing), so it may decide nothing beyond them; its
    receipts name no role at all (`_as_models`), so nothing reads it as a person's.
    """
    stands_for = frozenset(call.reviewer.stands_for) - {"requester", "reviewer", "supervisor"}
    return User(
        identity=call.reviewer.actor,
        role="reviewer" if "reviewer" in call.reviewer.stands_for else "requester",
        extra_groups=stands_for,
    )


def _asked(call: DelegatedCall) -> dict[str, Any]:
    """The per-call value the gate would have asked people with, as the model is asked it."""
    return {
        "type": "tool_approval",
        "tool_call_id": call.tool_call_id,
        "name": call.name,
        "args": call.args,
        "description": call.description,
        "agent": call.agent,
        "required_role": call.required_role,
        "allowed_decisions": [d for d in call.allowed_decisions if d in call.reviewer.may],
        "requested_by": list(call.requested_by),
    }


def _as_models(receipt: ApprovalReceipt, stamp: FirstLineStamp, reason: str) -> ApprovalReceipt:
    """A receipt as the model's: no person's roles, its model and rules stamped, its reason as the message."""
    return {**receipt, "roles": [], "message": reason, "first_line": stamp}


def _stamp(
    call: DelegatedCall, catalog: PolicyCatalog | None, model: str, latency_ms: float
) -> FirstLineStamp:
    return {
        "model": model,
        "policy_revision": revision_of(catalog),
        "stood_for": call.required_role,
        "latency_ms": round(latency_ms, 3),
    }


def _verdict(
    call: DelegatedCall, decision: str, reason: str, cause: str, model: str | None = None
) -> Verdict:
    return Verdict(decision, reason, call.reviewer.actor, model or call.reviewer.model, cause)  # type: ignore[arg-type]


def _count(call: DelegatedCall, decision: str, cause: str) -> None:
    metrics.FIRST_LINE.labels(
        agent=metrics.label(call.agent), tool=metrics.label(call.name), decision=decision, cause=cause
    ).inc()
