"""The scripted travel behaviour: search a route, book a flight through the booking agent, cancel.

"Book the cheapest one" books from the route in the same message or, failing that, from
the latest search in an earlier turn of the same thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hitl.model.scripted.script import Call, Reply
from hitl.model.scripted.wording import MONTHS, find_date

if TYPE_CHECKING:
    from hitl.model.scripted.conversation import Conversation, ToolResult

TRAVEL_TOOLS = frozenset({"search_flights", "book_flight", "cancel_booking"})
FILLER = (
    r"(?:a|an|the|me|my|any|find|search|show|look|book|reserve|flights?|cheapest|earliest|first|one|"
    r"fly|flies|go|get|travel|trip|want|need|like|to|from|on|for|and|what|is|are|there|i|i'd|please|"
    + "|".join(MONTHS)
    + ")"
)
CITY = rf"(?!{FILLER}\b)[^\W\d_][\w'-]*(?:\s+(?!{FILLER}\b)[^\W\d_][\w'-]*)?"
TO = r"(?:\s+to\s+|\s*(?:->|→|\u2013|\u2014)\s*)"
"""'X to Y', 'X -> Y', 'X → Y', or an en or em dash between the cities."""
ROUTE = re.compile(rf"\bfrom\s+(?P<origin>{CITY}){TO}(?P<destination>{CITY})\b", re.IGNORECASE)
BARE_ROUTE = re.compile(rf"\b(?P<origin>{CITY}){TO}(?P<destination>{CITY})\b", re.IGNORECASE)
BOOK = re.compile(r"\b(book|reserve)\b", re.IGNORECASE)
EARLIEST = re.compile(r"\b(earliest|first)\b", re.IGNORECASE)
FLIGHT_ID = re.compile(r"\b([A-Z][A-Z0-9]\d{3,4})\b")
BOOKING_ID = re.compile(r"\b(BK-[A-Z0-9]+)\b", re.IGNORECASE)
CANCEL = re.compile(r"\bcancel\b", re.IGNORECASE)
ASK_FOR_ROUTE = (
    "Which trip? Tell me the route and the day first, e.g. "
    "'Find me a flight from Berlin to Lisbon on 2026-12-18'."
)
HELP = (
    "I search and book flights. Try 'Find me a flight from Berlin to Lisbon on 2026-12-18', "
    "add 'and book the cheapest one', or 'Cancel booking BK-…'."
)


@dataclass(frozen=True)
class TravelRequest:
    """What a travel request asks for, read from its words."""

    route: dict[str, str] | None
    book: bool
    earliest: bool
    flight_id: str | None
    cancel_id: str | None

    @classmethod
    def read(cls, text: str) -> TravelRequest:
        """Parse a request such as 'Find me a flight from Berlin to Lisbon on 2026-12-18'."""
        route = ROUTE.search(text) or BARE_ROUTE.search(text)
        day = find_date(text)
        flight = FLIGHT_ID.search(text)
        booking = BOOKING_ID.search(text)
        return cls(
            route=(
                {
                    "origin": route["origin"].title(),
                    "destination": route["destination"].title(),
                    "date": day,
                }
                if route and day
                else None
            ),
            book=bool(BOOK.search(text)),
            earliest=bool(EARLIEST.search(text)),
            flight_id=flight.group(1) if flight and not booking else None,
            cancel_id=booking.group(1).upper() if booking and CANCEL.search(text) else None,
        )


def travel_script(chat: Conversation) -> Reply | None:  # noqa: PLR0911  (one return per kind of request)
    """Answer a travel request, one step per model call."""
    if not chat.tools & TRAVEL_TOOLS:
        return None
    request = TravelRequest.read(chat.request)
    if "book_flight" in chat.tools and request.flight_id:
        return _book(chat, request.flight_id)
    if "cancel_booking" in chat.tools and request.cancel_id:
        return _cancel(chat, request.cancel_id)
    if request.route is not None and "search_flights" in chat.tools:
        return _search_then_book(chat, request, request.route)
    if request.book and request.flight_id and "task" in chat.tools:
        return _delegate(chat, f"Book flight {request.flight_id}.")
    earlier = chat.previous("search_flights")
    if request.book and earlier is not None and earlier.ok and "search_flights" in chat.tools:
        route: dict[str, str] = {
            k: str(earlier.args[k]) for k in ("origin", "destination", "date") if k in earlier.args
        }
        if len(route) == 3:  # noqa: PLR2004  (origin, destination, date)
            return _search_then_book(chat, request, route, earlier)
    return ASK_FOR_ROUTE if request.book else HELP


def _search_then_book(
    chat: Conversation, request: TravelRequest, route: dict[str, str], earlier: ToolResult | None = None
) -> Reply:
    found = earlier or chat.last("search_flights")
    if found is None:
        return [Call("search_flights", dict(route))]
    if not found.ok:
        return f"I could not search flights: {found.content}"
    trip = f"{route['origin']} to {route['destination']} on {route['date']}"
    flights: list[dict[str, Any]] = (found.data or {}).get("flights", [])
    if not flights:
        return f"There are no flights from {trip}."
    if not request.book:
        listed = "; ".join(
            f"{f['flight_id']} ({f['carrier']}, {f['departs']}) {f['price']:g}" for f in flights
        )
        return f"Flights from {trip}: {listed}."
    key = "departs" if request.earliest else "price"
    chosen = min(flights, key=lambda f: f[key])
    if "task" not in chat.tools:
        return f"{chosen['flight_id']} is the one to book, but I cannot book flights myself."
    return _delegate(chat, f"Book flight {chosen['flight_id']} ({trip}, {chosen['price']:g}).")


def _delegate(chat: Conversation, task: str) -> Reply:
    done = chat.last("task")
    if done is None:
        return [Call("task", {"description": task, "subagent_type": "booking_agent"})]
    return f"The booking agent reports: {done.content}"


def _book(chat: Conversation, flight_id: str) -> Reply:
    result = chat.last("book_flight")
    if result is None:
        return [Call("book_flight", {"flight_id": flight_id})]
    if not result.ok:
        return f"I could not book {flight_id}: {result.content}"
    data = result.data
    if data is None:
        return f"On flight {flight_id} the reviewer answered: {result.content}"
    if not data["booked"]:
        return f"Nothing booked: the traveller cancelled the booking of {flight_id}."
    extras = " with travel insurance" if data["insurance"] else ""
    return (
        f"Booked {flight_id} in {data['seat_class']}{extras} for {data['price']:g} "
        f"(booking {data['booking_id']})."
    )


def _cancel(chat: Conversation, booking_id: str) -> Reply:
    result = chat.last("cancel_booking")
    if result is None:
        return [Call("cancel_booking", {"booking_id": booking_id})]
    if not result.ok:
        return f"I did not cancel booking {booking_id}. {result.content}"
    return f"Cancelled booking {booking_id}."
