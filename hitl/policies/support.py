"""Who reviews what in customer service: refunds above a limit, every e-mail, questions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hitl.deadlines import Deadline
from hitl.policy import Policy, ToolGate

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hitl.contracts import Decider
    from hitl.settings import Settings


def _refund_decider(settings: Settings) -> Any:  # noqa: ANN401
    def decider(args: Mapping[str, Any]) -> Decider:
        return "supervisor" if float(args["amount"]) > settings.refund_supervisor_limit else "reviewer"

    return decider


def _describe_refund(_name: str, args: Mapping[str, Any]) -> str:
    return f"Refund {float(args['amount']):g} on order {args['order_id']} ({args.get('reason', 'no reason')})"


def refund_gate(settings: Settings, *, always: bool) -> ToolGate:
    """Refunds: approve, edit or reject; above the auto-approve limit unless `always`."""
    limit = settings.refund_auto_approve_limit
    return ToolGate(
        allowed_decisions=("approve", "edit", "reject"),
        when=None if always else (lambda args: float(args["amount"]) > limit),
        description=_describe_refund,
        decider=_refund_decider(settings),
        deadline=Deadline(
            settings.refund_deadline_seconds,
            "escalate",
            escalated_seconds=settings.escalation_deadline_seconds,
        ),
    )


def support_policy(settings: Settings) -> Policy:
    """The `support` agent's policy."""
    return {
        "issue_refund": refund_gate(settings, always=False),
        "send_email": ToolGate(
            allowed_decisions=("approve", "reject"),
            description=lambda _n, a: f"E-mail {a['to']}: {a['subject']}",
            deadline=Deadline(settings.email_deadline_seconds),
        ),
        "ask_user": ToolGate(
            allowed_decisions=("respond",),
            description=lambda _n, a: str(a["question"]),
            decider="owner",
        ),
    }


def refund_specialist_policy(settings: Settings) -> Policy:
    """The `refund_specialist` subagent gates every refund, whatever the amount."""
    return {"issue_refund": refund_gate(settings, always=True)}
