"""Orders: look one up, or add one (tests and demos add their own).

Every order belongs to a customer (`owner`, their user identity). A lookup made for a
customer (`owner=`) finds only that customer's orders; one made with no owner finds any.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

from sqlalchemy import bindparam, insert, select

from services.database import orders
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from sqlalchemy import Engine


class Order(TypedDict):
    """An order as the tools see it; `owner` is the customer's user identity (None: staff only)."""

    order_id: str
    customer_name: str
    customer_email: str
    item: str
    amount: float
    status: str
    delivered_on: str | None
    owner: NotRequired[str | None]


def not_found(order_id: str, owner: str | None) -> BusinessRuleError:
    """The refusal for an order that does not exist, or is not `owner`'s (the two read alike)."""
    mine = f" for {owner}" if owner is not None else ""
    return BusinessRuleError(f"There is no order {order_id}{mine}.")


BY_ID = select(orders).where(orders.c.order_id == bindparam("order_id"))
BY_ID_AND_OWNER = BY_ID.where(orders.c.owner == bindparam("owner"))
"""The two lookups, built once: a statement built per call cost twice the query it ran (SQLAlchemy's
construction and cache key; this lookup runs on every refund's review text and `get_order`)."""


class OrderBook:
    """Read access to orders, plus `add` for seeding."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def get(self, order_id: str, *, owner: str | None = None) -> Order:
        """The order `order_id`, if it is `owner`'s (any order when `owner` is None).

        Raises:
            BusinessRuleError: there is no such order, or it belongs to someone else.
        """
        query, values = (
            (BY_ID, {"order_id": order_id})
            if owner is None
            else (BY_ID_AND_OWNER, {"order_id": order_id, "owner": owner})
        )
        with self._engine.connect() as conn:
            row = conn.execute(query, values).mappings().first()
        if row is None:
            raise not_found(order_id, owner)
        return Order(**row)  # type: ignore[typeddict-item]

    def add(self, order: Order) -> None:
        """Insert a new order."""
        with self._engine.begin() as conn:
            conn.execute(insert(orders).values(**order))
