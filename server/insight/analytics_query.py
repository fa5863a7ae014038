"""What an analytics request asks: a period (absolute or relative), an agent, a tool, and the thresholds.

`AnalyticsQuery.from_params` reads `GET /analytics?since=&until=&agent=&tool=` and refuses what it
cannot read with words naming the parameter; `Thresholds` say where a pattern becomes a signal.
Pure. Not for computing the numbers (`analytics`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


DEFAULT_PERIOD = timedelta(days=30)


MAX_FILTER_CHARS = 200


RELATIVE = re.compile(r"^(\d{1,4})([mhdw])$")


UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


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
        until = _moment("until", params.get("until"), now) or now
        since = _moment("since", params.get("since"), now) or until - DEFAULT_PERIOD
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


def _moment(name: str, raw: str | None, now: datetime) -> datetime | None:
    if not raw:
        return None
    if match := RELATIVE.match(raw):
        return now - timedelta(**{UNITS[match.group(2)]: int(match.group(1))})
    try:
        moment = datetime.fromisoformat(raw) if len(raw) <= 40 else None  # noqa: PLR2004  (no ISO time is longer)
    except ValueError:
        moment = None
    if moment is None:
        msg = f"{name} must be an ISO 8601 time or date, or a duration such as 24h or 7d (got {raw[:40]!r})"
        raise ValueError(msg)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
