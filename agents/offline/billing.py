"""The scripted support agent's invoice requests: each one call of a tool of the billing MCP server.

The tools are the server's, offered to the model by their MCP names (`billing_lookup_invoice` for
`billing.lookup_invoice`); a rule applies only while the agent has them (billing configured and listed).
"""

from __future__ import annotations

from agents.offline import phrases
from hitl.model.scripted import Call, Rule

INVOICE = r"(?P<invoice>INV-\d{1,9})"

BILLING_RULES = (
    Rule(
        rf"\b(?:look up|show|find)\b.*\binvoice {INVOICE}",
        calls=[Call("billing_lookup_invoice", {"invoice_id": "{invoice}"})],
        then="{result}",
        refused="I could not look up {invoice}: {result}",
        example=phrases.LOOK_UP_INVOICE,
    ),
    Rule(
        rf"\bvoid\b.*\binvoice {INVOICE}",
        calls=[Call("billing_void_invoice", {"invoice_id": "{invoice}"})],
        then="{result}",
        refused="I did not void {invoice}: {result}",
        example=phrases.VOID_INVOICE,
    ),
    Rule(
        rf"\b(?:how was|payment method of) invoice {INVOICE}",
        calls=[Call("billing_payment_method", {"invoice_id": "{invoice}"})],
        then="{result}",
        refused="I cannot tell how {invoice} was paid: {result}",
        example=phrases.INVOICE_PAYMENT,
    ),
    Rule(
        rf"\bcredit (?P<amount>\d+(?:\.\d+)?) on invoice {INVOICE}",
        calls=[Call("billing_issue_credit_note", {"invoice_id": "{invoice}", "amount": "{amount}"})],
        then="{result}",
        refused="No credit note on {invoice}: {result}",
        example=phrases.CREDIT_INVOICE,
    ),
)
