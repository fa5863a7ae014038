"""What the SQL console may run on SQLite: listed statements, functions, pragmas and modules, nothing else.

SQLite asks an authorizer about every statement kind, table, function and pragma while it compiles
a statement; `SqliteAllowlist` answers from the lists below and refuses the rest before anything
runs, so no statement reaches native code the console does not need (`fts3_tokenizer`,
`load_extension`, virtual-table modules). Not for PostgreSQL (`postgres_rules`) nor for time and
row limits (`statements`).
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import contextmanager
from typing import TYPE_CHECKING

from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from collections.abc import Iterator

FUNCTIONS = frozenset(
    {
        *("->", "->>", "abs", "avg", "ceil", "ceiling", "changes", "char", "coalesce", "count"),
        *("cume_dist", "current_date", "current_time", "current_timestamp", "date", "datetime"),
        *("dense_rank", "exp", "first_value", "floor", "format", "glob", "group_concat", "hex"),
        *("ifnull", "iif", "instr", "json", "json_array", "json_array_length", "json_extract"),
        *("json_group_array", "json_group_object", "json_insert", "json_object", "json_patch"),
        *("json_quote", "json_remove", "json_replace", "json_set", "json_type", "json_valid"),
        *("julianday", "lag", "last_insert_rowid", "last_value", "lead", "length", "like"),
        *("likelihood", "likely", "ln", "log", "log10", "log2", "lower", "ltrim", "max", "min", "mod"),
        *("nth_value", "ntile", "nullif", "percent_rank", "pi", "pow", "power", "printf", "quote"),
        *("random", "randomblob", "rank", "replace", "round", "row_number", "rtrim", "sign", "sqrt"),
        *("strftime", "substr", "substring", "sum", "time", "total", "total_changes", "trim", "trunc"),
        *("typeof", "unicode", "unixepoch", "unlikely", "upper", "zeroblob"),
    }
)
"""Functions a statement may call: SQLite's core, date, JSON, math and window functions."""

ALTER_TABLE_HELPERS = frozenset(
    {"sqlite_rename_table", "sqlite_rename_column", "sqlite_rename_test", "sqlite_rename_quotefix"}
    | {"sqlite_drop_column"}
)
"""SQLite's own functions that `ALTER TABLE` calls while it rewrites the schema (SQLite refuses them
to a statement that names them)."""

PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo"}
    | {"foreign_key_list", "foreign_key_check", "database_list", "integrity_check", "quick_check"}
)
"""Pragmas a statement may read (as `PRAGMA x(...)` or `pragma_x(...)`): each only describes the schema."""

MODULES = frozenset({"json_each", "json_tree"})
"""Virtual-table modules a statement may read: the JSON table-valued functions. No statement makes one."""

WORD = re.compile(r"[0-9A-Za-z_$\u0080-\U0010ffff]+")
"""A word of a statement: any name it gives, quoted or not, is one."""

SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_temp_master"})
"""SQLite's schema tables: readable; written only by SQLite itself while it runs a CREATE, DROP or ALTER
(it refuses a statement's own writes to them, since `PRAGMA writable_schema` is refused here)."""

ALLOWED = {
    sqlite3.SQLITE_SELECT: "SELECT",
    sqlite3.SQLITE_RECURSIVE: "WITH RECURSIVE",
    sqlite3.SQLITE_CREATE_TABLE: "CREATE TABLE",
    sqlite3.SQLITE_CREATE_INDEX: "CREATE INDEX",
    sqlite3.SQLITE_DROP_TABLE: "DROP TABLE",
    sqlite3.SQLITE_DROP_INDEX: "DROP INDEX",
    sqlite3.SQLITE_ALTER_TABLE: "ALTER TABLE",
}
"""Statement kinds the console runs besides reading and writing rows (reads run read-only anyway)."""

REFUSED_KINDS = {
    sqlite3.SQLITE_ATTACH: "ATTACH or VACUUM (the console reaches the business database only)",
    sqlite3.SQLITE_DETACH: "DETACH",
    sqlite3.SQLITE_TRANSACTION: "BEGIN, COMMIT or ROLLBACK (each statement runs in a transaction of its own)",
    sqlite3.SQLITE_SAVEPOINT: "SAVEPOINT or RELEASE (each statement runs in a transaction of its own)",
    sqlite3.SQLITE_CREATE_VTABLE: "CREATE VIRTUAL TABLE",
    sqlite3.SQLITE_DROP_VTABLE: "DROP of a virtual table",
    sqlite3.SQLITE_CREATE_TRIGGER: "CREATE TRIGGER",
    sqlite3.SQLITE_CREATE_VIEW: "CREATE VIEW",
    sqlite3.SQLITE_ANALYZE: "ANALYZE",
    sqlite3.SQLITE_REINDEX: "REINDEX",
}
"""How a refusal names a statement kind that is not allowed (any kind missing here is named by number)."""

LIMITS = {
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,  # ATTACH and VACUUM INTO fail: no other database file
    sqlite3.SQLITE_LIMIT_LENGTH: 10_000_000,  # bytes in one string or blob (randomblob, zeroblob, ...)
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 100_000,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 200,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 100,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 10_000,
    sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 10,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
}
"""Limits of a console connection (SQLite's defaults allow a gigabyte per value and ten attachments)."""


def harden(connection: sqlite3.Connection) -> None:
    """Set a console connection's limits, and no extension loading.

    Its schema is untrusted as on every sealed business connection (`hitl.databases.sqlite_pragmas`):
    a DEFAULT, CHECK, index or view calls only functions SQLite marks innocuous.
    """
    for limit, value in LIMITS.items():
        connection.setlimit(limit, value)
    if hasattr(connection, "enable_load_extension"):  # absent where Python was built without it
        connection.enable_load_extension(False)  # noqa: FBT003  (sqlite3's API)


class SqliteAllowlist:
    """The authorizer of one console connection, set for the span of one statement (`statement()`).

    `refusal` names what the last statement was refused for, in words for the person who wrote it.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        """Guard `connection` (a pysqlite connection of the business database, before any authorizer)."""
        self._connection = connection
        self._modules = frozenset(
            name.lower() for (name,) in connection.execute("SELECT name FROM pragma_module_list")
        )
        self._writable: frozenset[str] = frozenset()
        self._unreadable: frozenset[str] = frozenset()
        self._created: set[str] = set()
        self._altering = False
        self.refusal: str | None = None

    @contextmanager
    def statement(self, query: str) -> Iterator[None]:
        """Authorize what SQLite compiles of `query` in the block (and recompiles while rows are fetched).

        A statement that names an unlisted module or a virtual table is refused before SQLite sees
        it: SQLite connects such a table (its module's code runs) while it looks the name up, before
        it asks the authorizer about reading it.

        Raises:
            BusinessRuleError: `query` names a module or virtual table that is not on the list.
        """
        self._writable, virtual = schema_tables(self._connection)
        self._unreadable = (virtual | self._modules) - MODULES
        if named := sorted({word.lower() for word in WORD.findall(query)} & self._unreadable):
            what = f"the virtual table or module {', '.join(named)} (only {', '.join(sorted(MODULES))} are)"
            raise BusinessRuleError(refusal_message(what))
        self._created = set()
        self._altering = False
        self.refusal = None
        self._connection.set_authorizer(self._authorize)
        try:
            yield
        finally:
            self._connection.set_authorizer(None)

    def _authorize(
        self, action: int, arg1: str | None, arg2: str | None, _database: str | None, _inner: str | None
    ) -> int:
        if action == sqlite3.SQLITE_FUNCTION:
            return self._function(arg2 or "")
        if action == sqlite3.SQLITE_PRAGMA:
            return sqlite3.SQLITE_OK if (arg1 or "").lower() in PRAGMAS else self._refuse(f"PRAGMA {arg1}")
        if action == sqlite3.SQLITE_READ:
            if (arg1 or "").lower() not in self._unreadable:
                return sqlite3.SQLITE_OK  # a table, a listed module, a pragma (asked next), a CTE
            return self._refuse(f"reading {arg1} (a virtual table or module not on the console's list)")
        if action in {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE}:
            return self._write(arg1 or "")
        return self._statement(action, (arg1 or "").lower())

    def _function(self, name: str) -> int:
        if name.lower() in FUNCTIONS or (self._altering and name.lower() in ALTER_TABLE_HELPERS):
            return sqlite3.SQLITE_OK
        return self._refuse(f"the function {name}()")

    def _write(self, table: str) -> int:
        name = table.lower()
        if name in self._writable or name in self._created or name in SCHEMA_TABLES:
            return sqlite3.SQLITE_OK
        return self._refuse(f"writing {table} (a virtual table or one of its shadow tables)")

    def _statement(self, action: int, name: str) -> int:
        if action in ALLOWED:
            if action in {sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_INDEX}:
                self._created.add(name)
            self._altering = self._altering or action == sqlite3.SQLITE_ALTER_TABLE
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_REINDEX and name in self._created:
            return sqlite3.SQLITE_OK  # CREATE INDEX fills the index it made
        return self._refuse(REFUSED_KINDS.get(action, f"statements of SQLite's kind {action}"))

    def _refuse(self, what: str) -> int:
        self.refusal = self.refusal or what
        return sqlite3.SQLITE_DENY


def schema_tables(connection: sqlite3.Connection) -> tuple[frozenset[str], frozenset[str]]:
    """The tables a statement may write (not virtual, nor a virtual table's shadow), and the virtual tables.

    Read before the authorizer is set (it may not use its connection); each statement reads them
    again, so a table an approved statement created is there for the next one. A name SQLite asks
    about that is neither (a CTE, a subquery) holds no code of its own.
    """
    rows = connection.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table'").fetchall()
    virtual = frozenset(
        name.lower() for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")
    )
    writable = frozenset(
        name.lower()
        for name, _sql in rows
        if name.lower() not in virtual and not any(name.lower().startswith(f"{v}_") for v in virtual)
    )
    return writable, virtual


def refusal_message(what: str) -> str:
    """What a person reads when the console refused `what` on SQLite."""
    return (
        f"The SQL console does not allow {what}. It runs SELECT, INSERT, UPDATE, DELETE, CREATE and "
        "DROP of tables and indexes and ALTER TABLE on the business tables, with the functions "
        f"{', '.join(sorted(FUNCTIONS))} and the pragmas {', '.join(sorted(PRAGMAS))}."
    )
