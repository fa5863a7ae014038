"""Approval deadlines: how long a pending approval may wait and what happens when it has waited.

Policy data only. The gate stamps the deadline into the interrupt value; the server's
watcher (`server/coordination/watcher.py`) acts on it: reject, or escalate to a supervisor (or the
group the deadline names: `escalate_to="finance-leads"`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from hitl.contracts.interrupts import ESCALATES_TO, OWNER
from hitl.policy.groups import check_decider, is_decider

Expiry = Literal["reject", "escalate"]


@dataclass(frozen=True)
class Deadline:
    """Wait at most `after_seconds`; then `then`. Escalated, `escalate_to` has `escalated_seconds` more."""

    after_seconds: float
    then: Expiry = "reject"
    escalated_seconds: float | None = None
    escalate_to: str = ESCALATES_TO

    def __post_init__(self) -> None:
        """Refuse a deadline that cannot be met or an escalation with no deadline of its own."""
        if self.after_seconds <= 0:
            msg = f"a deadline must be in the future (got {self.after_seconds} s)"
            raise ValueError(msg)
        if self.then == "escalate" and not self.escalated_seconds:
            msg = "an escalating deadline needs escalated_seconds (when the escalation itself expires)"
            raise ValueError(msg)
        if check_decider("Deadline escalate_to", self.escalate_to) == OWNER:
            msg = "Deadline escalate_to names 'owner': an escalation goes to a group (e.g. 'supervisor')"
            raise ValueError(msg)

    def stamp(self, now: datetime | None = None) -> dict[str, Any]:
        """The fields an interrupt value carries: `deadline` (ISO time), `on_expiry`, `escalated_seconds`.

        And `escalate_to` when it is not a supervisor (the watcher's default: `escalates_to`).
        """
        start = now or datetime.now(UTC)
        stamp: dict[str, Any] = {
            "deadline": (start + timedelta(seconds=self.after_seconds)).isoformat(),
            "on_expiry": self.then,
            "escalated_seconds": self.escalated_seconds,
        }
        if self.escalate_to != ESCALATES_TO:
            stamp["escalate_to"] = self.escalate_to
        return stamp


def escalates_to(value: object) -> str:
    """Who an escalation of the interrupt `value` goes to: its stamped group, else a supervisor."""
    target = value.get("escalate_to") if isinstance(value, dict) else None
    return target if isinstance(target, str) and target != OWNER and is_decider(target) else ESCALATES_TO


def earliest(stamps: list[dict[str, Any]]) -> dict[str, Any]:
    """The stamp that expires first (a batch expires with its most urgent call); {} for none."""
    return min(stamps, key=lambda s: s["deadline"]) if stamps else {}
