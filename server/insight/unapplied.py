"""Decisions the server accepted and could not apply, listed for a supervisor (`GET /analytics`).

Pure: read from the trail's `not_applied` records, which the server writes when it gives a decision
up (`server.coordination.reconciler`, `server.decisions.withdrawals`): its run could not start or
never applied it (`failed`: its approvals may be answered again), or its signatures do not stand
behind it (`refused`). Not for the counts of what people decided (`server.insight.analytics`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from server.insight.analytics_query import AnalyticsQuery


def not_applied(records: Iterable[Mapping[str, Any]], query: AnalyticsQuery) -> list[dict[str, Any]]:
    """The decisions in `records` not applied within the query's period and filters, newest first.

    Each: its thread and interrupts, agent and tools, `failed` or `refused`, when, and why in words.
    """
    found = []
    for record in records:
        if record.get("decision") != "not_applied":
            continue
        try:
            when = datetime.fromisoformat(str(record.get("decided_at")))
        except ValueError:
            continue
        when = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
        agent, tool = str(record.get("agent") or ""), str(record.get("tool") or "")
        if not query.since <= when < query.until or (query.agent and agent != query.agent):
            continue
        if query.tool and query.tool not in tool.split(", "):
            continue
        found.append(
            {
                "thread_id": str(record.get("thread_id") or ""),
                "interrupt_id": str(record.get("interrupt_id") or ""),
                "agent": agent,
                "tool": tool,
                "outcome": str(record.get("outcome") or ""),
                "at": when.isoformat(),
                "why": str(record.get("message") or ""),
            }
        )
    return sorted(found, key=lambda row: row["at"], reverse=True)
