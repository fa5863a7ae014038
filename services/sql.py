"""SQL against the business database: reads run read-only, anything else once per tool call.

Which statements count as reads is decided here, once, for the ops policy (a read needs no
person) and for the console (a read runs in a read-only transaction that is rolled back).
Every statement runs under a time limit, and a read returns at most `MAX_ROWS` rows.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict

from sqlalchemy import insert, select
from sqlalchemy.exc import DBAPIError, IntegrityError

from services.database import sql_runs
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sqlalchemy import Connection, Engine

MAX_ROWS = 500
"""Most rows a read returns; a result cut there says `truncated`."""
READ_TIMEOUT_MS = 2_000
"""How long a read (which no person reviewed) may run before it is stopped."""
WRITE_TIMEOUT_MS = 30_000
"""How long a reviewed write may run before it is stopped and rolled back."""
PROGRESS_STEPS = 1_000
"""SQLite virtual-machine steps between two looks at the clock."""
TIMED_OUT_SQLSTATE = "57014"  # PostgreSQL's query_canceled, raised by statement_timeout
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
    truncated: bool


class SqlConsole:
    """Runs the statements the ops agent sends against the business database."""

    def __init__(
        self,
        engine: Engine,
        *,
        read_timeout_ms: int = READ_TIMEOUT_MS,
        write_timeout_ms: int = WRITE_TIMEOUT_MS,
        max_rows: int = MAX_ROWS,
    ) -> None:
        """Use the business database behind `engine`, with these limits (defaults: the module's)."""
        self._engine = engine
        self._read_timeout_ms = read_timeout_ms
        self._write_timeout_ms = write_timeout_ms
        self._max_rows = max_rows

    def run(self, query: str, *, tool_call_id: str) -> SqlResult:
        """Run `query`: a read in a rolled-back read-only transaction, a write once per tool call.

        Raises:
            BusinessRuleError: the database refused the statement (its message is kept), or
                it ran past its time limit and was stopped (nothing changed).
        """
        read = is_read_only(query)
        try:
            return self._read(query) if read else self._write(query, tool_call_id)
        except DBAPIError as error:
            if _timed_out(error):
                limit = self._read_timeout_ms if read else self._write_timeout_ms
                msg = f"The statement ran longer than {limit} ms and was stopped; nothing was changed."
            else:
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
                with _time_limit(conn, self._read_timeout_ms):
                    result = conn.execution_options(stream_results=True).exec_driver_sql(
                        _as_driver_text(conn, query)
                    )
                    rows = [dict(row) for row in result.mappings().fetchmany(self._max_rows + 1)]
                    result.close()
            finally:
                conn.rollback()
                _read_only(conn, on=False)
        truncated = len(rows) > self._max_rows
        rows = rows[: self._max_rows]
        return SqlResult(statement=query, read_only=True, rows=rows, rowcount=len(rows), truncated=truncated)

    def _write(self, query: str, tool_call_id: str) -> SqlResult:
        try:
            with self._engine.begin() as conn:
                if (done := _by_tool_call(conn, tool_call_id)) is not None:
                    return done
                with _time_limit(conn, self._write_timeout_ms):
                    rowcount = conn.exec_driver_sql(_as_driver_text(conn, query)).rowcount
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
        rowcount = max(rowcount, 0)
        return SqlResult(statement=query, read_only=False, rows=[], rowcount=rowcount, truncated=False)


@contextmanager
def _time_limit(conn: Connection, milliseconds: int) -> Iterator[None]:
    """Stop what `conn` runs inside after `milliseconds`: it fails with an error `_timed_out` knows.

    SQLite: a progress handler that aborts once the deadline has passed. PostgreSQL:
    `statement_timeout` for the rest of the transaction.
    """
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(milliseconds)}")
        yield
        return
    if conn.dialect.name != "sqlite":
        yield
        return
    sqlite = conn.connection.driver_connection
    deadline = time.monotonic() + milliseconds / 1000
    sqlite.set_progress_handler(lambda: int(time.monotonic() > deadline), PROGRESS_STEPS)  # type: ignore[union-attr]
    try:
        yield
    finally:
        sqlite.set_progress_handler(None, 0)  # type: ignore[union-attr]


def _as_driver_text(conn: Connection, query: str) -> str:
    """`query` as the driver reads it: psycopg takes `%` for a placeholder (`LIKE 'a%'`), so it is doubled."""
    return query.replace("%", "%%") if conn.dialect.name == "postgresql" else query


def _timed_out(error: DBAPIError) -> bool:
    """Whether `error` is a statement stopped by `_time_limit`."""
    if getattr(error.orig, "sqlstate", None) == TIMED_OUT_SQLSTATE:
        return True
    return str(error.orig) == "interrupted"  # sqlite3, when the progress handler says stop


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
    return SqlResult(
        statement=row["statement"], read_only=False, rows=[], rowcount=row["rowcount"], truncated=False
    )
