"""The flight-booking form `book_flight` raises: what it shows, and the answer it takes.

Registered with the approval layer by name (`hitl.contracts.forms`), so the server checks an answer
before it is saved and `make schemas` publishes both types for the web app's flight card.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from hitl.contracts.forms import register_form

FORM: Literal["flight-booking"] = "flight-booking"


class FlightContext(TypedDict):
    """What the person books: the flight as the timetable has it (price is the economy fare)."""

    flight_id: str
    origin: str
    destination: str
    date: str
    price: float


class FlightBookingForm(TypedDict):
    """A form `book_flight` raises itself; answered by interrupt id with a `FlightBookingAnswer`."""

    type: Literal["form"]
    form: Literal["flight-booking"]
    title: str
    context: FlightContext
    agent: str
    tool_call_id: str


SeatClass = Literal["economy", "premium", "business"]


class FlightBookingAnswer(BaseModel):
    """The answer to a `FlightBookingForm`: book it (with these options) or cancel."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "cancel"] = Field(description="Book the flight, or book nothing.")
    seat_class: SeatClass = Field(default="economy", description="Cabin to book.")
    insurance: bool = Field(default=False, strict=True, description="Add travel insurance.")


register_form(FORM, FlightBookingAnswer, FlightBookingForm)
