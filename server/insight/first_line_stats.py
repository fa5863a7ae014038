"""How a first-line reviewer does, per tool: its share of calls, what it sent to people, what was overturned.

Pure: from the audit records in the query's period and filters, `summary` counts per tool (and in
all) the calls a first-line reviewer (`model:<name>`) decided itself, those it sent to people (and
why), people's word on its decisions afterwards (`confirmed`, `overturned`) and its latency. Part
of `GET /analytics` (`server.insight.analytics`), shown apart from people's decisions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hitl.policy.first_line import is_model_actor

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from server.insight.analytics_query import AnalyticsQuery

DECIDES = frozenset({"approve", "reject"})
LATER = {"confirmed": "confirmed", "overturned": "overturned"}
"""People's word on a first-line decision afterwards, as the trail records it."""


def is_first_line(record: Mapping[str, Any]) -> bool:
    """Whether an audit record is a first-line reviewer's decision or referral (not a person's)."""
    return is_model_actor(record.get("reviewer"))


def summary(
    records: Iterable[Mapping[str, Any]],
    query: AnalyticsQuery,
    quantile: Callable[[list[float], float], float | None],
) -> dict[str, Any]:
    """The first-line numbers of `query`: `totals` and `by_tool` (most calls first)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    latencies: dict[str, list[float]] = defaultdict(list)
    for record in records:
        if not _in(record, query):
            continue
        tool, decision = str(record.get("tool") or ""), str(record.get("decision") or "")
        if is_first_line(record) and (decision in DECIDES or decision == "referred"):
            counts[tool][decision] += 1
            stamp = record.get("first_line")
            if isinstance(stamp, dict):
                if decision == "referred":
                    counts[tool][f"cause:{stamp.get('cause') or 'model'}"] += 1
                if isinstance(stamp.get("latency_ms"), int | float):
                    latencies[tool].append(float(stamp["latency_ms"]))
        elif decision in LATER and record.get("outcome") == "accepted":
            counts[tool][LATER[decision]] += 1
    rows = [_row(tool, counts[tool], latencies[tool], quantile) for tool in counts]
    rows.sort(key=lambda row: (-row["asked"], row["tool"]))
    everything: Counter[str] = sum(counts.values(), Counter())
    every_latency = [ms for found in latencies.values() for ms in found]
    return {"totals": _row("", everything, every_latency, quantile), "by_tool": rows}


def _row(
    tool: str,
    counts: Counter[str],
    latencies: list[float],
    quantile: Callable[[list[float], float], float | None],
) -> dict[str, Any]:
    decided = counts["approve"] + counts["reject"]
    asked = decided + counts["referred"]
    p50, p90 = quantile(latencies, 0.5), quantile(latencies, 0.9)
    return {
        "tool": tool,
        "asked": asked,
        "decided": decided,
        "approved": counts["approve"],
        "rejected": counts["reject"],
        "sent_to_people": counts["referred"],
        "share_decided": round(decided / asked, 4) if asked else 0.0,
        "sent_because": {
            k.removeprefix("cause:"): v for k, v in sorted(counts.items()) if k.startswith("cause:")
        },
        "confirmed": counts["confirmed"],
        "overturned": counts["overturned"],
        "overturned_rate": round(counts["overturned"] / counts["approve"], 4) if counts["approve"] else 0.0,
        "median_ms": None if p50 is None else round(p50, 3),
        "p90_ms": None if p90 is None else round(p90, 3),
    }


def _in(record: Mapping[str, Any], query: AnalyticsQuery) -> bool:
    try:
        when = datetime.fromisoformat(str(record.get("decided_at")))
    except ValueError:
        return False
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    if not query.since <= when < query.until:
        return False
    return not (query.agent and record.get("agent") != query.agent) and not (
        query.tool and record.get("tool") != query.tool
    )
