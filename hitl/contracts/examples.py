"""One example value of each interrupt shape, published with it (JSON Schema `examples`).

Every client's tests read them from the published schema, so a shape added to the contract comes
with a value each client must show. Shaped as the gate and the tools send them, with the optional
fields a client must not drop (a team decides, a quorum half done, a deadline that escalates).
Not for building values (`hitl.gate.review_requests`).
"""

from __future__ import annotations

from typing import Any

BATCHED: dict[str, Any] = {
    "agent": "invoices",
    "action_requests": [
        {
            "name": "pay_invoice",
            "args": {"invoice_id": "INV-1", "amount": 2500},
            "description": "Pay 2500 on INV-1",
            "tool_call_id": "call_pay",
            "agent": "invoices",
        },
        {
            "name": "send_reminder",
            "args": {"to": "ann@example.com", "body": "Paid"},
            "description": "Remind the customer",
            "tool_call_id": "call_remind",
            "agent": "invoices",
        },
    ],
    "review_configs": [
        {
            "action_name": "pay_invoice",
            "allowed_decisions": ["approve", "edit", "reject"],
            "required_role": "finance",
            "approvals_required": 2,
            "approved_by": ["lead1"],
        },
        {
            "action_name": "send_reminder",
            "allowed_decisions": ["approve", "reject"],
            "required_role": "finance",
        },
    ],
    "requested_by": ["ann"],
    "deadline": "2030-01-01T09:00:00+00:00",
    "on_expiry": "escalate",
    "escalated_seconds": 3600.0,
    "escalate_to": "finance-leads",
}
TOOL_APPROVAL: dict[str, Any] = {
    "type": "tool_approval",
    "tool_call_id": "call_archive",
    "name": "archive_file",
    "args": {"path": "reports/old.csv"},
    "description": "Delete reports/old.csv",
    "agent": "archivist",
    "required_role": "reviewer",
    "allowed_decisions": ["approve", "edit", "reject"],
    "requested_by": ["ann"],
}
FORM: dict[str, Any] = {
    "type": "form",
    "form": "payment-terms",
    "title": "Terms for invoice INV-7",
    "context": {"invoice": "INV-7", "amount": 420},
    "agent": "collector",
    "tool_call_id": "call_terms",
}
APPROVAL_REQUEST: dict[str, Any] = {
    "type": "approval_request",
    "action": "release 1.4 to production",
    "message": "Release 1.4 is ready",
    "agent": "releaser",
    "tool_call_id": "call_release",
    "requested_by": ["ann"],
    "deadline": "2030-01-01T09:00:00+00:00",
    "on_expiry": "reject",
}
