"""What an analytics request asks: a period (absolute or relative), an agent, a tool, and the thresholds.

`AnalyticsQuery.from_params` reads `GET /analytics?since=&until=&agent=&tool=` and refuses what it
cannot read with words naming the parameter; `Thresholds` say where a pattern becomes a signal.
Pure. Not for computing the numbers (`analytics`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from server.http.instants import EARLIEST, instant

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime


DEFAULT_PERIOD = timedelta(days=30)


MAX_FILTER_CHARS = 200


@dataclass(frozen=True)
class Thresholds:
    """Where a pattern becomes a signal; every number is echoed in the summary."""

    quick_seconds: float = 5.0
    """An approval sent within this many seconds of the pause is a quick approval."""
    stamp_rate: float = 0.95
    """A reviewer who approves at least this share of their decisions ..."""
    stamp_min_decisions: int = 5
    """... over at least this many decisions approves nearly everything."""
    rejected_rate: float = 0.5
    """A tool whose decisions are rejections at least this often ..."""
    rejected_min_decisions: int = 3
    """... over at least this many decisions is rejected often."""


@dataclass(frozen=True)
class AnalyticsQuery:
    """The period and filters asked for: decisions with `since <= decided_at < until`."""

    since: datetime
    until: datetime
    agent: str | None = None
    tool: str | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, str], now: datetime) -> AnalyticsQuery:
        """The query `GET /analytics?since=&until=&agent=&tool=` asks for.

        `since` and `until` are ISO 8601 times or dates (UTC unless they say otherwise), or a
        duration back from now (`90m`, `24h`, `7d`, `4w`). Defaults: the last 30 days.

        Raises:
            ValueError: naming the parameter that is wrong and what it must be.
        """
        until = instant("until", params.get("until"), zoned=False, now=now) or now
        since = instant("since", params.get("since"), zoned=False, now=now) or until - min(
            DEFAULT_PERIOD, until - EARLIEST
        )
        if since >= until:
            msg = f"since must be before until (got since={since.isoformat()}, until={until.isoformat()})"
            raise ValueError(msg)
        filters: dict[str, str | None] = {}
        for name in ("agent", "tool"):
            value = params.get(name) or None
            if value is not None and (len(value) > MAX_FILTER_CHARS or not value.isprintable()):
                msg = f"{name} must be a name of at most {MAX_FILTER_CHARS} printable characters"
                raise ValueError(msg)
            filters[name] = value
        return cls(since=since, until=until, agent=filters["agent"], tool=filters["tool"])
