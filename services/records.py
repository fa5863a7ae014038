"""Typed reads of the business tables: rows of one table, filtered by column, never a write.

`read_data` uses this instead of SQL, so reading needs no person and cannot change anything.
Read for a customer (`owner=`), it shows only the tables a customer may see, and of those
with an `owner` column only the customer's own rows.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from sqlalchemy import select

from services.database import metadata
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from sqlalchemy import ColumnElement, Engine

Comparison = Literal["=", "!=", "<", "<=", ">", ">="]
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
MAX_ROWS = 500
CUSTOMER_TABLES = frozenset({"orders", "bookings", "flights"})
"""The tables a customer may read: their own orders and bookings, and the public timetable."""


class Condition(TypedDict):
    """One filter: `column` compared with `value`."""

    column: str
    op: Comparison
    value: str | float | int | bool | None


class Records:
    """Reads rows of the business tables."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def read(
        self, table: str, where: Sequence[Condition] = (), limit: int = 100, *, owner: str | None = None
    ) -> list[dict[str, Any]]:
        """Rows of `table` matching every condition, at most `limit` (and never more than 500).

        `owner`: read as this customer (None: every row of every table).

        Raises:
            BusinessRuleError: an unknown table, column or comparison, named with the ones there
                are; or, for a customer, a table that is not theirs to read.
        """
        tables = sorted(metadata.tables) if owner is None else sorted(CUSTOMER_TABLES)
        known = metadata.tables.get(table)
        if known is None or table not in tables:
            msg = f"There is no table {table!r}. Tables: {', '.join(tables)}."
            if known is not None:
                staff = "is for staff (reviewer, supervisor)"
                msg = f"Table {table!r} {staff}. {owner} may read: {', '.join(tables)}."
            raise BusinessRuleError(msg)
        clauses: list[ColumnElement[bool]] = []
        if owner is not None and "owner" in known.columns:
            clauses.append(known.columns["owner"] == owner)
        for condition in where:
            column = known.columns.get(condition["column"])
            if column is None:
                columns = ", ".join(known.columns.keys())
                msg = f"Table {table} has no column {condition['column']!r}. Columns: {columns}."
                raise BusinessRuleError(msg)
            compare = COMPARISONS.get(condition["op"])
            if compare is None:
                msg = f"Unknown comparison {condition['op']!r}; use one of {', '.join(COMPARISONS)}."
                raise BusinessRuleError(msg)
            clauses.append(compare(column, condition["value"]))
        query = (
            select(known)
            .where(*clauses)
            .order_by(*known.primary_key.columns)
            .limit(max(1, min(limit, MAX_ROWS)))
        )
        with self._engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]
