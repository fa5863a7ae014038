"""The demo's teams (REFUND_DECIDER_GROUP, REFUND_LEAD_GROUP, OPS_DECIDER_GROUP): by default, the roles.

Set, refunds go to finance up to the supervisor limit and to finance-leads above (two of them above
the dual-control limit, and an overdue refund escalates to them); every ops gate, subagents
included, to sre. A malformed group or `owner` fails naming the setting. Billing's questions mid-call
go to the thread's owner, or to the group BILLING_ANSWERED_BY names.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agents.ops_policy import deployer_policy, file_manager_policy, ops_policy
from agents.settings import DemoSettings
from agents.support import make_graph
from agents.support_policy import refund_specialist_policy, support_policy
from hitl.policy.deadlines import escalates_to
from hitl.policy.served import card_of

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


@pytest.mark.parametrize(("answered_by", "answerers"), [(None, {"owner"}), ("finance", {"finance"})])
def test_billings_questions_go_to_the_owner_or_the_group_the_setting_names(answered_by, answerers):
    """BILLING_ANSWERED_BY: billing's questions mid-call go to the thread's owner, or to the group named."""
    settings = DemoSettings() if answered_by is None else DemoSettings(billing_answered_by=answered_by)
    card = card_of(make_graph(settings=settings))
    assert card is not None
    assert card.answerers == answerers


@pytest.mark.parametrize("bad", ["Finance", "fin ance", ""])
def test_a_bad_billing_answerer_fails_naming_the_setting(bad):
    """refuse: a malformed group name or an empty one, naming BILLING_ANSWERED_BY."""
    with pytest.raises(ValidationError, match="BILLING_ANSWERED_BY"):
        DemoSettings(billing_answered_by=bad)
