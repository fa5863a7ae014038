"""What `hitl show` prints of one pending interrupt: what it asks, of whom, which answers, until when.

Every shape is read through `hitl.contracts.asks` (the published contract), so a shape the layer adds
is shown here without a list of its own; one this CLI cannot read says so and points at `--json`.
Not for a form's fields (`form_fields`) or for answering (`decide`).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from hitl.cli.terminal import progress
from hitl.contracts.asks import read
from hitl.policy.groups import who

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hitl.contracts.asks import Ask, Asked


def interrupt_lines(interrupt: Mapping[str, Any], *, escalated_at: str | None = None) -> list[str]:
    """The lines of one pending interrupt; `escalated_at` when the server's trail says it escalated then."""
    value = interrupt.get("value")
    asked = read(value)
    if asked is None:
        kind = value.get("type", "untyped") if isinstance(value, dict) else type(value).__name__
        unread = f"an interrupt of no published shape ({kind}): `hitl show --json` prints it as it is"
        return [f"  waiting  {interrupt['id']}  {unread}"]
    lines = []
    for ask in asked.asks:
        quorum = progress({"required": ask.approvals_required, "approved_by": list(ask.approved_by)})
        named = "context" if asked.kind == "form" else "args"
        fields = f"  {named}={json.dumps(dict(ask.fields), default=str)}" if ask.fields else ""
        lines += [
            f"  waiting  {interrupt['id']}  {ask.agent} wants {ask.subject}  call={ask.tool_call_id}{fields}"
            + (f"  [{quorum}]" if quorum and ask.approvals_required > 1 else ""),
            f"    {asked.kind}: {ask.text}",
            f"    decided by: {deciders(asked, ask, escalated=escalated_at is not None)}",
            f"    answers: {answers(asked, ask)}",
        ]
    if deadline := due(asked, escalated_at):
        lines.append(f"    deadline: {deadline}{expiry(asked, escalated=escalated_at is not None)}")
    return lines


def due(asked: Asked, escalated_at: str | None) -> str | None:
    """When `asked` expires: its stamped deadline, or once escalated, the escalation's own."""
    if escalated_at is None or asked.escalated_seconds is None:
        return asked.deadline
    try:
        return (datetime.fromisoformat(escalated_at) + timedelta(seconds=asked.escalated_seconds)).isoformat()
    except ValueError:
        return asked.deadline


def deciders(asked: Asked, ask: Ask, *, escalated: bool) -> str:
    """Who decides `ask` in words, who may not (its askers), and where an escalation sent it."""
    if escalated:
        return f"{who(asked.escalates_to)} (escalated from {who(ask.decider)})"
    askers = [] if ask.self_approval else list(asked.requested_by)
    return who(ask.decider) + (f", not {' or '.join(askers)} who asked" if askers else "")


def answers(asked: Asked, ask: Ask) -> str:
    """The answers `ask` takes: its decisions, or a form's own fields."""
    if not ask.decisions:
        return f"the fields of {ask.subject} (below)"
    return ", ".join(ask.decisions) + (" (sign-off)" if asked.kind == "approval_request" else "")


def expiry(asked: Asked, *, escalated: bool) -> str:
    """What happens when the deadline passes: ', then escalates to someone in finance-leads'."""
    if escalated or asked.on_expiry == "reject":
        return ", then it is rejected"
    if asked.on_expiry == "escalate":
        return f", then it escalates to {who(asked.escalates_to)}"
    return ""


def may_escalate(pending: list[dict[str, Any]]) -> bool:
    """Whether any of `pending` escalates when overdue (only then is the trail worth reading)."""
    return any((asked := read(i.get("value"))) is not None and asked.on_expiry == "escalate" for i in pending)
