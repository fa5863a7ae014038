"""Times a client sends in a query (`/inbox?deadline_before=`, `/analytics?since=&until=`), read once.

`instant` is the one reader of them all: ISO 8601 (a time with a zone, or also a date or a zoneless
time read as UTC, as the parameter allows), or a duration back from now where allowed (`90m`, `24h`,
`7d`, `4w`), returned in UTC. What it cannot read, and a time no UTC clock can hold
(`9999-12-31T23:59:59-14:00` is past year 9999 in UTC), is a `ValueError` naming the parameter, which
the routes answer with 400. Not for times the server wrote itself (`utc_stamp`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

MAX_CHARS = 40
"""No ISO 8601 time is longer; a longer value is refused unread."""
DURATION = re.compile(r"(\d{1,4})([mhdw])")
UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)


def instant(name: str, raw: str | None, *, zoned: bool, now: datetime | None = None) -> datetime | None:
    """The time parameter `name` says, in UTC; None when it is empty.

    Args:
        name: the parameter, for the message.
        raw: what the client sent.
        zoned: only a time with a zone (`2026-01-31T17:00Z`); else a date or a zoneless time is UTC.
        now: when given, a duration back from it (`24h`) is read too.

    Raises:
        ValueError: naming `name`, what it must be and what was sent.
    """
    if not raw:
        return None
    if now is not None and (match := DURATION.fullmatch(raw)):
        return now - timedelta(**{UNITS[match.group(2)]: int(match.group(1))})
    try:
        moment = datetime.fromisoformat(raw) if len(raw) <= MAX_CHARS else None
    except ValueError:
        moment = None
    if moment is None or (zoned and ("T" not in raw or moment.tzinfo is None)):
        raise ValueError(_expected(name, raw, zoned=zoned, durations=now is not None))
    try:
        return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    except OverflowError:  # 0001-01-01T00:00+14:00 is before year 1 in UTC
        msg = f"{name} must lie between {_shown(EARLIEST)} and {_shown(LATEST)} in UTC (got {raw!r})"
        raise ValueError(msg) from None


def _expected(name: str, raw: str, *, zoned: bool, durations: bool) -> str:
    """`name` must be ..., in words, with the first 40 characters of what was sent."""
    if zoned:
        what = "an ISO 8601 time with a zone, as 2026-01-31T17:00Z"
    elif durations:
        what = "an ISO 8601 time or date, or a duration such as 24h or 7d"
    else:
        what = "an ISO 8601 time or date"
    return f"{name} must be {what} (got {raw[:MAX_CHARS]!r})"


def _shown(moment: datetime) -> str:
    """`moment` to the minute, as 0001-01-01T00:00Z (`strftime` drops a year's leading zeros)."""
    return moment.isoformat(timespec="minutes").replace("+00:00", "Z")
