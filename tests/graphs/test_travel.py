"""The `travel` agent in-process: search, the flight-booking form from a subagent, cancellations."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agents.offline import phrases

BUSINESS_WITH_INSURANCE = {"decision": "approve", "seat_class": "business", "insurance": True}


def only_interrupt(result):
    assert len(result.interrupts) == 1
    return result.interrupts[0]


def test_search_lists_flights_cheapest_first_without_a_pause(travel_agent, services):
    """search_flights is never gated: the answer lists the four seeded flights, cheapest first."""
    chat = travel_agent()
    assert chat.say(phrases.FIND_FLIGHT).interrupts == ()
    words = chat.last_words()
    assert words.startswith("Flights from Berlin to Lisbon on 2026-12-18: FR8364")
    assert [words.index(f) for f in ("FR8364", "U25721", "TP541", "LH1166")] == sorted(
        words.index(f) for f in ("FR8364", "U25721", "TP541", "LH1166")
    )
    assert services.bookings.count() == 0


def test_the_form_comes_from_the_booking_agent_and_books_once(travel_agent, services):
    """form: booking_agent asks with the flight's context and a schema; the answer books exactly once."""
    chat = travel_agent()
    form = only_interrupt(chat.say(phrases.FIND_AND_BOOK_CHEAPEST))
    assert {k: form.value[k] for k in ("type", "form", "agent")} == {
        "type": "form",
        "form": "flight-booking",
        "agent": "booking_agent",
    }
    assert form.value["context"] == {
        "flight_id": "FR8364",
        "origin": "Berlin",
        "destination": "Lisbon",
        "date": "2026-12-18",
        "price": 89.0,
    }
    assert form.value["title"] == (
        "Book Berlin → Lisbon on 2026-12-18 (economy 89, premium 142.4, business 222.5; insurance +12)"
    )
    assert form.response_schema["properties"]["seat_class"]["enum"] == ["economy", "premium", "business"]
    assert services.bookings.count() == 0

    chat.resume({form.id: BUSINESS_WITH_INSURANCE})

    [booking] = services.bookings.for_flight("FR8364")
    assert (booking["seat_class"], booking["insurance"], booking["status"]) == ("business", True, "confirmed")
    assert booking["tool_call_id"] == form.value["tool_call_id"]
    assert booking["price"] == 234.5  # 89 x 2.5 for business, + 12 for insurance
    assert f"Booked FR8364 in business with travel insurance for 234.5 (booking {booking['booking_id']})" in (
        chat.last_words()
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"decision": "approve", "seat_class": "first"},
        {"decision": "maybe"},
        {"decision": "approve", "insurance": "yes"},
        {"decision": "approve", "meal": "vegan"},
        {"seat_class": "economy"},
    ],
)
def test_a_wrong_answer_is_refused_and_the_form_stays_answerable(travel_agent, services, bad):
    """response_schema: an unknown seat class (or decision, or field) is refused before it is saved."""
    chat = travel_agent()
    form = only_interrupt(chat.say(phrases.FIND_AND_BOOK_CHEAPEST))
    with pytest.raises(ValidationError):
        chat.resume({form.id: bad})
    assert [i.id for i in chat.pending()] == [form.id]
    assert services.bookings.count() == 0

    chat.resume({form.id: {"decision": "approve"}})
    assert [b["seat_class"] for b in services.bookings.for_flight("FR8364")] == ["economy"]


def test_cancel_books_nothing(travel_agent, services):
    """cancel: no booking row, and the traveller hears that nothing was booked."""
    chat = travel_agent()
    form = only_interrupt(chat.say(phrases.FIND_AND_BOOK_CHEAPEST))
    chat.resume({form.id: {"decision": "cancel"}})
    assert services.bookings.count() == 0
    assert "Nothing booked" in chat.last_words()


def test_the_form_tool_runs_twice_but_books_once(travel_agent, services):
    """Side effects: book_flight runs before the form and again on resume; one row, even on a replay."""
    chat = travel_agent()
    form = only_interrupt(chat.say(phrases.FIND_AND_BOOK_CHEAPEST))
    assert services.bookings.count() == 0
    chat.resume({form.id: {"decision": "approve"}})
    assert services.bookings.count() == 1
    chat.resume({form.id: {"decision": "approve"}})
    again = services.bookings.book(
        tool_call_id=form.value["tool_call_id"], flight_id="FR8364", seat_class="premium", insurance=False
    )
    assert services.bookings.count() == 1
    assert again["seat_class"] == "economy"


def test_earliest_picks_the_first_departure(travel_agent):
    """choice: 'the earliest one' books TP541 (06:50), not the cheapest."""
    form = only_interrupt(
        travel_agent().say(phrases.find_and_book("Berlin", "Lisbon", "2026-12-18", "the earliest one"))
    )
    assert form.value["context"]["flight_id"] == "TP541"


def test_book_without_a_route_asks_for_one(travel_agent, services):
    """'Book the cheapest one' as a first message: no search to book from, so it asks for the trip."""
    chat = travel_agent()
    assert chat.say(phrases.BOOK_CHEAPEST).interrupts == ()
    assert "Which trip?" in chat.last_words()
    assert services.bookings.count() == 0


def test_book_the_cheapest_one_after_a_search_in_an_earlier_turn(travel_agent, services):
    """two turns: 'Find me a flight ...' lists flights; 'Book the cheapest one' books from that search."""
    chat = travel_agent()
    assert chat.say(phrases.FIND_FLIGHT).interrupts == ()
    assert "Flights from Berlin to Lisbon on 2026-12-18" in chat.last_words()
    form = only_interrupt(chat.say(phrases.BOOK_CHEAPEST))
    assert (form.value["type"], form.value["agent"]) == ("form", "booking_agent")
    assert form.value["context"]["origin"] == "Berlin"
    assert services.bookings.count() == 0


@pytest.mark.parametrize(
    ("decision", "status"), [({"type": "approve"}, "cancelled"), ({"type": "reject"}, "confirmed")]
)
def test_cancel_booking_waits_for_a_reviewer(travel_agent, services, decision, status):
    """cancel_booking: batched approve/reject only; approve cancels once, reject leaves it confirmed."""
    booking = services.bookings.book(
        tool_call_id="seed", flight_id="LH1166", seat_class="economy", insurance=False
    )
    chat = travel_agent()
    pending = only_interrupt(chat.say(phrases.cancel_booking(booking["booking_id"])))
    assert pending.value["agent"] == "travel"
    assert pending.value["review_configs"][0]["allowed_decisions"] == ["approve", "reject"]
    assert services.bookings.get(booking["booking_id"])["status"] == "confirmed"
    chat.resume({"decisions": [decision]})
    assert services.bookings.get(booking["booking_id"])["status"] == status


def test_the_form_survives_a_json_round_trip(travel_agent):
    """contracts: the form value and its schema are plain JSON."""
    form = only_interrupt(travel_agent().say(phrases.FIND_AND_BOOK_CHEAPEST))
    assert json.loads(json.dumps(form.value)) == form.value
    assert json.loads(json.dumps(form.response_schema)) == form.response_schema
