"""Approval deadlines: how long a pending approval may wait and what happens when it has waited.

Policy data only. The gate stamps the deadline into the interrupt value; the server's
watcher (`server/coordination/watcher.py`) acts on it: reject, or escalate to the next role up.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

Expiry = Literal["reject", "escalate"]
ESCALATES_TO = "supervisor"


@dataclass(frozen=True)
class Deadline:
    """Wait at most `after_seconds`; then `then`. An escalation waits `escalated_seconds` more."""

    after_seconds: float
    then: Expiry = "reject"
    escalated_seconds: float | None = None

    def __post_init__(self) -> None:
        """Refuse a deadline that cannot be met or an escalation with no deadline of its own."""
        if self.after_seconds <= 0:
            msg = f"a deadline must be in the future (got {self.after_seconds} s)"
            raise ValueError(msg)
        if self.then == "escalate" and not self.escalated_seconds:
            msg = "an escalating deadline needs escalated_seconds (when the escalation itself expires)"
            raise ValueError(msg)

    def stamp(self, now: datetime | None = None) -> dict[str, Any]:
        """The fields an interrupt value carries: `deadline` (ISO time), `on_expiry`, `escalated_seconds`."""
        start = now or datetime.now(UTC)
        return {
            "deadline": (start + timedelta(seconds=self.after_seconds)).isoformat(),
            "on_expiry": self.then,
            "escalated_seconds": self.escalated_seconds,
        }


def earliest(stamps: list[dict[str, Any]]) -> dict[str, Any]:
    """The stamp that expires first (a batch expires with its most urgent call); {} for none."""
    return min(stamps, key=lambda s: s["deadline"]) if stamps else {}
