"""Travel tools: search flights, book one through a form the person fills in, cancel a booking.

A booking belongs to the person who books it; a traveller cancels only their own
(`tools.owners`), staff any. The price follows the seat class and insurance chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.types import interrupt
from pydantic import BaseModel, Field

from services.flights import fare_list
from tools.asking import asking_agent
from tools.owners import acting_person, records_owner
from tools.results import as_json, refusals_as_tool_errors
from tools.travel_forms import FORM, FlightBookingAnswer, FlightBookingForm, FlightContext

if TYPE_CHECKING:
    from collections.abc import Callable

    from services.registry import Services


class FlightSearch(BaseModel):
    """Arguments of `search_flights`."""

    origin: str = Field(description="City of departure, e.g. Berlin.")
    destination: str = Field(description="City of arrival, e.g. Lisbon.")
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="Day of travel, YYYY-MM-DD.")


class FlightChoice(BaseModel):
    """Arguments of `book_flight`."""

    flight_id: str = Field(description="Flight id from search_flights, e.g. FR8364.")
    tool_call_id: Annotated[str, InjectedToolCallId]


class BookingCancellation(BaseModel):
    """Arguments of `cancel_booking`."""

    booking_id: str = Field(description="Booking id, e.g. BK-1A2B3C4D.")
    tool_call_id: Annotated[str, InjectedToolCallId]


def build_travel_tools(services: Callable[[], Services]) -> list[BaseTool]:
    """Every travel tool, acting on the services `services()` returns when they run."""

    @tool(args_schema=FlightSearch)
    def search_flights(origin: str, destination: str, date: str) -> str:
        """Find flights from one city to another on a day, cheapest first."""
        found = services().timetable.search(origin=origin, destination=destination, date=date)
        return as_json({"flights": found})

    @tool(args_schema=FlightChoice)
    @refusals_as_tool_errors
    def book_flight(flight_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Book a flight: the person chooses seat class and insurance, and confirms or cancels."""
        flight = services().timetable.get(flight_id)  # a read: nothing may change before the form
        form = FlightBookingForm(
            type="form",
            form=FORM,
            title=(
                f"Book {flight['origin']} → {flight['destination']} on {flight['date']} "
                f"({fare_list(flight['price'])})"
            ),
            context=FlightContext(
                flight_id=flight_id,
                origin=flight["origin"],
                destination=flight["destination"],
                date=flight["date"],
                price=flight["price"],
            ),
            agent=asking_agent(default="booking_agent"),
            tool_call_id=tool_call_id,
        )
        answer = interrupt(form, response_schema=FlightBookingAnswer)
        if answer.decision == "cancel":
            return as_json({"booked": False, "flight_id": flight_id})
        booking = services().bookings.book(
            tool_call_id=tool_call_id,
            flight_id=flight_id,
            seat_class=answer.seat_class,
            insurance=answer.insurance,
            owner=acting_person(),
        )
        return as_json(
            {
                "booked": True,
                "booking_id": booking["booking_id"],
                "flight_id": flight_id,
                "seat_class": booking["seat_class"],
                "insurance": booking["insurance"],
                "price": booking["price"],
            }
        )

    @tool(args_schema=BookingCancellation)
    @refusals_as_tool_errors
    def cancel_booking(booking_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Cancel a flight booking."""
        booking = services().bookings.cancel(
            tool_call_id=tool_call_id, booking_id=booking_id, owner=records_owner()
        )
        return as_json({"cancelled": True, "booking_id": booking["booking_id"]})

    tools: list[BaseTool] = [search_flights, book_flight, cancel_booking]
    for each in tools:
        each.handle_tool_error = True
    return tools
