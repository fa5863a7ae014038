"""A first-line reviewer's policy: refused where it would stand in for a person, bounded, versioned."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agents.settings import DemoSettings
from agents.support_policy import support_policy
from hitl.policy.first_line import FirstLineReviewer, is_model_actor
from hitl.policy.gates import ToolGate
from hitl.policy.groups import Tiers
from hitl.policy.interrupt_on import read_interrupt_on
from hitl.policy.overrides import PolicyCatalog
from hitl.proof.policy_revision import revision

REVIEWER = FirstLineReviewer(name="triage", instructions="approve routine calls", limit=50)
ON = DemoSettings(support_first_line=True, refund_auto_approve_limit=20, refund_first_line_limit=50)


def gate(**fields: object) -> ToolGate:
    """A refund-like gate with the first-line reviewer, `fields` changed."""
    return ToolGate(**{"allowed_decisions": ("approve", "edit", "reject"), "first_line": REVIEWER, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"approvals_required": 2}, "never counts toward a quorum"),
        ({"decider": "supervisor"}, "never stands in for a supervisor"),
        ({"decider": "owner", "allowed_decisions": ("respond",)}, "answers an owner's question"),
        ({"decider": "finance"}, "does not stand in front of"),
        (
            {"decider": Tiers("amount", "supervisor", ((500, "finance-leads"),))},
            "none of this gate's deciders",
        ),
        (
            {
                "allowed_decisions": ("approve",),
                "first_line": dataclasses.replace(REVIEWER, may=("approve", "reject")),
            },
            "may reject",
        ),
    ],
)
def test_a_gate_where_the_model_would_stand_in_for_a_person_is_refused_at_build(fields, words):
    """build: a quorum for every call, a supervisor or owner, a tier it never takes, a reject: refused."""
    with pytest.raises(ValueError, match="first_line") as refused:
        gate(**fields)
    assert words in str(refused.value)


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"name": "Triage"}, "name"),
        ({"may": ("approve", "edit")}, "may"),
        ({"may": ()}, "may"),
        ({"model": "gpt-4o"}, "model"),
        ({"stands_for": ("supervisor",)}, "stands_for"),
        ({"stands_for": ()}, "stands_for"),
        ({"sample_rate": 1.5}, "sample_rate"),
        ({"timeout_seconds": 0}, "timeout_seconds"),
        ({"refusals_in_a_row": 0}, "refusals_in_a_row"),
    ],
)
def test_a_malformed_reviewer_is_refused_naming_the_field(fields, name):
    """reviewer: a bad name, an edit it may give, a model spec, a supervisor it stands for: refused."""
    with pytest.raises(ValueError, match=name):
        dataclasses.replace(REVIEWER, **fields)


@pytest.mark.parametrize(
    ("args", "askers", "why"),
    [
        ({"amount": 40}, (), None),
        ({"amount": 50}, (), None),
        ({"amount": 50.01}, (), "over the first-line limit 50"),
        ({"amount": "forty"}, (), "cannot be read as a number"),
        ({}, (), "cannot be read as a number"),
        ({"amount": 40}, ("requester",), None),
        ({"amount": 40}, ("reviewer",), "separation of duties"),
    ],
)
def test_bounds_per_call(args, askers, why):
    """bounds: up to its limit only; unreadable args and an asker who could decide it go to people."""
    found = gate().not_delegated(args, askers)
    assert found == why if why is None else why in str(found)


def test_tiers_and_quorums_by_args_keep_their_calls_for_people():
    """tiers: the supervisor tier, a quorum by args and always-review calls are never the model's."""
    tiered = gate(
        decider=Tiers("amount", "reviewer", ((30, "supervisor"),)),
        approvals_required=lambda args: 2 if float(args["amount"]) > 20 else 1,
        always_review=lambda args: args.get("reason") == "fraud",
        first_line=dataclasses.replace(REVIEWER, limit=None),
    )
    assert tiered.not_delegated({"amount": 10}) is None
    assert "several people" in str(tiered.not_delegated({"amount": 25}))
    assert "several people" in str(tiered.not_delegated({"amount": 40}))
    assert "always asks a person" in str(tiered.not_delegated({"amount": 10, "reason": "fraud"}))
    own = gate(
        decider=Tiers("amount", "reviewer", ((30, "supervisor"),)),
        first_line=dataclasses.replace(REVIEWER, limit=None),
    )
    assert "it needs supervisor" in str(own.not_delegated({"amount": 31}))


def test_within_is_a_bound_and_an_unreadable_one_refuses():
    """within: a call it returns False for, or cannot read, is not the model's."""
    bounded = gate(
        first_line=dataclasses.replace(REVIEWER, limit=None, within=lambda a: a["to"].endswith("@shop.test"))
    )
    assert bounded.not_delegated({"to": "a@shop.test"}) is None
    assert "outside the bounds" in str(bounded.not_delegated({"to": "a@elsewhere.test"}))
    assert "outside the bounds" in str(bounded.not_delegated({}))


def test_an_answer_its_policy_does_not_allow_becomes_a_referral():
    """bounded: approve stands; an approve-only reviewer's reject goes to people, saying what it would do."""
    assert REVIEWER.bounded("approve", "routine") == ("approve", "routine", "model")
    assert REVIEWER.bounded("refer", "unsure") == ("refer", "unsure", "model")
    decision, reason, cause = REVIEWER.bounded("reject", "it promises a voucher")
    assert (decision, cause) == ("refer", "not_allowed")
    assert "it would reject this (it promises a voucher)" in reason
    both = dataclasses.replace(REVIEWER, may=("approve", "reject"))
    assert both.bounded("reject", "no")[0] == "reject"


def test_its_actor_is_never_a_persons_name():
    """actor: signs as model:<name>; only such names are model actors."""
    assert REVIEWER.actor == "model:triage"
    assert is_model_actor("model:triage")
    assert not is_model_actor("reviewer1")
    assert not is_model_actor(None)


def test_interrupt_on_takes_it_and_refuses_anything_else():
    """interrupt_on: a first_line key takes a FirstLineReviewer; any other value is refused naming the key."""
    policy = read_interrupt_on(
        {"notify": {"allowed_decisions": ["approve", "reject"], "first_line": REVIEWER}}, agent="a"
    )
    assert policy["notify"].first_line is REVIEWER
    with pytest.raises(ValueError, match="first_line must be a FirstLineReviewer"):
        read_interrupt_on({"notify": {"allowed_decisions": ["approve"], "first_line": "model:x"}}, agent="a")


def test_the_demo_hands_emails_and_small_refunds_to_it_only_when_switched_on():
    """demo: off by default; on, e-mails and refunds up to 50 (below the supervisor tier) go to the model."""
    off = support_policy(DemoSettings())
    assert off["send_email"].first_line is None
    assert off["issue_refund"].first_line is None
    on = support_policy(ON)
    email, refund = on["send_email"], on["issue_refund"]
    assert email.first_line is not None
    assert email.first_line.actor == "model:support-triage"
    assert email.not_delegated({"to": "x@example.com", "subject": "s", "body": "b"}) is None
    assert refund.not_delegated({"order_id": "A1", "amount": 40, "reason": "r"}) is None
    assert "over the first-line limit" in str(
        refund.not_delegated({"order_id": "A1", "amount": 80, "reason": "r"})
    )
    assert "always asks" in str(refund.not_delegated({"order_id": "A1", "amount": 900, "reason": "r"}))
    assert "ask_user" in on
    assert on["ask_user"].first_line is None


def test_the_demo_refuses_a_first_line_limit_inside_the_auto_approve_range():
    """settings: a first-line limit at or under the auto-approve limit is refused, saying how to fix it."""
    with pytest.raises(ValueError, match="REFUND_AUTO_APPROVE_LIMIT") as refused:
        DemoSettings(support_first_line=True, refund_auto_approve_limit=100, refund_first_line_limit=50)
    assert "would never see one" in str(refused.value)


def test_the_policy_revision_changes_with_its_first_line_reviewer():
    """revision: a receipt's policy revision changes when the first-line reviewer's bounds do."""

    def catalog(reviewer: FirstLineReviewer | None) -> PolicyCatalog:
        return PolicyCatalog.of(
            "agent", [(["notify"], {"notify": ToolGate(("approve", "reject"), first_line=reviewer)})]
        )

    assert revision(catalog(REVIEWER)) != revision(catalog(None))
    assert revision(catalog(REVIEWER)) != revision(catalog(dataclasses.replace(REVIEWER, limit=60)))
    assert revision(catalog(REVIEWER)) == revision(catalog(dataclasses.replace(REVIEWER)))


def test_the_policy_example_of_docs_agents_md_builds_and_bounds():
    """docs/agents.md: its first-line example builds a gate whose reviewer approves plain e-mails only."""
    docs = Path(__file__).resolve().parents[3] / "docs" / "agents.md"
    section = docs.read_text().split("## A first-line reviewer: a model before the people", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {}
    exec(compile(code, str(docs), "exec"), namespace)  # noqa: S102  (the documented example, as written)
    emails = namespace["emails"]
    assert isinstance(emails, ToolGate)
    assert emails.first_line is not None
    assert emails.first_line.actor == "model:support-triage"
    assert emails.not_delegated({"to": "a@x.test", "subject": "s", "body": "b"}) is None
    rules = emails.first_line.offline
    assert rules is not None
    assert rules.verdict("send_email", {"body": "We promise a voucher"}).decision == "reject"
    assert rules.verdict("send_email", {"body": "Your parcel left"}).decision == "approve"
