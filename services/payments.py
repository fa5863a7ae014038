"""Refunds: at most one per order, never above the order amount, once per tool call."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from services.database import orders, refunds
from services.errors import BusinessRuleError
from services.money import checked_amount
from services.orders import not_found

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine


class Refund(TypedDict):
    """A refund row."""

    refund_id: str
    tool_call_id: str
    order_id: str
    amount: float
    reason: str
    created_at: str


class Payments:
    """Issues refunds against orders in the business database."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def issue_refund(
        self, *, tool_call_id: str, order_id: str, amount: float, reason: str, owner: str | None = None
    ) -> Refund:
        """Refund `amount` on `order_id` once; a replay of the same tool call returns the first refund.

        `owner`: refund only an order of this customer (None: any order).

        Raises:
            BusinessRuleError: the order is unknown (or not `owner`'s), the amount is not money
                (`services.money`) or exceeds what was paid, or the order was already refunded by
                another call.
        """
        with self._engine.begin() as conn:
            if (done := _by_tool_call(conn, tool_call_id)) is not None:
                return done
            try:
                amount = checked_amount(amount)
            except ValueError as error:
                msg = f"A refund's {error}."
                raise BusinessRuleError(msg) from None
            query = select(orders).where(orders.c.order_id == order_id)
            if owner is not None:
                query = query.where(orders.c.owner == owner)
            order = conn.execute(query).mappings().first()
            if order is None:
                raise not_found(order_id, owner)
            if amount > order["amount"]:
                msg = f"Order {order_id} was paid {order['amount']:g}; a refund of {amount:g} exceeds it."
                raise BusinessRuleError(msg)
            refund = Refund(
                refund_id=f"R-{uuid.uuid4().hex[:10]}",
                tool_call_id=tool_call_id,
                order_id=order_id,
                amount=amount,
                reason=reason,
                created_at=datetime.now(UTC).isoformat(),
            )
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(refunds).values(**refund))
        except IntegrityError:
            with self._engine.connect() as conn:
                if (done := _by_tool_call(conn, tool_call_id)) is not None:
                    return done
            msg = f"Order {order_id} has already been refunded."
            raise BusinessRuleError(msg) from None
        return refund

    def refunds_for(self, order_id: str) -> list[Refund]:
        """Every refund written for `order_id`."""
        with self._engine.connect() as conn:
            rows = conn.execute(select(refunds).where(refunds.c.order_id == order_id)).mappings()
            return [Refund(**row) for row in rows]  # type: ignore[typeddict-item]

    def count(self) -> int:
        """How many refunds exist."""
        with self._engine.connect() as conn:
            return int(conn.scalar(select(func.count()).select_from(refunds)) or 0)


def _by_tool_call(conn: Connection, tool_call_id: str) -> Refund | None:
    row = conn.execute(select(refunds).where(refunds.c.tool_call_id == tool_call_id)).mappings().first()
    return None if row is None else Refund(**row)  # type: ignore[typeddict-item]
