"""SQL against the business database: reads run read-only, anything else once per tool call.

Which statements count as reads is decided here, once, for the ops policy (a read needs no
person) and for the console (a read runs in a read-only transaction that is rolled back).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict

from sqlalchemy import insert, select
from sqlalchemy.exc import DBAPIError, IntegrityError

from services.database import sql_runs
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

MAX_ROWS = 200
SELECT = re.compile(r"^\s*select\b", re.IGNORECASE)
WRITES_INSIDE_SELECT = re.compile(r"\binto\b", re.IGNORECASE)  # PostgreSQL's SELECT ... INTO creates a table


def is_read_only(query: str) -> bool:
    """Whether `query` is one plain SELECT; anything else (or anything unclear) is a write.

    Conservative on purpose: comments, several statements, CTEs and `SELECT ... INTO`
    all count as writes, so they wait for a person.
    """
    statement = query.strip().removesuffix(";")
    if not statement or ";" in statement or "--" in statement or "/*" in statement:
        return False
    return bool(SELECT.match(statement)) and not WRITES_INSIDE_SELECT.search(statement)


class SqlResult(TypedDict):
    """What a statement did: rows for a read, the number of rows changed for a write."""

    statement: str
    read_only: bool
    rows: list[dict[str, Any]]
    rowcount: int


class SqlConsole:
    """Runs the statements the ops agent sends against the business database."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def run(self, query: str, *, tool_call_id: str) -> SqlResult:
        """Run `query`: a read in a rolled-back read-only transaction, a write once per tool call.

        Raises:
            BusinessRuleError: the database refused the statement (its message is kept).
        """
        try:
            return self._read(query) if is_read_only(query) else self._write(query, tool_call_id)
        except DBAPIError as error:
            msg = f"The database refused the statement: {error.orig}"
            raise BusinessRuleError(msg) from error

    def writes(self) -> int:
        """How many write statements have run."""
        with self._engine.connect() as conn:
            return len(conn.execute(select(sql_runs.c.tool_call_id)).all())

    def _read(self, query: str) -> SqlResult:
        with self._engine.connect() as conn:
            _read_only(conn, on=True)
            try:
                result = conn.exec_driver_sql(query)
                rows = [dict(row) for row in result.mappings().fetchmany(MAX_ROWS)]
            finally:
                conn.rollback()
                _read_only(conn, on=False)
        return SqlResult(statement=query, read_only=True, rows=rows, rowcount=len(rows))

    def _write(self, query: str, tool_call_id: str) -> SqlResult:
        try:
            with self._engine.begin() as conn:
                if (done := _by_tool_call(conn, tool_call_id)) is not None:
                    return done
                rowcount = conn.exec_driver_sql(query).rowcount
                conn.execute(
                    insert(sql_runs).values(
                        tool_call_id=tool_call_id,
                        statement=query,
                        rowcount=max(rowcount, 0),
                        created_at=datetime.now(UTC).isoformat(),
                    )
                )
        except IntegrityError:  # the same tool call ran a moment ago and wrote its row first
            with self._engine.connect() as conn:
                if (done := _by_tool_call(conn, tool_call_id)) is not None:
                    return done
            raise
        return SqlResult(statement=query, read_only=False, rows=[], rowcount=max(rowcount, 0))


def _read_only(conn: Connection, *, on: bool) -> None:
    """Make the connection refuse writes (SQLite: `query_only`; PostgreSQL: a read-only transaction)."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(f"PRAGMA query_only = {'ON' if on else 'OFF'}")
    elif on:
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")


def _by_tool_call(conn: Connection, tool_call_id: str) -> SqlResult | None:
    row = conn.execute(select(sql_runs).where(sql_runs.c.tool_call_id == tool_call_id)).mappings().first()
    if row is None:
        return None
    return SqlResult(statement=row["statement"], read_only=False, rows=[], rowcount=row["rowcount"])
