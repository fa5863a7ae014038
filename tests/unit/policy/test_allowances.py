"""Thread allowances: which calls one covers, and what the server grants from an approve's `allow`."""

from __future__ import annotations

import pytest

from agents.settings import DemoSettings
from agents.support_policy import support_policy
from hitl.policy.allowances import covering, merge_allowances, within
from server.decisions.allowances import granted
from server.decisions.pending import Accepted, Pending, ResumeRefused
from server.identity.users import User

GATES = support_policy(DemoSettings())
REVIEWER = User(identity="reviewer1", role="reviewer")


def allowance(**changes):
    """A live allowance for support's send_email in thread t1, granted by a reviewer."""
    return {
        "id": "i-0",
        "thread_id": "t1",
        "agent": "support",
        "tool": "send_email",
        "bounds": {},
        "granted_by": "reviewer1",
        "granted_role": "reviewer",
        "granted_at": "2026-11-30T00:00:00+00:00",
        "interrupt_id": "i",
        "tool_call_ids": ["call_first"],
        **changes,
    }


def email(call_id="call_next", to="a@example.com"):
    return {
        "name": "send_email",
        "args": {"to": to, "subject": "s", "body": "b"},
        "id": call_id,
        "type": "tool_call",
    }


def refund(amount, call_id="call_next"):
    args = {"order_id": "A1", "amount": amount, "reason": "r"}
    return {"name": "issue_refund", "args": args, "id": call_id, "type": "tool_call"}


def covers(allowances, call, *, thread_id="t1", agent="support"):
    gate = GATES[call["name"]]
    return covering(allowances, thread_id=thread_id, agent=agent, gate=gate, call=call) is not None


def test_an_allowance_covers_later_calls_of_its_tool_in_its_thread_only():
    """scope: same thread, agent and tool are covered; another thread, agent or tool is not."""
    live = {"i-0": allowance()}
    assert covers(live, email())
    assert not covers(live, email(), thread_id="t2")
    assert not covers(live, email(), agent="general-purpose")
    assert not covers(live, refund(300))
    assert not covers(live, email(), thread_id=None)


def test_calls_waiting_at_the_grant_and_revoked_allowances_are_not_covered():
    """determinism and revocation: a call pending when granted still needs its answer; revoked means gone."""
    assert not covers({"i-0": allowance()}, email(call_id="call_first"))
    revoked = merge_allowances({"i-0": allowance()}, {"i-0": allowance(revoked_by="r", revoked_at="now")})
    assert not covers(revoked, email())


@pytest.mark.parametrize(("amount", "covered"), [(200, True), (450, True), (451, False), ("ten", False)])
def test_refund_allowances_stop_at_their_bound(amount, covered):
    """bounds: an allowance up to 450 covers refunds up to 450, not above, not unreadable amounts."""
    live = {"i-0": allowance(tool="issue_refund", bounds={"amount": {"max": 450}})}
    assert covers(live, refund(amount)) is covered


def test_no_allowance_covers_a_refund_over_the_supervisor_limit():
    """always-review: even a supervisor's unbounded allowance leaves a 501 refund to a person."""
    live = {"i-0": allowance(tool="issue_refund", granted_role="supervisor")}
    assert covers(live, refund(500))
    assert not covers(live, refund(501))


def test_an_allowance_covers_only_calls_its_granter_could_decide():
    """roles: an allowance covers what its granter's role may decide, nothing above it."""
    assert not covers({"i-0": allowance(tool="issue_refund", granted_role="requester")}, refund(200))
    assert covers({"i-0": allowance(tool="issue_refund", granted_role="reviewer")}, refund(200))


@pytest.mark.parametrize(
    ("bounds", "args", "inside"),
    [
        ({"amount": {"max": 100}}, {"amount": 100}, True),
        ({"amount": {"max": 100}}, {"amount": 100.5}, False),
        ({"amount": {"max": 100}}, {"amount": True}, False),
        ({"amount": {"max": 100}}, {}, False),
        ({"to": {"equals": "a@example.com"}}, {"to": "a@example.com"}, True),
        ({"to": {"equals": "a@example.com"}}, {"to": "b@example.com"}, False),
        ({"flag": {"equals": 1}}, {"flag": True}, False),
        ({"x": {}}, {"x": 1}, False),
    ],
)
def test_bounds(bounds, args, inside):
    """bounds: max is a numeric ceiling (not bool), equals is exact; missing args and empty bounds fail."""
    assert within(bounds, args) is inside


BATCH = Pending(
    id="i" * 32,
    value={
        "action_requests": [
            {"name": "send_email", "args": {"to": "a@example.com"}, "tool_call_id": "c1", "agent": "support"},
            {"name": "issue_refund", "args": {"amount": 600}, "tool_call_id": "c2", "agent": "support"},
        ],
        "review_configs": [
            {"action_name": "send_email", "allowed_decisions": ["approve", "reject"], "may_allow": True},
            {"action_name": "issue_refund", "allowed_decisions": ["approve", "reject"]},
        ],
    },
)


def test_granted_allowances_remember_every_waiting_call():
    """grant: one allowance per approve with allow, id'd by interrupt and position, naming waiting calls."""
    other = Pending(id="j" * 32, value={"type": "tool_approval", "tool_call_id": "c3"})
    answer = {
        "decisions": [
            {"type": "approve", "allow": {"scope": "thread", "bounds": {"to": {"equals": "a@example.com"}}}},
            {"type": "reject"},
        ]
    }
    (made,) = granted("t1", [Accepted(BATCH, answer)], [BATCH, other], REVIEWER)
    assert (made["id"], made["tool"], made["agent"], made["thread_id"]) == (
        f"{'i' * 32}-0",
        "send_email",
        "support",
        "t1",
    )
    assert (made["granted_by"], made["granted_role"], made["tool_call_ids"]) == (
        "reviewer1",
        "reviewer",
        ["c1", "c2", "c3"],
    )


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        (
            [{"type": "approve"}, {"type": "approve", "allow": {"scope": "thread"}}],
            "cannot be allowed for the thread",
        ),
        ([{"type": "reject", "allow": {"scope": "thread"}}, {"type": "reject"}], "only an approve"),
        (
            [
                {"type": "approve", "allow": {"scope": "thread", "bounds": {"amount": {"max": 1}}}},
                {"type": "reject"},
            ],
            "names arguments the call does not have: amount",
        ),
    ],
)
def test_allow_is_refused_where_policy_always_reviews_or_bounds_do_not_fit(decisions, message):
    """grant refusals: always-review calls, non-approves and bounds on missing arguments get 422."""
    with pytest.raises(ResumeRefused, match=message) as refusal:
        granted("t1", [Accepted(BATCH, {"decisions": decisions})], [BATCH], REVIEWER)
    assert refusal.value.status == 422


def test_a_per_call_approve_grants_for_its_own_agent_and_tool():
    """grant, per-call mode: the allowance names the asking subagent and its tool."""
    pending = Pending(
        id="k" * 32,
        value={
            "type": "tool_approval",
            "name": "delete_file",
            "args": {"path": "tmp/a.log"},
            "tool_call_id": "c9",
            "agent": "file_manager",
            "may_allow": True,
        },
    )
    answer = {"type": "approve", "allow": {"scope": "thread", "bounds": {"path": {"equals": "tmp/a.log"}}}}
    (made,) = granted("t1", [Accepted(pending, answer)], [pending], REVIEWER)
    assert (made["agent"], made["tool"], made["bounds"], made["tool_call_ids"]) == (
        "file_manager",
        "delete_file",
        {"path": {"equals": "tmp/a.log"}},
        ["c9"],
    )
