"""Flights: search a route on a day, look one flight up, and price a seat. Bookings live apart.

A flight's `price` is its economy fare; `fare` prices the seat a traveller chooses from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import func, select

from services.database import flights
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from sqlalchemy import Engine

SEAT_CLASS_FACTORS: dict[str, float] = {"economy": 1.0, "premium": 1.6, "business": 2.5}
"""What each seat class costs, as a multiple of the economy fare."""
INSURANCE_PRICE = 12.0
"""Travel insurance: a flat surcharge per booking."""


def fare(economy: float, seat_class: str, *, insurance: bool) -> float:
    """The price of a seat of `seat_class` on a flight whose economy fare is `economy`.

    E.g. 89 economy: business with insurance is 89 x 2.5 + 12 = 234.5.

    Raises:
        BusinessRuleError: an unknown seat class, named with the ones there are.
    """
    factor = SEAT_CLASS_FACTORS.get(seat_class)
    if factor is None:
        msg = f"There is no seat class {seat_class!r}; choose one of {', '.join(SEAT_CLASS_FACTORS)}."
        raise BusinessRuleError(msg)
    return round(economy * factor + (INSURANCE_PRICE if insurance else 0.0), 2)


def fare_list(economy: float) -> str:
    """Every seat's price on a flight whose economy fare is `economy`, for a person choosing one.

    E.g. 'economy 89, premium 142.4, business 222.5; insurance +12'.
    """
    seats = ", ".join(f"{seat} {fare(economy, seat, insurance=False):g}" for seat in SEAT_CLASS_FACTORS)
    return f"{seats}; insurance +{INSURANCE_PRICE:g}"


class Flight(TypedDict):
    """A flight as the tools see it; `price` is the economy fare."""

    flight_id: str
    carrier: str
    origin: str
    destination: str
    date: str
    departs: str
    price: float


class Timetable:
    """Read access to the flights in the business database."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def search(self, *, origin: str, destination: str, date: str) -> list[Flight]:
        """Every flight from `origin` to `destination` on `date` (YYYY-MM-DD), cheapest first.

        City names match without regard to case.
        """
        query = (
            select(flights)
            .where(func.lower(flights.c.origin) == origin.strip().lower())
            .where(func.lower(flights.c.destination) == destination.strip().lower())
            .where(flights.c.date == date.strip())
            .order_by(flights.c.price, flights.c.departs)
        )
        with self._engine.connect() as conn:
            return [Flight(**row) for row in conn.execute(query).mappings()]  # type: ignore[typeddict-item]

    def get(self, flight_id: str) -> Flight:
        """The flight `flight_id`; raises `BusinessRuleError` if there is none."""
        with self._engine.connect() as conn:
            row = conn.execute(select(flights).where(flights.c.flight_id == flight_id)).mappings().first()
        if row is None:
            msg = f"There is no flight {flight_id}."
            raise BusinessRuleError(msg)
        return Flight(**row)  # type: ignore[typeddict-item]
