"""Orders: look one up, or add one (tests and demos add their own)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import insert, select

from services.database import orders
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from sqlalchemy import Engine


class Order(TypedDict):
    """An order as the tools see it."""

    order_id: str
    customer_name: str
    customer_email: str
    item: str
    amount: float
    status: str
    delivered_on: str | None


class OrderBook:
    """Read access to orders, plus `add` for seeding."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def get(self, order_id: str) -> Order:
        """The order `order_id`; raises `BusinessRuleError` if there is none."""
        with self._engine.connect() as conn:
            row = conn.execute(select(orders).where(orders.c.order_id == order_id)).mappings().first()
        if row is None:
            msg = f"There is no order {order_id}."
            raise BusinessRuleError(msg)
        return Order(**row)  # type: ignore[typeddict-item]

    def add(self, order: Order) -> None:
        """Insert a new order."""
        with self._engine.begin() as conn:
            conn.execute(insert(orders).values(**order))
