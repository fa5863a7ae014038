"""The flight-booking form in the browser: rendered from its schema, answered by the traveller."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from hitl.scripted import phrases

pytestmark = pytest.mark.server


async def test_the_traveller_answers_the_flight_form_and_the_flight_is_booked_once(web, server_services):
    """form: booking_agent's form offers the schema's choices; premium with insurance is booked once."""
    tab = await web.sign_in("requester1")
    await tab.start(phrases.FIND_AND_BOOK_CHEAPEST, agent="travel")
    form = tab.pending("form")
    await expect(form.get_by_test_id("card-agent")).to_have_text("asked by booking_agent")
    await expect(form.get_by_test_id("form-context")).to_contain_text('"flight_id": "FR8364"')
    seat = form.get_by_label("Seat Class")
    await expect(seat.locator("option")).to_have_text(["economy", "premium", "business"])

    await form.get_by_label("Decision").select_option(label="approve")
    await seat.select_option(label="premium")
    await form.get_by_label("Insurance").check()
    await form.get_by_test_id("form-submit").click()

    receipt = tab.receipts("flight-booking")
    await expect(receipt).to_have_attribute("data-decision", "approve")
    await expect(receipt.get_by_test_id("receipt-reviewer")).to_contain_text("by requester1")
    await expect(tab.pending()).to_have_count(0)
    await expect(tab.tool_result("task")).to_have_count(1)  # booking_agent reported back: the run went on
    tool_call_id = await receipt.get_attribute("data-tool-call-id")
    booked = [b for b in server_services.bookings.for_flight("FR8364") if b["tool_call_id"] == tool_call_id]
    assert [(b["seat_class"], b["insurance"]) for b in booked] == [("premium", True)]
    await expect(tab.messages("ai").last).to_contain_text(booked[0]["booking_id"])
