"""Who reviews what in travel: cancelling a booking. Booking itself asks through its own form."""

from __future__ import annotations

from hitl.policy import Policy, ToolGate


def travel_policy() -> Policy:
    """The `travel` agent's policy: a reviewer approves or rejects every cancellation."""
    return {
        "cancel_booking": ToolGate(
            allowed_decisions=("approve", "reject"),
            description=lambda _n, a: f"Cancel booking {a['booking_id']}",
        ),
    }


def booking_agent_policy() -> Policy:
    """The `booking_agent` subagent gates nothing by policy: `book_flight` raises its own form."""
    return {}
