"""A first-line reviewer's policy: refused where it would stand in for a person, bounded, versioned."""

from __future__ import annotations

import dataclasses

import pytest

from hitl.policy.first_line import FirstLineReviewer, is_model_actor
from hitl.policy.gates import ToolGate
from hitl.policy.groups import Tiers
from hitl.policy.interrupt_on import read_interrupt_on
from hitl.policy.overrides import PolicyCatalog
from hitl.proof.policy_revision import revision

REVIEWER = FirstLineReviewer(name="triage", instructions="approve routine calls", limit=50)


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


def test_the_policy_revision_changes_with_its_first_line_reviewer():
    """revision: a receipt's policy revision changes when the first-line reviewer's bounds do."""

    def catalog(reviewer: FirstLineReviewer | None) -> PolicyCatalog:
        return PolicyCatalog.of(
            "agent", [(["notify"], {"notify": ToolGate(("approve", "reject"), first_line=reviewer)})]
        )

    assert revision(catalog(REVIEWER)) != revision(catalog(None))
    assert revision(catalog(REVIEWER)) != revision(catalog(dataclasses.replace(REVIEWER, limit=60)))
    assert revision(catalog(REVIEWER)) == revision(catalog(dataclasses.replace(REVIEWER)))
