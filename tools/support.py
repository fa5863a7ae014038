"""Customer-service tools: orders, refunds, e-mail to customers, and asking the user.

A customer's run sees and refunds only their own orders (`tools.owners`); staff see all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from pydantic import BaseModel, Field

from services.money import Money  # noqa: TC001  (pydantic reads the field's type at run time)
from tools.owners import records_owner
from tools.results import as_json, refusals_as_tool_errors

if TYPE_CHECKING:
    from collections.abc import Callable

    from services.registry import Services

REFUND_POLICY = (
    "Refunds are allowed within 30 days of delivery, up to the amount paid, once per order. "
    "Damaged or broken items are refunded in full."
)


class OrderLookup(BaseModel):
    """Arguments of `get_order`."""

    order_id: str = Field(description="Order id, e.g. A1024.")


class RefundRequest(BaseModel):
    """Arguments of `issue_refund`."""

    order_id: str = Field(description="Order id, e.g. A1024.")
    amount: Money = Field(description="Amount to refund, in cents (two decimals at most), at most paid.")
    reason: str = Field(description="Why the customer gets the refund.")
    tool_call_id: Annotated[str, InjectedToolCallId]


class EmailRequest(BaseModel):
    """Arguments of `send_email`."""

    to: str = Field(description="Recipient e-mail address.")
    subject: str = Field(description="Subject line.")
    body: str = Field(description="Plain-text body.")
    tool_call_id: Annotated[str, InjectedToolCallId]


class Question(BaseModel):
    """Arguments of `ask_user`."""

    question: str = Field(description="What to ask the person.")


def build_support_tools(services: Callable[[], Services]) -> list[BaseTool]:
    """The `support` agent's tools, acting on the services `services()` returns when they run."""

    @tool(args_schema=OrderLookup)
    @refusals_as_tool_errors
    def get_order(order_id: str) -> str:
        """Look up an order: customer, item, amount paid, delivery date."""
        return as_json(services().orders.get(order_id, owner=records_owner()))

    @tool
    def get_refund_policy() -> str:
        """The shop's refund policy."""
        return REFUND_POLICY

    @tool(args_schema=RefundRequest)
    @refusals_as_tool_errors
    def issue_refund(
        order_id: str, amount: float, reason: str, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> str:
        """Refund money to the customer of an order."""
        refund = services().payments.issue_refund(
            tool_call_id=tool_call_id, order_id=order_id, amount=amount, reason=reason, owner=records_owner()
        )
        return as_json({"refunded": refund["amount"], "order_id": order_id, "refund_id": refund["refund_id"]})

    @tool(args_schema=EmailRequest)
    @refusals_as_tool_errors
    def send_email(to: str, subject: str, body: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Send an e-mail to a customer."""
        email = services().outbox.send(tool_call_id=tool_call_id, to=to, subject=subject, body=body)
        return as_json({"sent": True, "email_id": email["email_id"], "to": to})

    @tool(args_schema=Question)
    def ask_user(question: str) -> str:
        """Ask the person a question; their answer comes back as this tool's result."""
        msg = f"ask_user must be answered by a person (question: {question})."
        raise RuntimeError(msg)

    tools: list[BaseTool] = [get_order, get_refund_policy, issue_refund, send_email, ask_user]
    for each in tools:
        each.handle_tool_error = True
    return tools
