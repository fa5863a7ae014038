"""The support agent's first-line reviewer, offline: what the scripted classifier approves, rejects or refers.

The stand-in for the reviewer's instructions (`agents.support_policy.FIRST_LINE_INSTRUCTIONS`), as the
agents' scripts are for their prompts: an e-mail that promises the customer something is rejected
(its policy may let it only refer), any other e-mail approved; a refund within its limit approved.
"""

from __future__ import annotations

from hitl.model.first_line.triage import Triage, TriageRule

PROMISES = (
    r"\b(promis\w*|guarantee\w*|compensat\w*|voucher|discount|free of charge|store credit|"
    r"we will (refund|replace|pay|send))\b"
)
"""What makes an e-mail a promise to the customer (searched in its args as JSON)."""

SUPPORT_TRIAGE = Triage(
    (
        TriageRule(
            "send_email",
            "reject",
            "it promises the customer something (compensation, a voucher, a guarantee): "
            "a person decides that",
            when=PROMISES,
        ),
        TriageRule("send_email", "approve", "a customer e-mail that informs and promises nothing"),
        TriageRule("issue_refund", "approve", "a refund within the first-line limit, with its reason"),
    )
)
