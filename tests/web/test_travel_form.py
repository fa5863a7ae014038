"""The flight-booking form in the browser: a flight card with choices in words, answered by the traveller."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from agents.offline import phrases

pytestmark = pytest.mark.server


async def test_the_traveller_answers_the_flight_form_and_the_flight_is_booked_once(web, server_services):
    """form: booking_agent's flight card; premium with insurance is booked once.

    Book / don't book, seat class and insurance are radio buttons labelled in words.
    """
    tab = await web.sign_in("requester1")
    await tab.start(phrases.FIND_AND_BOOK_CHEAPEST, agent="travel")
    form = tab.pending("form")
    await expect(form.get_by_test_id("card-agent")).to_have_text("asked by booking_agent")
    await expect(form.get_by_test_id("flight-id")).to_have_text("FR8364")
    await expect(form.get_by_role("group", name="Book this flight?").get_by_role("radio")).to_have_count(2)
    seats = form.get_by_role("group", name="Seat class").get_by_role("radio")
    await expect(seats).to_have_count(3)
    for label in ("Economy", "Premium economy", "Business", "No insurance", "Add travel insurance"):
        await expect(form.get_by_role("radio", name=label, exact=True)).to_be_visible()
    # labels in words: no schema class names, no code formatting, no select boxes
    await expect(form).not_to_contain_text(re.compile(r"FlightBooking|seat_class|`"))
    await expect(form.locator("code, select")).to_have_count(0)
    await expect(form.get_by_test_id("form-submit")).to_be_disabled()  # nothing is booked by default

    await form.get_by_role("radio", name="Book it").check()
    await form.get_by_role("radio", name="Premium economy").check()
    await form.get_by_role("radio", name="Add travel insurance").check()
    await form.get_by_test_id("form-submit").click()

    receipt = tab.receipts("flight-booking")
    await expect(receipt).to_have_attribute("data-decision", "approve")
    await expect(receipt.get_by_test_id("receipt-reviewer")).to_contain_text("by requester1")
    await expect(tab.pending()).to_have_count(0)
    await expect(tab.tool_result("task")).to_have_count(1)  # booking_agent reported back: the run went on
    await expect(tab.subagent("booking_agent")).to_have_attribute("data-status", "done")
    tool_call_id = await receipt.get_attribute("data-tool-call-id")
    booked = [b for b in server_services.bookings.for_flight("FR8364") if b["tool_call_id"] == tool_call_id]
    assert [(b["seat_class"], b["insurance"]) for b in booked] == [("premium", True)]
    await expect(tab.messages("ai").last).to_contain_text(booked[0]["booking_id"])


async def test_dont_book_books_nothing(web, server_services):
    """form: "Don't book" sends a cancel; the receipt says so and no booking is made for this call."""
    tab = await web.sign_in("requester1")
    await tab.start(phrases.FIND_AND_BOOK_CHEAPEST, agent="travel")
    form = tab.pending("form")
    await form.get_by_role("radio", name="Don't book").check()
    await expect(form.get_by_role("radio", name="Business")).to_be_disabled()
    await form.get_by_test_id("form-submit").click()

    receipt = tab.receipts("flight-booking")
    await expect(receipt).to_be_visible()
    await expect(tab.pending()).to_have_count(0)
    tool_call_id = await receipt.get_attribute("data-tool-call-id")
    booked = server_services.bookings.for_flight("FR8364")
    assert [b for b in booked if b["tool_call_id"] == tool_call_id] == []
