"""The ops agent's SQL console: reads run read-only, anything else once per tool call, all in a worker.

Which statements count as reads is decided here, once, for the ops policy (a read needs no
person) and for the console (a read runs in a read-only transaction that is rolled back).
Every statement runs in a worker process (`pool`), under its dialect's allowlist and a time
limit; a read returns at most `MAX_ROWS` rows. Not for what a statement may contain
(`sqlite_rules`, `postgres_rules`) nor for how it runs (`statements`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TypedDict

from sqlalchemy import func, select

from services.database import sql_runs
from services.errors import BusinessRuleError
from services.sql.pool import GRACE_SECONDS, SqlWorkers, WorkerLostError
from services.sql.statements import Statement, by_tool_call

if TYPE_CHECKING:
    from sqlalchemy import Engine

MAX_ROWS = 500
"""Most rows a read returns; a result cut there says `truncated`."""
MAX_STATEMENT_CHARS = 100_000
"""Longest statement the console takes."""
READ_TIMEOUT_MS = 2_000
"""How long a read (which no person reviewed) may run before it is stopped."""
WRITE_TIMEOUT_MS = 30_000
"""How long a reviewed write may run before it is stopped and rolled back."""
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
    """Runs the statements the ops agent sends against the business database, each in a worker process."""

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
        self.workers = SqlWorkers(engine.url.render_as_string(hide_password=False))

    def run(self, query: str, *, tool_call_id: str) -> SqlResult:
        """Run `query`: a read in a rolled-back read-only transaction, a write once per tool call.

        Raises:
            BusinessRuleError: the console's allowlist or the database refused the statement (its
                message is kept), it ran past its time limit and was stopped (nothing changed), or
                its worker process died (then the next statement gets a new one).
        """
        if self._engine.dialect.name == "sqlite" and self._engine.url.database in {None, "", ":memory:"}:
            msg = "The SQL console runs on a database file or server; this one is in one process's memory."
            raise BusinessRuleError(msg)
        _check_text(query)
        read = is_read_only(query)
        limit = self._read_timeout_ms if read else self._write_timeout_ms
        statement = Statement(
            query=query, tool_call_id=tool_call_id, read=read, timeout_ms=limit, max_rows=self._max_rows
        )
        try:
            answer = self.workers.ask(dict(statement), seconds=limit / 1000 + GRACE_SECONDS)
        except WorkerLostError as lost:
            if not read and (done := self._done(tool_call_id)) is not None:
                return done  # it committed before its worker was lost
            if lost.timed_out:
                msg = f"The statement ran longer than {limit} ms and was stopped; nothing was changed."
            else:
                msg = (
                    f"{lost} The statement did not finish and changed nothing; the next runs in a new worker."
                )
            raise BusinessRuleError(msg) from lost
        if "refused" in answer:
            raise BusinessRuleError(str(answer["refused"]))
        result: SqlResult = answer["result"]
        return result

    def writes(self) -> int:
        """How many write statements have run."""
        with self._engine.connect() as conn:
            return int(conn.scalar(select(func.count()).select_from(sql_runs)) or 0)

    def _done(self, tool_call_id: str) -> SqlResult | None:
        with self._engine.connect() as conn:
            return by_tool_call(conn, tool_call_id)


def _check_text(query: str) -> None:
    """Refuse a statement that is no text, holds a NUL or passes `MAX_STATEMENT_CHARS`, saying where."""
    try:
        query.encode()
    except UnicodeEncodeError as error:
        msg = f"The statement is not valid text: {error.reason} at character {error.start + 1}."
        raise BusinessRuleError(msg) from error
    if "\x00" in query:  # a parser reading C strings would see less than the database runs
        msg = f"The statement contains a NUL character (at character {query.index(chr(0)) + 1})."
        raise BusinessRuleError(msg)
    if len(query) > MAX_STATEMENT_CHARS:
        most = MAX_STATEMENT_CHARS
        msg = f"The statement is {len(query):,} characters long; the SQL console takes {most:,} at most."
        raise BusinessRuleError(msg)
