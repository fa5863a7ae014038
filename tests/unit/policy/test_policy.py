"""Policies: typos fail loudly, decisions are checked, limits pick who decides."""

from __future__ import annotations

import pytest

from agents.settings import DemoSettings
from agents.support_policy import support_policy
from hitl.gate.gate import ApprovalGate
from hitl.policy.gates import ToolGate
from services.registry import Services
from tools.support import build_support_tools


def support_tools():
    return build_support_tools(lambda: Services.open("sqlite://"))


def test_a_policy_naming_a_missing_tool_fails_with_the_name():
    """typo: 'issue_refnd' is named in the error, never silently ungated."""
    policy = {"issue_refnd": ToolGate(allowed_decisions=("approve",))}
    with pytest.raises(ValueError, match="issue_refnd") as error:
        ApprovalGate("support", policy, support_tools())
    assert "issue_refund" in str(error.value)


@pytest.mark.parametrize("decisions", [(), ("approve", "aprove")])
def test_unknown_or_empty_decisions_are_refused(decisions):
    """allowed_decisions: empty or misspelled lists are refused at build time."""
    with pytest.raises(ValueError, match="allowed_decisions"):
        ToolGate(allowed_decisions=decisions)


@pytest.mark.parametrize(
    ("amount", "pauses", "role"),
    [
        (59, False, "reviewer"),
        (100, False, "reviewer"),
        (101, True, "reviewer"),
        (500, True, "reviewer"),
        (501, True, "supervisor"),
        ("ten", True, "supervisor"),
    ],
)
def test_refund_limits_decide_pause_and_role(amount, pauses, role):
    """limits: above 100 pauses, above 500 needs a supervisor, unreadable amounts are gated strictly."""
    gate = support_policy(DemoSettings(refund_auto_approve_limit=100, refund_supervisor_limit=500))[
        "issue_refund"
    ]
    args = {"order_id": "A1", "amount": amount, "reason": "r"}
    assert (gate.pauses(args), gate.required_role(args)) == (pauses, role)
