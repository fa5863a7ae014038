"""Approval analytics: how the humans in the loop decide, computed from audit records.

Pure: given the audit records, when each approval paused and a query, `summarise` returns the
numbers `GET /analytics`, `hitl stats` and the web app's dashboard show: people's decisions, and a
first-line reviewer's apart (`first_line_stats`). Reading the records
and pause times from the server is `server.records.history`; live counters are `server.insight.metrics`.
`by_group` counts per team of the deciders (`finance`, `sre`; a person without one: their role).
`not_applied` lists the decisions the server accepted and could not apply (for a supervisor to look at).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hitl.contracts.records import PERSON_DECISIONS
from hitl.policy.groups import RESERVED_NAMES, SYSTEM_ACTOR, UNKNOWN_ACTOR
from server.identity.users import ROLES
from server.insight import first_line_stats
from server.insight.analytics_query import AnalyticsQuery, Thresholds
from server.insight.unapplied import not_applied

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

KINDS = (*PERSON_DECISIONS, "expire")
"""What can become of a pending approval: a person's decision, or the watcher's rejection at expiry."""


@dataclass(frozen=True)
class Decided:
    """One decided action (a batch yields one per tool call) and how long it waited."""

    thread_id: str
    interrupt_id: str
    agent: str
    tool: str
    reviewer: str
    kind: str
    decided_at: datetime
    seconds: float | None
    requested_args: dict[str, Any] = field(default_factory=dict)
    final_args: dict[str, Any] = field(default_factory=dict)
    groups: tuple[str, ...] = ()
    """The decider's teams (groups beyond the roles), else their highest role; `system`: the watcher."""


def decisions_of(
    records: Iterable[Mapping[str, Any]], paused: Mapping[tuple[str, str], datetime], query: AnalyticsQuery
) -> tuple[list[Decided], Counter[str]]:
    """The decisions among `records` in the query's period and filters, and the other events counted.

    Events: `refused` (resumes the server refused) and `escalated` (approvals escalated).
    """
    decided: list[Decided] = []
    events: Counter[str] = Counter()
    for record in records:
        try:
            when = _utc(datetime.fromisoformat(str(record.get("decided_at"))))
        except ValueError:
            continue
        if not query.since <= when < query.until:
            continue
        agent, tool = str(record.get("agent") or ""), str(record.get("tool") or "")
        if (query.agent and agent != query.agent) or (query.tool and tool != query.tool):
            continue
        decision, outcome = record.get("decision"), record.get("outcome")
        if outcome == "refused" and decision == "refused":
            events["refused"] += 1
        elif outcome == "accepted" and decision == "escalated":
            events["escalated"] += 1
        elif (
            outcome == "accepted"
            and decision in PERSON_DECISIONS
            and not first_line_stats.is_first_line(record)
        ):
            reviewer = str(record.get("reviewer") or "")
            key = (str(record.get("thread_id") or ""), str(record.get("interrupt_id") or ""))
            started = paused.get(key)
            decided.append(
                Decided(
                    thread_id=key[0],
                    interrupt_id=key[1],
                    agent=agent,
                    tool=tool,
                    reviewer=reviewer,
                    kind="expire" if reviewer == SYSTEM_ACTOR else str(decision),
                    decided_at=when,
                    seconds=max(0.0, (when - _utc(started)).total_seconds()) if started else None,
                    requested_args=_dict(record.get("requested_args")),
                    final_args=_dict(record.get("final_args")),
                    groups=_teams(reviewer, record.get("roles")),
                )
            )
    return decided, events


def summarise(
    records: Iterable[Mapping[str, Any]],
    paused: Mapping[tuple[str, str], datetime],
    query: AnalyticsQuery,
    thresholds: Thresholds | None = None,
) -> dict[str, Any]:
    """Every number of the analytics for `query`, from audit `records` and pause times `paused`."""
    limits = thresholds or Thresholds()
    records = list(records)
    decided, events = decisions_of(records, paused, query)
    by_tool = _grouped(decided, lambda d: d.tool, "tool", edits=True)
    by_reviewer = _reviewers([d for d in decided if d.kind != "expire"], limits)
    quick = [
        d
        for d in decided
        if d.kind == "approve" and d.seconds is not None and d.seconds < limits.quick_seconds
    ]
    return {
        "since": query.since.isoformat(),
        "until": query.until.isoformat(),
        "agent": query.agent,
        "tool": query.tool,
        "thresholds": {
            "quick_seconds": limits.quick_seconds,
            "stamp_rate": limits.stamp_rate,
            "stamp_min_decisions": limits.stamp_min_decisions,
            "rejected_rate": limits.rejected_rate,
            "rejected_min_decisions": limits.rejected_min_decisions,
        },
        "totals": {
            **_stats(decided),
            "refused": events["refused"],
            "escalated": events["escalated"],
            "not_applied": len(unapplied := not_applied(records, query)),
        },
        "not_applied": unapplied,
        "by_tool": by_tool,
        "by_agent": _grouped(decided, lambda d: d.agent, "agent", edits=False),
        "by_group": _by_group(decided),
        "by_reviewer": by_reviewer,
        "by_day": _by_day(decided),
        "rubber_stamp": {
            "quick_approvals": len(quick),
            "quick_approval_rate": _rate(len(quick), sum(1 for d in decided if d.kind == "approve")),
            "reviewers_approving_nearly_all": [
                r["reviewer"]
                for r in by_reviewer
                if r["decisions"] >= limits.stamp_min_decisions and r["rates"]["approve"] >= limits.stamp_rate
            ],
        },
        "first_line": first_line_stats.summary(records, query, quantile),
        "often_rejected": [
            {"tool": t["tool"], "decisions": t["decisions"], "reject_rate": t["rates"]["reject"]}
            for t in by_tool
            if t["decisions"] >= limits.rejected_min_decisions
            and t["rates"]["reject"] >= limits.rejected_rate
        ],
    }


def quantile(values: list[float], q: float) -> float | None:
    """The `q` quantile of `values`, interpolated linearly between ranks (None if there are none).

    The same as `statistics.quantiles(..., method="inclusive")` and numpy's default: the median of
    [10, 20, 30, 40] is 25, its p90 37.
    """
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _stats(decided: list[Decided]) -> dict[str, Any]:
    """How many, how fast (over the timed ones) and how each ended."""
    seconds = [d.seconds for d in decided if d.seconds is not None]
    kinds = Counter(d.kind for d in decided)
    return {
        "decisions": len(decided),
        "timed": len(seconds),
        "median_seconds": _round(quantile(seconds, 0.5)),
        "p90_seconds": _round(quantile(seconds, 0.9)),
        "counts": {kind: kinds[kind] for kind in KINDS},
        "rates": {kind: _rate(kinds[kind], len(decided)) for kind in KINDS},
    }


def _grouped(decided: list[Decided], key: Any, name: str, *, edits: bool) -> list[dict[str, Any]]:  # noqa: ANN401  (a key function)
    groups: dict[str, list[Decided]] = defaultdict(list)
    for item in decided:
        groups[key(item)].append(item)
    rows = []
    for value, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        row = {name: value, **_stats(items)}
        if edits:
            row["edits"] = _edits([d for d in items if d.kind == "edit"])
        rows.append(row)
    return rows


def _edits(edited: list[Decided]) -> dict[str, dict[str, Any]]:
    """Per argument: how often an edit changed it and, for numbers, by how much on average."""
    changes: dict[str, list[tuple[float, float | None] | None]] = defaultdict(list)
    for item in edited:
        for arg in sorted(item.requested_args.keys() | item.final_args.keys()):
            before, after = item.requested_args.get(arg), item.final_args.get(arg)
            if before == after:
                continue
            if isinstance(before, int | float) and isinstance(after, int | float) and _number(before, after):
                delta = float(after) - float(before)
                changes[arg].append((delta, delta / abs(float(before)) if before else None))
            else:
                changes[arg].append(None)
    summary = {}
    for arg, found in sorted(changes.items()):
        numeric = [c for c in found if c is not None]
        relative = [r for _, r in numeric if r is not None]
        summary[arg] = {
            "changed": len(found),
            "mean_change": _round(sum(d for d, _ in numeric) / len(numeric)) if numeric else None,
            "mean_relative_change": _round(sum(relative) / len(relative), 4) if relative else None,
        }
    return summary


def _reviewers(decided: list[Decided], limits: Thresholds) -> list[dict[str, Any]]:
    rows = []
    for row in _grouped(decided, lambda d: d.reviewer, "reviewer", edits=False):
        mine = [d for d in decided if d.reviewer == row["reviewer"]]
        row["quick_approvals"] = sum(
            1
            for d in mine
            if d.kind == "approve" and d.seconds is not None and d.seconds < limits.quick_seconds
        )
        rows.append(row)
    return rows


def _teams(reviewer: str, roles: object) -> tuple[str, ...]:
    """Who decided, as teams: a receipt's signed `roles` beyond the roles, else the highest role.

    The server's own rows (`system`, `unknown`) are never a person's: a reserved name a record of an
    older release holds among its roles is no team.
    """
    if reviewer == SYSTEM_ACTOR:
        return (SYSTEM_ACTOR,)
    held = [str(r) for r in roles] if isinstance(roles, list) else []
    teams = sorted({r for r in held if r not in ROLES and r not in RESERVED_NAMES})
    ranked = [r for r in ROLES if r in held]
    return tuple(teams) or tuple(ranked[-1:]) or (UNKNOWN_ACTOR,)


def _by_group(decided: list[Decided]) -> list[dict[str, Any]]:
    """Per team of the deciders (a person in two teams counts in both), most decisions first."""
    teams = sorted({g for d in decided for g in d.groups})
    rows = [{"group": team, **_stats([d for d in decided if team in d.groups])} for team in teams]
    return sorted(rows, key=lambda row: (-row["decisions"], row["group"]))


def _by_day(decided: list[Decided]) -> list[dict[str, Any]]:
    days: dict[str, Counter[str]] = defaultdict(Counter)
    for item in decided:
        days[item.decided_at.date().isoformat()][item.kind] += 1
    return [{"day": day, **{kind: days[day][kind] for kind in KINDS}} for day in sorted(days)]


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _number(*values: object) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def _dict(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
