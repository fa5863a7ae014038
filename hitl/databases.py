"""Engines on databases that several processes share: a SQLite file or PostgreSQL.

A SQLite file gets its folder, WAL and a busy timeout, so a server, its tests and scripts can
share it; tables are made under `schema_lock`. An engine opened `sealed` cannot reach another
file (SQLite's limit of attached databases is 0: `ATTACH`, `VACUUM INTO` fail) and does not trust
its schema (the business database, which an agent's SQL console runs statements on). Not for what
is kept where: the approval layer's store is `server.ledger.storage`, the business tables `services.database`.
"""

from __future__ import annotations

import fcntl
import sqlite3
from contextlib import contextmanager
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine, event

from hitl.settings import get_settings

if TYPE_CHECKING:
    from collections.abc import Iterator
    from sqlite3 import Connection as SQLiteConnection

SCHEMA_LOCK = 0x6869746C
"""PostgreSQL advisory lock key held while a database's tables are made ("hitl")."""


@lru_cache(maxsize=16)
def open_database(url: str, *, sealed: bool = False) -> Engine:
    """A pooled engine on `url`; a server's connections are checked before use (a restart costs no request).

    `sealed`: a SQLite connection may attach no other database file. A server's pool holds
    `DB_POOL_SIZE` connections, `DB_MAX_OVERFLOW` more while busy (a replica's budget: deploy/README.md).
    """
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    if url.startswith("sqlite"):
        # A file has no server to restart: SQLite's connections are not pinged (a ping per checkout
        # cost about as much as the query it guarded).
        opened = create_engine(url)
        event.listen(opened, "connect", partial(sqlite_pragmas, sealed=sealed))
        return opened
    settings = get_settings()
    return create_engine(
        url, pool_pre_ping=True, pool_size=settings.db_pool_size, max_overflow=settings.db_max_overflow
    )


def sqlite_pragmas(dbapi_connection: SQLiteConnection, _record: object, *, sealed: bool = False) -> None:
    """WAL and a busy timeout, so the server and a test can share the file.

    `sealed`: no ATTACH, and SQL kept in the schema (a DEFAULT, CHECK, index, view or trigger, which
    a reviewed statement may have written) calls only functions SQLite marks innocuous.
    """
    cursor = dbapi_connection.cursor()
    if sealed:
        dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        cursor.execute("PRAGMA trusted_schema=OFF")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


@contextmanager
def schema_lock(url: str) -> Iterator[None]:
    """For a SQLite file: hold an exclusive lock on `<file>.lock` while its tables are made.

    Two processes opening a new file at once would both see a table missing and both CREATE
    it (SQLite takes its write lock only at the CREATE); the second would fail. PostgreSQL
    has its advisory lock instead (`SCHEMA_LOCK`), and an in-memory SQLite database is one
    process's own.
    """
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else ""
    if not path or path == ":memory:":
        yield
        return
    with Path(f"{path}.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
