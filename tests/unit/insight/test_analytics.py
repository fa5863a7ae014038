"""Approval analytics on a scripted set of decisions with known timings: every number is exact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from server.insight.analytics import KINDS, quantile, summarise
from server.insight.analytics_query import AnalyticsQuery, Thresholds

PAUSE = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
REVIEWER = ["reviewer"]
SUPERVISOR = ["reviewer", "supervisor"]

NONE = dict.fromkeys(KINDS, 0)
"""Every kind a pending approval can end as (answered forms and cancels, withdrawals too), none yet."""


def record(
    n, tool, decision, reviewer, roles, seconds, *, agent="support", requested=None, final=None, **extra
):
    """The audit record of interrupt i<n> on thread t<n>, decided `seconds` after PAUSE."""
    return {
        "thread_id": f"t{n}",
        "interrupt_id": f"i{n}",
        "tool_call_id": f"c{n}",
        "agent": agent,
        "tool": tool,
        "requested_args": requested or {},
        "decision": decision,
        "final_args": final,
        "message": None,
        "reviewer": reviewer,
        "roles": roles,
        "decided_at": (PAUSE + timedelta(seconds=seconds)).isoformat(),
        "outcome": "accepted",
        **extra,
    }


REFUND = {"order_id": "A1024", "amount": 899, "reason": "broken"}
RECORDS = [
    record(
        1,
        "issue_refund",
        "edit",
        "supervisor1",
        SUPERVISOR,
        120,
        requested=REFUND,
        final={**REFUND, "amount": 699, "reason": "partly broken"},
    ),
    record(2, "issue_refund", "approve", "reviewer1", REVIEWER, 2, requested=REFUND, final=REFUND),
    record(3, "issue_refund", "reject", "reviewer1", REVIEWER, 60, requested=REFUND),
    record(4, "send_email", "approve", "reviewer1", REVIEWER, 3),
    record(5, "send_email", "approve", "reviewer1", REVIEWER, 4),
    record(6, "send_email", "approve", "reviewer1", REVIEWER, 30),
    record(7, "issue_refund", "reject", "system", [], 3600, requested=REFUND),
    record(8, "delete_file", "reject", "reviewer1", REVIEWER, 10, agent="ops"),
    record(9, "delete_file", "reject", "supervisor1", SUPERVISOR, 20, agent="ops"),
    record(10, "delete_file", "approve", "supervisor1", SUPERVISOR, 40, agent="ops"),
    record(11, "send_email", "approve", "reviewer1", REVIEWER, 50),  # its pause is unknown: untimed
    # not decisions: a refused resume, an escalation, an allowance; one decision outside the period
    record(12, "issue_refund", "refused", "requester1", ["requester"], 5, outcome="refused", refusal="no"),
    record(13, "issue_refund", "escalated", "system", [], 86400),
    record(14, "send_email", "allow", "reviewer1", REVIEWER, 3),
    record(15, "send_email", "approve", "reviewer1", REVIEWER, -40 * 86400),
    # a decision the server accepted and could not apply (given up), and one from before the period
    record(16, "issue_refund", "not_applied", "system", [], 7200, outcome="failed", message="not run: gone"),
    record(17, "send_email", "not_applied", "system", [], -40 * 86400, outcome="failed"),
]
PAUSED = {(f"t{n}", f"i{n}"): PAUSE for n in range(1, 16) if n != 11}
QUERY = AnalyticsQuery(since=NOW - timedelta(days=30), until=NOW)


def by(rows, key):
    return {row[key]: row for row in rows}


def test_totals_count_decisions_timings_and_other_events():
    """totals: 11 decisions (10 timed), median 25 s, p90 468 s; 1 refused, 1 escalated, 1 not applied."""
    totals = summarise(RECORDS, PAUSED, QUERY)["totals"]
    assert totals == {
        "decisions": 11,
        "timed": 10,
        "median_seconds": 25.0,
        "p90_seconds": 468.0,
        "counts": {**NONE, "approve": 6, "edit": 1, "reject": 3, "expire": 1},
        "rates": {**NONE, "approve": 0.5455, "edit": 0.0909, "reject": 0.2727, "expire": 0.0909},
        "refused": 1,
        "escalated": 1,
        "not_applied": 1,
    }


def test_decisions_not_applied_are_listed_for_a_supervisor():
    """not_applied: the one given up in the period, where, what and why; filtered by tool like the rest."""
    summary = summarise(RECORDS, PAUSED, QUERY)
    assert summary["not_applied"] == [
        {
            "thread_id": "t16",
            "interrupt_id": "i16",
            "agent": "support",
            "tool": "issue_refund",
            "outcome": "failed",
            "at": (PAUSE + timedelta(seconds=7200)).isoformat(),
            "why": "not run: gone",
        }
    ]
    email_only = AnalyticsQuery(since=QUERY.since, until=QUERY.until, tool="send_email")
    assert summarise(RECORDS, PAUSED, email_only)["not_applied"] == []


def test_per_tool_timings_rates_and_edits():
    """per tool: issue_refund 4 decisions, median 90 s, p90 2556 s, a quarter each; its edit took 200 off."""
    tools = by(summarise(RECORDS, PAUSED, QUERY)["by_tool"], "tool")
    refund = tools["issue_refund"]
    assert (refund["decisions"], refund["median_seconds"], refund["p90_seconds"]) == (4, 90.0, 2556.0)
    assert refund["rates"] == {**NONE, "approve": 0.25, "edit": 0.25, "reject": 0.25, "expire": 0.25}
    assert refund["edits"] == {
        "amount": {"changed": 1, "mean_change": -200.0, "mean_relative_change": -0.2225},
        "reason": {"changed": 1, "mean_change": None, "mean_relative_change": None},
    }
    email = tools["send_email"]
    assert (email["decisions"], email["timed"], email["median_seconds"], email["p90_seconds"]) == (
        4,
        3,
        4.0,
        24.8,
    )
    assert email["rates"]["approve"] == 1.0
    assert email["edits"] == {}
    delete = tools["delete_file"]
    assert (delete["decisions"], delete["median_seconds"], delete["p90_seconds"]) == (3, 20.0, 36.0)
    assert list(tools) == ["issue_refund", "send_email", "delete_file"]  # most decided first


def test_per_agent():
    """per agent: support decided 8 (median 30 s), ops 3 (median 20 s)."""
    agents = by(summarise(RECORDS, PAUSED, QUERY)["by_agent"], "agent")
    assert {a: (r["decisions"], r["median_seconds"]) for a, r in agents.items()} == {
        "support": (8, 30.0),
        "ops": (3, 20.0),
    }
    assert "edits" not in agents["support"]


def test_per_group_the_deciders_teams_else_their_role():
    """per group: the deciders' teams (finance 2, finance-leads 1), else the highest role (reviewer 7).

    Without teams: reviewer 7, supervisor 3, system 1; a team member's decision counts for their
    teams (a lead in finance and finance-leads: both), not for their role.
    """
    plain = by(summarise(RECORDS, PAUSED, QUERY)["by_group"], "group")
    assert {g: r["decisions"] for g, r in plain.items()} == {"reviewer": 7, "supervisor": 3, "system": 1}
    teams = [
        *RECORDS,
        record(16, "issue_refund", "approve", "ana", [*REVIEWER, "finance"], 8, requested=REFUND),
        record(17, "issue_refund", "approve", "lee", [*REVIEWER, "finance", "finance-leads"], 12),
    ]
    grouped = summarise(teams, PAUSED, QUERY)["by_group"]
    assert [(r["group"], r["decisions"]) for r in grouped] == [
        ("reviewer", 7),
        ("supervisor", 3),
        ("finance", 2),
        ("finance-leads", 1),
        ("system", 1),
    ]
    assert by(grouped, "group")["finance"]["rates"]["approve"] == 1.0


def test_a_reserved_name_among_a_deciders_roles_is_no_team():
    """per group: `system` or `unknown` in a record's roles (an older release let people hold them): no team.

    Issue 54, finding 9: a member's decisions shared the `system` row with the watcher's expiries.
    Now ana's counts as reviewer, lee's as finance; the system row keeps only the expiry.
    """
    reserved = [
        *RECORDS,
        record(16, "issue_refund", "approve", "ana", [*REVIEWER, "system"], 8, requested=REFUND),
        record(17, "issue_refund", "approve", "lee", [*REVIEWER, "unknown", "finance"], 12),
    ]
    grouped = {r["group"]: r["decisions"] for r in summarise(reserved, PAUSED, QUERY)["by_group"]}
    assert grouped == {"reviewer": 8, "supervisor": 3, "finance": 1, "system": 1}


def test_per_reviewer_workload_speed_and_quick_approvals():
    """per reviewer: reviewer1 7 (median 7 s, 3 quick), supervisor1 3 (median 40 s); expiries are no one's."""
    reviewers = by(summarise(RECORDS, PAUSED, QUERY)["by_reviewer"], "reviewer")
    assert set(reviewers) == {"reviewer1", "supervisor1"}
    one = reviewers["reviewer1"]
    assert (one["decisions"], one["median_seconds"], one["quick_approvals"]) == (7, 7.0, 3)
    assert one["rates"]["approve"] == 0.7143
    sup = reviewers["supervisor1"]
    assert (sup["decisions"], sup["median_seconds"], sup["quick_approvals"]) == (3, 40.0, 0)


def test_rubber_stamp_signals_and_often_rejected_tools():
    """signals: 3 of 6 approvals within 5 s; delete_file rejected 2 of 3 times; a 70 % bar flags reviewer1."""
    summary = summarise(RECORDS, PAUSED, QUERY)
    assert summary["rubber_stamp"] == {
        "quick_approvals": 3,
        "quick_approval_rate": 0.5,
        "reviewers_approving_nearly_all": [],
    }
    assert summary["often_rejected"] == [{"tool": "delete_file", "decisions": 3, "reject_rate": 0.6667}]
    lenient = summarise(RECORDS, PAUSED, QUERY, Thresholds(stamp_rate=0.7, stamp_min_decisions=5))
    assert lenient["rubber_stamp"]["reviewers_approving_nearly_all"] == ["reviewer1"]
    assert lenient["thresholds"]["stamp_rate"] == 0.7


def test_filters_and_days():
    """agent and tool filters keep only their decisions; by_day counts each kind per UTC day."""
    ops = summarise(RECORDS, PAUSED, AnalyticsQuery(QUERY.since, QUERY.until, agent="ops"))
    assert ops["totals"]["decisions"] == 3
    assert ops["by_day"] == [{"day": "2026-11-02", **NONE, "approve": 1, "reject": 2}]
    email = summarise(RECORDS, PAUSED, AnalyticsQuery(QUERY.since, QUERY.until, tool="send_email"))
    assert email["totals"]["counts"]["approve"] == 4
    nothing = summarise(RECORDS, PAUSED, AnalyticsQuery(NOW - timedelta(days=1), NOW))
    assert nothing["totals"]["decisions"] == 0
    assert nothing["totals"]["median_seconds"] is None
    assert nothing["by_tool"] == []


def test_quantile_interpolates_between_ranks():
    """quantile: the median of 10..40 is 25, its p90 37; one value is every quantile; none is None."""
    assert quantile([40, 10, 30, 20], 0.5) == 25
    assert quantile([40, 10, 30, 20], 0.9) == pytest.approx(37)
    assert quantile([7], 0.9) == 7
    assert quantile([], 0.5) is None


def test_query_parameters():
    """query: ISO times, dates and durations back from now; the default is the last 30 days."""
    default = AnalyticsQuery.from_params({}, NOW)
    assert (default.since, default.until) == (NOW - timedelta(days=30), NOW)
    week = AnalyticsQuery.from_params({"since": "7d", "agent": "support", "tool": ""}, NOW)
    assert (week.since, week.agent, week.tool) == (NOW - timedelta(days=7), "support", None)
    dated = AnalyticsQuery.from_params({"since": "2026-11-01", "until": "2026-11-02T00:00:00+01:00"}, NOW)
    assert dated.since == datetime(2026, 11, 1, tzinfo=UTC)
    assert dated.until == datetime(2026, 11, 1, 23, tzinfo=UTC)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"since": "last tuesday"}, "since must be an ISO 8601 time"),
        ({"until": "x" * 500}, "until must be an ISO 8601 time"),
        ({"since": "99999d"}, "since must be"),
        ({"since": "2026-11-30", "until": "2026-11-01"}, "since must be before until"),
        ({"agent": "a" * 201}, "agent must be a name"),
        ({"tool": "bad\x00tool"}, "tool must be a name"),
    ],
)
def test_bad_query_parameters_are_named(params, named):
    """a parameter the server cannot read: ValueError naming it (the route answers 400)."""
    with pytest.raises(ValueError, match=named):
        AnalyticsQuery.from_params(params, NOW)
