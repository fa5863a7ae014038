"""Slack and e-mail by group: a team's channel (HITL_SLACK_GROUP_WEBHOOKS), address (HITL_GROUP_EMAILS).

An approval goes to the channel of the group that decides it (an escalation's group once
escalated), else to the default webhook; a group's shared address gets its notices besides its
people. A malformed entry fails at start, naming the setting and the entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from pydantic import ValidationError

from hitl.settings import Settings, get_settings
from server.channels.announce import webhook_for
from server.channels.email import group_addresses, recipients
from server.decisions.pending import Pending
from server.identity import users

if TYPE_CHECKING:
    from collections.abc import Iterator

DEFAULT = "https://hooks.slack.com/services/T/B/default"
FINANCE = "https://hooks.slack.com/services/T/B/finance"
LEADS = "https://hooks.slack.com/services/T/B/leads"


def refund(required_role: str) -> Pending:
    return Pending(
        id="i1", value={"type": "tool_approval", "name": "issue_refund", "required_role": required_role}
    )


def test_an_approval_goes_to_its_groups_channel_else_the_default_one():
    """slack: finance's refund to finance; escalated to finance-leads, theirs; sre's (no channel): default."""
    settings = Settings(
        hitl_slack_webhook_url=DEFAULT, hitl_slack_group_webhooks=f"finance={FINANCE}, finance-leads={LEADS}"
    )
    assert webhook_for(settings, refund("finance")) == FINANCE
    assert webhook_for(settings, refund("finance").escalated({"i1": "finance-leads"})) == LEADS
    assert webhook_for(settings, refund("sre")) == DEFAULT
    assert webhook_for(settings, refund("reviewer")) == DEFAULT
    assert webhook_for(Settings(hitl_slack_group_webhooks=f"finance={FINANCE}"), refund("sre")) == ""


def test_a_groups_shared_address_gets_what_the_group_decides():
    """e-mail: finance's address for finance's refund, not for sre's; the leads' once escalated to them."""
    settings = Settings(hitl_group_emails="finance=fin@example.com,finance-leads=leads@example.com")
    assert group_addresses(settings, refund("finance")) == ["fin@example.com"]
    assert group_addresses(settings, refund("sre")) == []
    assert group_addresses(settings, refund("finance").escalated({"i1": "finance-leads"})) == [
        "leads@example.com"
    ]


@pytest.mark.parametrize(
    ("field", "spec", "why"),
    [
        ("hitl_slack_group_webhooks", f"Finance={FINANCE}", "'Finance="),
        ("hitl_slack_group_webhooks", FINANCE, "must be group=value"),
        ("hitl_slack_group_webhooks", "finance=#finance", "no http"),
        ("hitl_slack_group_webhooks", f"finance={FINANCE},finance={LEADS}", "each group once"),
        ("hitl_group_emails", "finance=", "must be group=value"),
        ("hitl_group_emails", "finance=nobody", "no address"),
        ("hitl_group_emails", "owner=o@example.com", "'owner=o@example.com'"),
    ],
)
def test_a_malformed_group_channel_fails_naming_the_setting(field, spec, why):
    """refuse at start: a bad group, no `=`, a value that is no URL or address, a group twice, `owner`."""
    with pytest.raises(ValidationError, match=field.upper()) as failed:
        Settings(**{field: spec})
    assert why in str(failed.value)


@pytest.fixture
def mailed_people(monkeypatch) -> Iterator[Settings]:
    """ann (requester) and rita (reviewer) in HITL_USERS, both with an address."""
    monkeypatch.setenv("HITL_USERS", "ann:requester:t-ann,rita:reviewer:t-rita")
    monkeypatch.delenv("HITL_OIDC_ISSUER", raising=False)
    get_settings.cache_clear()
    users.directory.cache_clear()
    yield Settings(hitl_user_emails="ann:ann@example.com,rita:rita@example.com")
    get_settings.cache_clear()
    users.directory.cache_clear()


def test_the_owner_is_told_of_their_own_question_but_never_asked_to_approve_their_own_call(mailed_people):
    """e-mail: ann's own question (respond-only, hers) mails ann; her refund mails rita, not ann who asked.

    Read through `hitl.contracts.asks`: an owner's question, or a call its policy lets the asker decide.
    """
    action = {
        "name": "ask_user",
        "args": {},
        "description": "Which order?",
        "tool_call_id": "c1",
        "agent": "a",
    }
    config = {"action_name": "ask_user", "allowed_decisions": ["respond"], "required_role": "owner"}
    question = {
        "action_requests": [action],
        "review_configs": [config],
        "agent": "a",
        "requested_by": ["ann"],
    }
    refund = {
        "type": "tool_approval",
        "tool_call_id": "c2",
        "name": "issue_refund",
        "args": {"amount": 300},
        "description": "Refund 300",
        "agent": "a",
        "required_role": "reviewer",
        "allowed_decisions": ["approve", "reject"],
        "requested_by": ["ann", "rita"],
    }
    told = {
        name: [u.identity for u, _ in recipients(mailed_people, Pending(id="i", value=v), "ann")]
        for name, v in (("question", question), ("refund", refund))
    }
    assert told == {"question": ["ann"], "refund": []}
    refund["requested_by"] = ["ann"]
    assert [u.identity for u, _ in recipients(mailed_people, Pending(id="i", value=refund), "ann")] == [
        "rita"
    ]
    refund["self_approval"] = True
    refund["requested_by"] = ["rita"]
    assert [u.identity for u, _ in recipients(mailed_people, Pending(id="i", value=refund), "ann")] == [
        "rita"
    ]
