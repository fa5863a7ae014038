"""The story of one decision: an answer to a pending approval, from its sender to the run that applies it.

`decide` reads top to bottom and calls each stage once:
1. **check** the command's shape and its sender (`checks.check_resume`: matched to what waits,
   valid against the answer's contract, allowed to this person, not their own request, an edit
   allowed on its edited args), unless it is the same answer sent again (`_sent_again`);
2. **allow**: what an approve's `allow` grants for the rest of the thread (`allowances`);
3. **accept** in one transaction (`store.accept`): claim the interrupts, sign the receipts after
   the trail's head, append their audit records, and keep the command that applies them;
4. **publish**: the run's command becomes the accepted one (receipts sealed in its update), and
   the metrics count it; the inbox hears of the thread when its run is let through.
A refusal is audited and raised as `ResumeRefused` (status and words for the sender); nothing is
saved. Used by the run gate for people (`server.admission.runs`) and by the watcher for the system actor.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any

from hitl.settings import get_settings
from server.admission import overrides
from server.decisions import allowances, provenance, store
from server.decisions.checks import check_resume
from server.decisions.decision import Replayed, Request, targets
from server.decisions.edits import edit_policy
from server.decisions.pending import Pending, ResumeRefused
from server.insight import metrics
from server.records import audit

if TYPE_CHECKING:
    from hitl.contracts.records import ApprovalReceipt
    from server.decisions.decision import Decision
    from server.identity.users import User


_check_resume = metrics.timed("resume.check")(check_resume)
_accept = metrics.timed("resume.accept")(store.accept)


@metrics.timed("resume")
async def decide(  # noqa: PLR0913  (who answers what, where, in which run)
    user: User,
    thread_id: str,
    owner: str | None,
    pending: list[Pending],
    command: dict[str, Any],
    *,
    graph_id: str | None = None,
    run: dict[str, Any] | None = None,
) -> list[ApprovalReceipt]:
    """Check, accept, sign, record and publish one answer; its receipts, or `ResumeRefused`.

    Used by the run gate for people and by the watcher for the system actor, so both
    pass the same checks. Accepting is one transaction (`server.decisions.store.accept`): the claim
    (all or nothing, in the shared database), the signed receipts, their audit records and the
    command to apply, so answers racing for one interrupt, on any replica, end in exactly one
    outcome, and an accepted one is applied even if this request goes no further. The same
    answer sent again by the same person (after a timeout or a 500) is that decision again:
    `run` becomes the run applying it, with the same receipts, or it is refused as applied.
    An edit is authorised on its edited arguments, by `graph_id`'s policy.
    """
    catalog = await overrides.catalog_of(graph_id) if graph_id else None
    try:
        _no_rewrites(user, command)
        request = Request.of(thread_id, user, command, run)
        if (replayed := await _sent_again(request, pending, command)) is not None:
            return replayed
        accepted = await asyncio.to_thread(  # an edit's args check may read the business records
            _check_resume,
            command["resume"],
            pending,
            user=user,
            owner=owner,
            max_bytes=get_settings().max_resume_bytes,
            policy=edit_policy(catalog),
        )
        allowed = allowances.granted(thread_id, accepted, pending, user)
        allowing = [audit.allowance_change(thread_id, a, user, "allow") for a in allowed]
        decision = await asyncio.to_thread(
            _accept,
            request,
            command,
            [item.pending.id for item in accepted],
            audit.receipts(accepted, user, catalog.approvals_needed if catalog else None),
            catalog=catalog,
            allowed=allowed,
            recorded_too=allowing,
        )
    except Replayed as replayed:
        raise ResumeRefused(replayed.status, replayed.message) from None
    except ResumeRefused as refusal:
        await audit.write([audit.refused(pending, command.get("resume"), user, thread_id, refusal.message)])
        raise
    _apply(command, decision.command)
    metrics.observe([*audit.as_records(thread_id, decision.receipts), *allowing])
    return decision.receipts


async def _sent_again(
    request: Request, pending: list[Pending], command: dict[str, Any]
) -> list[ApprovalReceipt] | None:
    """The receipts of the sender's own accepted decision this resume repeats, now applied by this run.

    None when it repeats no decision of theirs (the checks decide it). A repeat of a decision
    already applied, or whose run may still appear (`GRACE_SECONDS`), is refused
    (`Replayed`), and never recorded as a second decision.
    """
    found = await asyncio.to_thread(
        partial(store.holding, thread_id=request.thread_id),
        targets(command.get("resume"), pending),
    )
    mine = [d for d, decider in await _vouched(found) if d.sent_again_by(request, decider)]
    if not mine and not pending:  # a bare answer after its interrupt was applied
        latest = await asyncio.to_thread(store.latest_of, request)
        mine = [latest] if latest is not None and latest.state != "failed" else []
    if not mine:
        return None
    decision = mine[0]
    still_open = {p.id for p in pending}
    if not still_open.intersection(decision.interrupt_ids) or decision.state == "applied":
        msg = f"Already applied: {decision.describe()}. Nothing was done again."
        raise Replayed(409, msg)
    if not await asyncio.to_thread(store.take_over, decision, request.run_id):
        msg = (
            f"This answer was already accepted ({decision.describe()}) and is being applied; "
            "nothing more to send."
        )
        raise Replayed(409, msg)
    _apply(command, decision.command)
    return decision.receipts


async def _vouched(found: list[Decision]) -> list[tuple[Decision, str]]:
    """Each decision with the decider its signatures name; one they do not stand behind is refused.

    Refusing it releases its claims, so an answer it blocked is checked as a new one.
    """
    kept = []
    for decision in found:
        try:
            voucher = await asyncio.to_thread(provenance.vouch, decision)
        except provenance.UnvouchedError as unvouched:
            await asyncio.to_thread(store.refuse, decision, str(unvouched))
            continue
        kept.append((decision, voucher.user.identity))
    return kept


def _apply(command: dict[str, Any], accepted: dict[str, Any]) -> None:
    """Make the run's `command` the accepted one (its resume as checked, sealed receipts in its update)."""
    command.clear()
    command.update(accepted)


def _no_rewrites(user: User, command: dict[str, Any]) -> None:
    if (command.get("update") or command.get("goto")) and user.role != "supervisor":
        raise ResumeRefused(403, "Only a supervisor may send update or goto with a resume.")
