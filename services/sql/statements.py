"""Running one console statement on the business database, inside a worker process (`worker`).

A read runs in a read-only transaction that is rolled back and returns at most `max_rows` rows;
anything else runs once per tool call (its `sql_runs` row is written in the same transaction).
Every statement passes its dialect's allowlist (`sqlite_rules`, `postgres_rules`) and runs under
a time limit. Not for deciding what counts as a read (`console.is_read_only`) nor for the
processes themselves (`pool`).
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypedDict

from sqlalchemy import create_engine, event, insert, select
from sqlalchemy.exc import DBAPIError, IntegrityError

from hitl.databases import sqlite_pragmas
from services.database import sql_runs
from services.errors import BusinessRuleError
from services.sql.postgres_rules import check_postgres
from services.sql.sqlite_rules import SqliteAllowlist, harden, refusal_message

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sqlalchemy import Connection, Engine

    from services.sql.console import SqlResult

PROGRESS_STEPS = 1_000
"""SQLite virtual-machine steps between two looks at the clock."""
MAX_RESULT_BYTES = 1_000_000
"""Most bytes of rows (as JSON) a read returns; a result cut there says `truncated`, as at the row limit."""
TIMED_OUT_SQLSTATE = "57014"  # PostgreSQL's query_canceled, raised by statement_timeout


class Statement(TypedDict):
    """What the server asks a worker to run: the statement, its tool call, how, and its limits."""

    query: str
    tool_call_id: str
    read: bool
    """Run it as a read (read-only, rolled back, rows returned), else as a write once per tool call."""
    timeout_ms: int
    max_rows: int


def console_engine(url: str) -> Engine:
    """An engine on the business database whose SQLite connections carry the console's allowlist and limits.

    Its SQLite connections leave transactions to the engine (`BEGIN` is sent by SQLAlchemy), so
    no statement compiled under the allowlist needs one of its own.
    """
    engine = create_engine(url, pool_pre_ping=not url.startswith("sqlite"), pool_size=1)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _console_connection)
        event.listen(engine, "begin", _begin)
    return engine


WRITES = {"hitl_console_writes": True}
"""Execution options of a write's transaction: SQLite starts it `BEGIN IMMEDIATE`."""


def _begin(conn: Connection) -> None:
    """SQLite: a write takes the write lock when it begins, waiting its busy timeout for it.

    A deferred transaction that read first (`by_tool_call`) and then writes cannot wait: in WAL mode
    SQLite refuses its upgrade at once ("database is locked") when another connection (the server's,
    a tool running beside it in the same turn) wrote since its read began.
    """
    immediate = conn.get_execution_options().get("hitl_console_writes", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _console_connection(dbapi_connection: Any, record: Any) -> None:  # noqa: ANN401  (SQLAlchemy's hook)
    sqlite_pragmas(dbapi_connection, record, sealed=True)
    harden(dbapi_connection)
    dbapi_connection.isolation_level = None  # the engine sends BEGIN itself (above)
    record.info["allowlist"] = SqliteAllowlist(dbapi_connection)


def run_statement(engine: Engine, statement: Statement) -> SqlResult:
    """Run `statement` as a read or as a write once per tool call, within its time limit.

    Raises:
        BusinessRuleError: the allowlist or the database refused the statement (named), or it ran
            past its time limit and was stopped (nothing changed).
    """
    query, timeout_ms = statement["query"], statement["timeout_ms"]
    if engine.dialect.name == "postgresql":
        check_postgres(query)
    try:
        if statement["read"]:
            return _read(engine, query, timeout_ms, statement["max_rows"])
        return _write(engine, query, statement["tool_call_id"], timeout_ms)
    except DBAPIError as error:
        if _timed_out(error):
            msg = f"The statement ran longer than {timeout_ms} ms and was stopped; nothing was changed."
        else:
            msg = f"The database refused the statement: {error.orig}"
        raise BusinessRuleError(msg) from error


def by_tool_call(conn: Connection, tool_call_id: str) -> SqlResult | None:
    """What the write of `tool_call_id` did, if it ran."""
    row = conn.execute(select(sql_runs).where(sql_runs.c.tool_call_id == tool_call_id)).mappings().first()
    if row is None:
        return None
    return {
        "statement": row["statement"],
        "read_only": False,
        "rows": [],
        "rowcount": row["rowcount"],
        "truncated": False,
    }


def _read(engine: Engine, query: str, timeout_ms: int, max_rows: int) -> SqlResult:
    with engine.connect() as conn:
        _read_only(conn, on=True)
        try:
            with _allowlisted(conn, query), _time_limit(conn, timeout_ms):
                result = conn.execution_options(stream_results=True).exec_driver_sql(
                    _as_driver_text(conn, query)
                )
                rows = [dict(row) for row in result.mappings().fetchmany(max_rows + 1)]
                result.close()
        finally:
            conn.rollback()
            _read_only(conn, on=False)
    kept = _within_bytes(rows[:max_rows])
    return {
        "statement": query,
        "read_only": True,
        "rows": kept,
        "rowcount": len(kept),
        "truncated": len(kept) < len(rows),
    }


def _write(engine: Engine, query: str, tool_call_id: str, timeout_ms: int) -> SqlResult:
    try:
        with engine.execution_options(**WRITES).begin() as conn:
            if (done := by_tool_call(conn, tool_call_id)) is not None:
                return done
            with _allowlisted(conn, query), _time_limit(conn, timeout_ms):
                rowcount = conn.exec_driver_sql(_as_driver_text(conn, query)).rowcount
            conn.execute(
                insert(sql_runs).values(
                    tool_call_id=tool_call_id,
                    statement=query,
                    rowcount=max(rowcount, 0),
                    created_at=datetime.now(UTC).isoformat(),
                )
            )
    except IntegrityError:  # the same tool call ran a moment ago (in another worker) and wrote its row first
        with engine.connect() as conn:
            if (done := by_tool_call(conn, tool_call_id)) is not None:
                return done
        raise
    return {
        "statement": query,
        "read_only": False,
        "rows": [],
        "rowcount": max(rowcount, 0),
        "truncated": False,
    }


def _within_bytes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first rows whose JSON fits `MAX_RESULT_BYTES`."""
    size = 0
    for kept, row in enumerate(rows):
        size += len(json.dumps(row, default=str))
        if size > MAX_RESULT_BYTES:
            return rows[:kept]
    return rows


@contextmanager
def _allowlisted(conn: Connection, query: str) -> Iterator[None]:
    """SQLite: the connection's authorizer for the statement run inside (PostgreSQL's was parsed before).

    Raises:
        BusinessRuleError: the authorizer refused part of the statement (named).
    """
    if conn.dialect.name != "sqlite":
        yield
        return
    allowlist: SqliteAllowlist = conn.connection.info["allowlist"]
    try:
        with allowlist.statement(query):
            yield
    except DBAPIError as error:
        if allowlist.refusal is None:
            raise
        raise BusinessRuleError(refusal_message(allowlist.refusal)) from error


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
