"""The demo's teams (REFUND_DECIDER_GROUP, REFUND_LEAD_GROUP, OPS_DECIDER_GROUP): by default, the roles.

Set, refunds go to finance up to the supervisor limit and to finance-leads above (two of them above
the dual-control limit, and an overdue refund escalates to them); every ops gate, subagents
included, to sre. A malformed group or `owner` fails naming the setting.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agents.ops_policy import deployer_policy, file_manager_policy, ops_policy
from agents.settings import DemoSettings
from agents.support_policy import refund_specialist_policy, support_policy
from hitl.policy.deadlines import escalates_to

TEAMS = {"refund_decider_group": "finance", "refund_lead_group": "finance-leads", "ops_decider_group": "sre"}


def test_by_default_the_demo_decides_by_role_as_before():
    """defaults: a reviewer up to 500, a supervisor above and two above 2,000; ops gates a reviewer's."""
    refunds = support_policy(DemoSettings())["issue_refund"]
    assert refunds.required_role({"amount": 500}) == "reviewer"
    assert refunds.required_role({"amount": 501}) == "supervisor"
    assert refunds.approvals_needed({"amount": 2001}) == 2
    assert "escalate_to" not in refunds.deadline.stamp()  # type: ignore[union-attr]
    assert {gate.required_role({}) for gate in ops_policy().values()} == {"reviewer"}


def test_teams_take_the_refunds_and_the_ops_calls():
    """teams: finance, finance-leads (escalations too), sre on every ops gate and subagent gate."""
    settings = DemoSettings(**TEAMS)
    for policy in (support_policy(settings), refund_specialist_policy(settings)):
        refunds = policy["issue_refund"]
        assert refunds.required_role({"amount": 300}) == "finance"
        assert refunds.required_role({"amount": 2400}) == "finance-leads"
        assert refunds.required_role({"amount": "lots"}) == "supervisor", "unreadable args: a supervisor"
        assert escalates_to(refunds.deadline.stamp()) == "finance-leads"  # type: ignore[union-attr]
    gates = [
        *ops_policy("sre").values(),
        *file_manager_policy("sre").values(),
        *deployer_policy("sre").values(),
    ]
    assert {gate.required_role({"query": "DROP TABLE x"}) for gate in gates} == {"sre"}


@pytest.mark.parametrize("field", sorted(TEAMS))
@pytest.mark.parametrize("bad", ["Finance", "fin ance", "owner", ""])
def test_a_bad_team_fails_naming_the_setting(field, bad):
    """refuse: a malformed group name, an empty one, or `owner` (who decides only their own questions)."""
    with pytest.raises(ValidationError, match=field.upper()):
        DemoSettings(**{field: bad})
