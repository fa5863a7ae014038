"""The `travel` agent through the real `langgraph dev`: the flight-booking form from a subagent.

The traveller (the thread's owner, `requester`) answers the form; reviewers answer tool approvals.
"""

from __future__ import annotations

import uuid

import httpx
import pytest

from agents.offline import phrases
from tests.server.helpers import only_pending, start

pytestmark = pytest.mark.server

AGENT = "travel"


async def form_thread(requester) -> tuple[str, dict]:
    """A thread waiting on the flight-booking form for the cheapest Berlin-Lisbon flight."""
    thread_id, thread = await start(requester, phrases.FIND_AND_BOOK_CHEAPEST, AGENT)
    assert thread["status"] == "interrupted"
    return thread_id, only_pending(thread)


def booked(server_services, tool_call_id: str) -> list[dict]:
    return [b for b in server_services.bookings.for_flight("FR8364") if b["tool_call_id"] == tool_call_id]


async def test_the_form_appears_with_its_schema_and_books_once(requester, server_services):
    """form: threads.get shows booking_agent's form and schema; the owner's answer books exactly once."""
    thread_id, form = await form_thread(requester)
    value = form["value"]
    assert (value["type"], value["form"], value["agent"]) == ("form", "flight-booking", "booking_agent")
    assert value["context"]["flight_id"] == "FR8364"
    assert value["context"]["price"] == 89.0
    schema = form["response_schema"]
    assert schema["properties"]["seat_class"]["enum"] == ["economy", "premium", "business"]
    assert schema["properties"]["decision"]["enum"] == ["approve", "cancel"]
    assert booked(server_services, value["tool_call_id"]) == []

    answer = {"decision": "approve", "seat_class": "premium", "insurance": True}
    result = await requester.runs.wait(thread_id, AGENT, command={"resume": {form["id"]: answer}})

    [booking] = booked(server_services, value["tool_call_id"])
    assert (booking["seat_class"], booking["insurance"]) == ("premium", True)
    assert f"booking {booking['booking_id']}" in result["messages"][-1]["content"]
    assert (await requester.threads.get(thread_id))["status"] == "idle"


async def test_an_unknown_seat_class_is_refused_and_the_form_stays_pending(requester, server_services):
    """response_schema: 'first' is refused with a 4xx before anything is saved; the form stays answerable."""
    thread_id, form = await form_thread(requester)
    bad = {"decision": "approve", "seat_class": "first", "insurance": False}

    with pytest.raises(httpx.HTTPStatusError) as refusal:
        await requester.runs.wait(thread_id, AGENT, command={"resume": {form["id"]: bad}})
    assert 400 <= refusal.value.response.status_code < 500
    assert booked(server_services, form["value"]["tool_call_id"]) == []
    assert only_pending(await requester.threads.get(thread_id))["id"] == form["id"]

    await requester.runs.wait(thread_id, AGENT, command={"resume": {form["id"]: {"decision": "approve"}}})
    assert [b["seat_class"] for b in booked(server_services, form["value"]["tool_call_id"])] == ["economy"]


async def test_cancel_books_nothing(requester, server_services):
    """cancel: the run finishes, no booking row exists for the call, and the answer says so."""
    thread_id, form = await form_thread(requester)
    result = await requester.runs.wait(
        thread_id, AGENT, command={"resume": {form["id"]: {"decision": "cancel"}}}
    )
    assert booked(server_services, form["value"]["tool_call_id"]) == []
    assert "Nothing booked" in result["messages"][-1]["content"]


async def test_a_reviewer_approves_a_cancellation(requester, reviewer, server_services):
    """cancel_booking: batched approve/reject; the reviewer's approve cancels the traveller's booking once."""
    booking = server_services.bookings.book(
        tool_call_id=f"seed-{uuid.uuid4()}",
        flight_id="LH1166",
        seat_class="economy",
        insurance=False,
        owner="requester1",
    )
    thread_id, thread = await start(requester, phrases.cancel_booking(booking["booking_id"]), AGENT)
    pending = only_pending(thread)["value"]
    assert (pending["action_requests"][0]["name"], pending["agent"]) == ("cancel_booking", "travel")
    await reviewer.runs.wait(thread_id, AGENT, command={"resume": {"decisions": [{"type": "approve"}]}})
    assert server_services.bookings.get(booking["booking_id"])["status"] == "cancelled"
