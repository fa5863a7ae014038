"""Who reviews what in customer service: refunds above a limit, every e-mail, questions, invoices.

Refunds go to a reviewer, above the supervisor limit to a supervisor (two above the dual-control
limit); `REFUND_DECIDER_GROUP` and `REFUND_LEAD_GROUP` give them to teams instead (finance, finance-leads).
With `SUPPORT_FIRST_LINE`, a first-line reviewer (a model) takes the routine ones first: e-mails that
promise nothing, refunds up to `REFUND_FIRST_LINE_LIMIT`; everything else waits for people.
The billing MCP server's tools are named `billing.<tool>`: voiding an invoice goes to the refund
deciders, and a customer's payment method (read-only, as billing says) is gated all the same: a
policy is the floor. Its other tools are gated as the layer says (`hitl.mcp.gating`): a read-only
lookup runs at once, a credit note waits for a reviewer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agents.offline import FIRST_LINE_REVIEWER, SUPPORT_TRIAGE
from hitl.policy.deadlines import Deadline
from hitl.policy.first_line import FirstLineReviewer
from hitl.policy.gates import Policy, ToolGate
from hitl.policy.groups import Tiers
from tools.owners import records_owner

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from agents.settings import DemoSettings
    from hitl.policy.gates import Describer
    from services.registry import Services


def _refund_decider(settings: DemoSettings) -> Tiers:
    """REFUND_DECIDER_GROUP up to the supervisor limit, REFUND_LEAD_GROUP above (reviewer, supervisor)."""
    return Tiers(
        "amount",
        settings.refund_decider_group,
        ((settings.refund_supervisor_limit, settings.refund_lead_group),),
    )


def _refund_quorum(settings: DemoSettings) -> Any:  # noqa: ANN401
    def quorum(args: Mapping[str, Any]) -> int:
        return 2 if float(args["amount"]) > settings.refund_dual_control_limit else 1

    return quorum


def describe_refund(services: Callable[[], Services] | None = None) -> Describer:
    """'Refund 899 to order A1024 (customer: requester1, Mara Lind; paid 899, delivered 2026-11-02): ...'.

    The order part comes from `services`, looked up as the caller may see it: a customer's
    run never names another customer, and an order that exists but is not the caller's
    says so ('(not an order of requester2)'), for the reviewer to refuse. If the lookup
    fails for any other reason the text is built from the call alone, so describing a
    refund can never fail the run.
    """

    def describe(_name: str, args: Mapping[str, Any]) -> str:
        head = f"Refund {float(args['amount']):g} to order {args['order_id']}"
        reason = args.get("reason") or "no reason given"
        owner: str | None = None
        try:
            owner = records_owner()
            order = services().orders.get(str(args["order_id"]), owner=owner) if services else None
        except Exception:  # noqa: BLE001  (any lookup failure, a run naming nobody too: the call's args)
            order = None
        if order is None and owner is not None and _exists(services, str(args["order_id"])):
            return f"{head} (not an order of {owner}): {reason}"
        if order is None:
            return f"{head}: {reason}"
        customer = ", ".join(str(who) for who in (order.get("owner"), order["customer_name"]) if who)
        delivered = f"delivered {order['delivered_on']}" if order.get("delivered_on") else order["status"]
        return f"{head} (customer: {customer}; paid {float(order['amount']):g}, {delivered}): {reason}"

    return describe


def _exists(services: Callable[[], Services] | None, order_id: str) -> bool:
    try:
        return services is not None and bool(services().orders.get(order_id))
    except Exception:  # noqa: BLE001  (any lookup failure: as if there were no such order)
        return False


def refund_args_check(services: Callable[[], Services] | None) -> Callable[[Mapping[str, Any]], str | None]:
    """A refund's amount is at most what its order was paid (read from the orders, whoever owns it)."""

    def check(args: Mapping[str, Any]) -> str | None:
        if services is None:
            return None
        order_id = str(args["order_id"])
        paid = float(services().orders.get(order_id)["amount"])
        amount = float(args["amount"])
        if amount > paid:
            return f"amount {amount:g} is more than order {order_id} was paid ({paid:g})"
        return None

    return check


FIRST_LINE_INSTRUCTIONS = (
    "You review an online shop's customer-service agent. Approve a customer e-mail that only informs "
    "(an order's status, a refund on its way) and promises nothing: no compensation, voucher, discount, "
    "store credit, guarantee or date. Reject an e-mail that promises something. Approve a refund that "
    "states its reason. Refer anything else, and anything you are unsure of."
)


def first_line(settings: DemoSettings) -> FirstLineReviewer | None:
    """The support agent's first-line reviewer (`SUPPORT_FIRST_LINE`), or None when it has none."""
    if not settings.support_first_line:
        return None
    return FirstLineReviewer(
        name=FIRST_LINE_REVIEWER,
        instructions=FIRST_LINE_INSTRUCTIONS,
        model=settings.first_line_model or settings.resolved_model,
        offline=SUPPORT_TRIAGE,
        may=("approve", "reject") if settings.first_line_may_reject else ("approve",),
        stands_for=("reviewer",),
        sample_rate=settings.first_line_sample_rate,
        timeout_seconds=settings.first_line_timeout_seconds,
    )


def _refund_first_line(settings: DemoSettings) -> FirstLineReviewer | None:
    """Refunds up to `REFUND_FIRST_LINE_LIMIT`, of the deciders below the supervisor limit only."""
    reviewer = first_line(settings)
    if reviewer is None:
        return None
    return replace(
        reviewer, limit=settings.refund_first_line_limit, stands_for=(settings.refund_decider_group,)
    )


def refund_gate(
    settings: DemoSettings, *, always: bool, services: Callable[[], Services] | None = None
) -> ToolGate:
    """Refunds: approve, edit or reject; above the auto-approve limit unless `always`.

    Refunds over the supervisor limit are always reviewed: no run override or thread
    allowance lets one through. Refunds over the dual-control limit need two supervisors
    (two of `REFUND_LEAD_GROUP`); an overdue refund escalates to that group.
    Below it a reviewer may "always allow" the thread's later refunds, within the bounds they set
    (`may_allow`: a tool that moves money opts in, it is off by default). With `SUPPORT_FIRST_LINE`,
    refunds up to `REFUND_FIRST_LINE_LIMIT` go to the first-line reviewer first.
    """
    return ToolGate(
        allowed_decisions=("approve", "edit", "reject"),
        auto_approve_limit=None if always else settings.refund_auto_approve_limit,
        always_review=lambda args: float(args["amount"]) > settings.refund_supervisor_limit,
        description=describe_refund(services),
        decider=_refund_decider(settings),
        approvals_required=_refund_quorum(settings),
        fixed_on_edit=("order_id",),
        check_args=refund_args_check(services),
        may_allow=True,
        deadline=Deadline(
            settings.refund_deadline_seconds,
            "escalate",
            escalated_seconds=settings.escalation_deadline_seconds,
            escalate_to=settings.refund_lead_group,
        ),
        first_line=_refund_first_line(settings),
    )


def support_policy(settings: DemoSettings, services: Callable[[], Services] | None = None) -> Policy:
    """The `support` agent's policy; `services` lets refund descriptions show the order."""
    return {
        "issue_refund": refund_gate(settings, always=False, services=services),
        "send_email": ToolGate(
            allowed_decisions=("approve", "reject"),
            description=lambda _n, a: f"E-mail {a['to']}: {a['subject']}",
            deadline=Deadline(settings.email_deadline_seconds),
            may_allow=True,
            first_line=first_line(settings),
        ),
        "ask_user": ToolGate(
            allowed_decisions=("respond",),
            description=lambda _n, a: str(a["question"]),
            decider="owner",
        ),
        "billing.void_invoice": ToolGate(
            allowed_decisions=("approve", "reject"),
            description=lambda _n, a: f"Void invoice {a['invoice_id']} (billing)",
            decider=settings.refund_decider_group,
        ),
        "billing.payment_method": ToolGate(
            allowed_decisions=("approve", "reject"),
            description=lambda _n, a: f"Show how invoice {a['invoice_id']} was paid (billing)",
        ),
    }


def refund_specialist_policy(
    settings: DemoSettings, services: Callable[[], Services] | None = None
) -> Policy:
    """The `refund_specialist` subagent gates every refund, whatever the amount."""
    return {"issue_refund": refund_gate(settings, always=True, services=services)}
