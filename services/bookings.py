"""Flight bookings: written once per tool call, cancelled at most once, owned by their traveller.

A resumed tool runs again from its top, so `book` and `cancel` look for the row their
tool call already wrote before writing anything. Each booking records its traveller
(`owner`); a call made for a traveller (`owner=`) sees and cancels only theirs.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError

from services.database import bookings, flights
from services.errors import BusinessRuleError
from services.flights import fare

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine


class Booking(TypedDict):
    """A bookings row."""

    booking_id: str
    tool_call_id: str
    flight_id: str
    seat_class: str
    insurance: bool
    price: float
    status: str
    cancelled_by: str | None
    created_at: str
    owner: str | None


class Bookings:
    """Books and cancels flights in the business database."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def book(
        self, *, tool_call_id: str, flight_id: str, seat_class: str, insurance: bool, owner: str | None = None
    ) -> Booking:
        """Book `flight_id` for the traveller `owner` once; a replay of the call returns the first booking.

        The price is the flight's fare for `seat_class`, insurance included (`services.flights.fare`).

        Raises:
            BusinessRuleError: the flight or the seat class is unknown.
        """
        with self._engine.connect() as conn:
            if (done := _by_tool_call(conn, tool_call_id)) is not None:
                return done
            price = conn.scalar(select(flights.c.price).where(flights.c.flight_id == flight_id))
        if price is None:
            msg = f"There is no flight {flight_id}."
            raise BusinessRuleError(msg)
        booking = Booking(
            booking_id=f"BK-{uuid.uuid4().hex[:8].upper()}",
            tool_call_id=tool_call_id,
            flight_id=flight_id,
            seat_class=seat_class,
            insurance=insurance,
            price=fare(float(price), seat_class, insurance=insurance),
            status="confirmed",
            cancelled_by=None,
            created_at=datetime.now(UTC).isoformat(),
            owner=owner,
        )
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(bookings).values(**booking))
        except IntegrityError:  # the same tool call, resumed twice at once, got there first
            with self._engine.connect() as conn:
                done = _by_tool_call(conn, tool_call_id)
            if done is None:
                raise
            return done
        return booking

    def cancel(self, *, tool_call_id: str, booking_id: str, owner: str | None = None) -> Booking:
        """Cancel `booking_id`; a replay of the same tool call returns the same cancellation.

        `owner`: cancel only a booking of this traveller (None: any booking).

        Raises:
            BusinessRuleError: the booking is unknown, is another traveller's (nothing
                changes), or was cancelled by another call.
        """
        with self._engine.begin() as conn:
            row = conn.execute(select(bookings).where(bookings.c.booking_id == booking_id)).mappings().first()
            if row is None:
                msg = f"There is no booking {booking_id}."
                raise BusinessRuleError(msg)
            if owner is not None and row["owner"] != owner:
                msg = (
                    f"Booking {booking_id} is not a booking of {owner}: only its traveller or a reviewer "
                    "may cancel it. Nothing was cancelled."
                )
                raise BusinessRuleError(msg)
            conn.execute(
                update(bookings)
                .where(bookings.c.booking_id == booking_id)
                .where(bookings.c.cancelled_by.is_(None))
                .values(status="cancelled", cancelled_by=tool_call_id)
            )
            row = conn.execute(select(bookings).where(bookings.c.booking_id == booking_id)).mappings().one()
        if row["cancelled_by"] != tool_call_id:
            msg = f"Booking {booking_id} was already cancelled."
            raise BusinessRuleError(msg)
        return Booking(**row)  # type: ignore[typeddict-item]

    def for_flight(self, flight_id: str) -> list[Booking]:
        """Every booking of `flight_id`, cancelled ones included."""
        with self._engine.connect() as conn:
            rows = conn.execute(select(bookings).where(bookings.c.flight_id == flight_id)).mappings()
            return [Booking(**row) for row in rows]  # type: ignore[typeddict-item]

    def get(self, booking_id: str, *, owner: str | None = None) -> Booking:
        """The booking `booking_id`, if it is `owner`'s (any booking when `owner` is None).

        Raises:
            BusinessRuleError: there is no such booking, or it is another traveller's.
        """
        query = select(bookings).where(bookings.c.booking_id == booking_id)
        if owner is not None:
            query = query.where(bookings.c.owner == owner)
        with self._engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            mine = f" for {owner}" if owner is not None else ""
            msg = f"There is no booking {booking_id}{mine}."
            raise BusinessRuleError(msg)
        return Booking(**row)  # type: ignore[typeddict-item]

    def count(self) -> int:
        """How many bookings exist."""
        with self._engine.connect() as conn:
            return int(conn.scalar(select(func.count()).select_from(bookings)) or 0)


def _by_tool_call(conn: Connection, tool_call_id: str) -> Booking | None:
    row = conn.execute(select(bookings).where(bookings.c.tool_call_id == tool_call_id)).mappings().first()
    return None if row is None else Booking(**row)  # type: ignore[typeddict-item]
