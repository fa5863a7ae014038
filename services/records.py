"""Typed reads of the business tables: rows of one table, filtered by column, never a write.

`read_data` uses this instead of SQL, so reading needs no person and cannot change anything.
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

    def read(self, table: str, where: Sequence[Condition] = (), limit: int = 100) -> list[dict[str, Any]]:
        """Rows of `table` matching every condition, at most `limit` (and never more than 500).

        Raises:
            BusinessRuleError: an unknown table, column or comparison, named with the ones there are.
        """
        known = metadata.tables.get(table)
        if known is None:
            msg = f"There is no table {table!r}. Tables: {', '.join(sorted(metadata.tables))}."
            raise BusinessRuleError(msg)
        clauses: list[ColumnElement[bool]] = []
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
