"""Who reviews what in travel: cancelling a booking. Booking itself asks through its own form."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hitl.policy.gates import Policy, ToolGate
from tools.owners import records_owner

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from hitl.policy.gates import Describer
    from services.registry import Services


def describe_cancellation(services: Callable[[], Services] | None = None) -> Describer:
    """'Cancel booking BK-1A2B3C4D of traveller requester2 (FR8364 Berlin → Lisbon on 2026-12-18, ...)'.

    The booking is looked up as the caller may see it: a traveller's run never names another
    traveller, and a booking that exists but is not the caller's says so ('(not a booking of
    requester1)'), for the reviewer to refuse. If the lookup fails for any other reason the
    text is built from the call alone, so describing a cancellation never fails the run.
    """

    def describe(_name: str, args: Mapping[str, Any]) -> str:
        head = f"Cancel booking {args['booking_id']}"
        if services is None:
            return head
        owner: str | None = None
        try:
            owner = records_owner()
            booking = services().bookings.get(str(args["booking_id"]), owner=owner)
            flight = services().timetable.get(booking["flight_id"])
        except Exception:  # noqa: BLE001  (any lookup failure, a run naming nobody too: the call's args)
            return f"{head} (not a booking of {owner})" if owner and _exists(services, args) else head
        traveller = booking["owner"] or "unknown"
        insured = ", insured" if booking["insurance"] else ""
        return (
            f"{head} of traveller {traveller} ({flight['flight_id']} {flight['origin']} → "
            f"{flight['destination']} on {flight['date']}, {booking['seat_class']}{insured}, "
            f"paid {float(booking['price']):g}, {booking['status']})"
        )

    return describe


def _exists(services: Callable[[], Services], args: Mapping[str, Any]) -> bool:
    try:
        return bool(services().bookings.get(str(args["booking_id"])))
    except Exception:  # noqa: BLE001  (any lookup failure: as if there were no such booking)
        return False


def travel_policy(services: Callable[[], Services] | None = None) -> Policy:
    """The `travel` agent's policy: a reviewer approves or rejects every cancellation.

    `services` lets the review text name the booking's traveller and flight.
    """
    return {
        "cancel_booking": ToolGate(
            allowed_decisions=("approve", "reject"),
            description=describe_cancellation(services),
        ),
    }


def booking_agent_policy() -> Policy:
    """The `booking_agent` subagent gates nothing by policy: `book_flight` raises its own form."""
    return {}
