"""The SQL console's allowlist, fuzzed over what the database itself offers (issue 54, finding 2).

SQLite: every function of `pragma_function_list`, pragma of `pragma_pragma_list` and module of
`pragma_module_list` that the console does not list is refused with an error naming it, and the
crashing sequence of the finding (`fts3_tokenizer` with one and two arguments, then an FTS table)
never runs. PostgreSQL (as the test server's superuser): every function of `pg_proc` not listed is
refused, and so are the ways out of the database (files, programs, roles, other databases).
Each test ends by reading the business tables through the console and from the database itself.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import func, select, text

from services.database import DEMO_ORDERS, orders, sql_runs
from services.errors import BusinessRuleError
from services.sql import postgres_rules, sqlite_rules

if TYPE_CHECKING:
    from services.registry import Services

TOKENIZER_OVERWRITE = "SELECT fts3_tokenizer('simple', x'4141414141414141')"
"""The finding's write of a native pointer (0x4141414141414141) as the 'simple' tokenizer."""


def dialect(services: Services) -> str:
    return services.engine.dialect.name


def refused(services: Services, statement: str) -> str:
    """The console's refusal of `statement` (run as a write if it is not a plain SELECT)."""
    with pytest.raises(BusinessRuleError) as refusal:
        services.sql.run(statement, tool_call_id=uuid.uuid4().hex)
    return str(refusal.value)


def assert_business_data_intact(services: Services) -> None:
    """The console still answers, the demo orders are all there, and no statement was recorded."""
    counted = services.sql.run("SELECT count(*) AS n FROM orders", tool_call_id="after")
    assert counted["rows"] == [{"n": len(DEMO_ORDERS)}]
    with services.engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(orders)) == len(DEMO_ORDERS)
        assert conn.scalar(select(func.count()).select_from(sql_runs)) == 0


def sqlite_rows(services: Services, query: str) -> list[tuple]:
    with services.engine.connect() as conn:
        return [tuple(row) for row in conn.exec_driver_sql(query)]


def call_of(name: str, arguments: int) -> str:
    """A statement calling the function `name` with `arguments` NULLs (one if it takes any number)."""
    nulls = ", ".join(["NULL"] * max(arguments, 1 if arguments < 0 else 0))
    return f'SELECT "{name}"({nulls})'


def test_every_function_not_on_the_list_is_refused_by_name(services):
    """functions: each one the database has and the console does not list is refused by name; no data lost."""
    if dialect(services) == "sqlite":
        functions = sqlite_rows(services, "SELECT DISTINCT name, narg FROM pragma_function_list")
        unlisted = [(name, narg) for name, narg in functions if name.lower() not in sqlite_rules.FUNCTIONS]
        assert {"fts3_tokenizer", "load_extension", "rtreenode", "matchinfo"} <= {n for n, _ in unlisted}
    else:
        functions = sqlite_rows(services, "SELECT DISTINCT proname, 0 FROM pg_proc")
        unlisted = [(name, 0) for name, _ in functions if name.lower() not in postgres_rules.FUNCTIONS]
        assert {"pg_read_file", "lo_import", "set_config", "pg_ls_dir"} <= {n for n, _ in unlisted}
    for name, narg in unlisted:
        message = refused(services, call_of(name, narg))  # as a function, or first as a module's name
        assert f"does not allow the function {name}()" in message or f"module {name} " in message, message
    assert_business_data_intact(services)


def test_every_listed_function_exists_and_is_allowed(services):
    """functions: the list names only functions the database has, and none of them is refused by the list."""
    if dialect(services) == "sqlite":
        have = {name.lower() for (name,) in sqlite_rows(services, "SELECT name FROM pragma_function_list")}
        listed = sqlite_rules.FUNCTIONS
    else:
        have = {name.lower() for (name,) in sqlite_rows(services, "SELECT proname FROM pg_proc")}
        listed = postgres_rules.FUNCTIONS
    assert listed <= have, listed - have
    for name in sorted(listed - {"->", "->>"}):
        try:
            services.sql.run(f"SELECT {name}() AS x", tool_call_id="read")
        except BusinessRuleError as error:  # wrong arguments, a window function without OVER: the database's
            refusal = str(error)
        else:
            refusal = ""
        assert "does not allow" not in refusal, (name, refusal)
    if dialect(services) == "sqlite":
        pointed = services.sql.run("""SELECT '{"a": 1}' ->> '$.a' AS a""", tool_call_id="r")
        assert pointed["rows"] == [{"a": 1}]
    assert_business_data_intact(services)


def test_every_pragma_not_on_the_list_is_refused_as_a_statement_and_as_a_table(services):
    """pragmas (SQLite): each unlisted one is refused, read, set or as `pragma_x`; writable_schema stays 0."""
    if dialect(services) != "sqlite":
        pytest.skip(reason="PostgreSQL has no pragmas (SET, SHOW, set_config are refused)")
    pragmas = [name for (name,) in sqlite_rows(services, "SELECT name FROM pragma_pragma_list")]
    unlisted = [name for name in pragmas if name not in sqlite_rules.PRAGMAS]
    assert {"writable_schema", "query_only", "trusted_schema", "journal_mode"} <= set(unlisted)
    for name in unlisted:
        for statement in (f"PRAGMA {name}", f"PRAGMA {name} = 1"):
            assert f"does not allow PRAGMA {name}" in refused(services, statement), statement
        as_table = refused(services, f"SELECT * FROM pragma_{name}")  # noqa: S608  (names SQLite lists)
        assert "does not allow" in as_table or f"no such table: pragma_{name}" in as_table, (name, as_table)
    for name in sqlite_rules.PRAGMAS:
        assert f"pragma_{name}" in {f"pragma_{p}" for p in pragmas}
    assert services.sql.run("SELECT name FROM pragma_table_info('orders')", tool_call_id="r")["rowcount"] > 0
    assert sqlite_rows(services, "PRAGMA writable_schema") == [(0,)]
    assert_business_data_intact(services)


def test_every_module_not_on_the_list_is_refused_read_or_made(services):
    """modules (SQLite): each unlisted one can be neither read nor made a table; no virtual table appears."""
    if dialect(services) != "sqlite":
        pytest.skip(reason="virtual-table modules are SQLite's; PostgreSQL's extensions are refused")
    modules = [name for (name,) in sqlite_rows(services, "SELECT name FROM pragma_module_list")]
    unlisted = [name for name in modules if name not in sqlite_rules.MODULES]
    assert {"fts3", "fts4", "fts5", "rtree", "dbstat", "fts3tokenize"} <= set(unlisted)
    for name in unlisted:
        for statement in (f"SELECT * FROM {name}", f"CREATE VIRTUAL TABLE v_{name} USING {name}(a)"):  # noqa: S608
            assert f"does not allow the virtual table or module {name} " in refused(services, statement)
    listed = refused(services, "CREATE VIRTUAL TABLE v USING json_each")  # a listed module: not made either
    assert "does not allow CREATE VIRTUAL TABLE" in listed
    assert services.sql.run("SELECT value FROM json_each('[1, 2]')", tool_call_id="r")["rowcount"] == 2
    assert sqlite_rows(services, "SELECT name FROM sqlite_schema WHERE sql LIKE 'CREATE VIRTUAL%'") == []
    assert_business_data_intact(services)


def test_the_crashing_sequence_of_the_finding_never_runs(services):
    """fts3_tokenizer (one and two arguments) then an FTS table: all refused by name; the process goes on."""
    if dialect(services) != "sqlite":
        pytest.skip(reason="fts3_tokenizer is SQLite's")
    assert "does not allow the function fts3_tokenizer()" in refused(
        services, "SELECT fts3_tokenizer('simple')"
    )
    assert "does not allow the function fts3_tokenizer()" in refused(services, TOKENIZER_OVERWRITE)
    for module in ("fts3", "fts4"):
        made = refused(services, f"CREATE VIRTUAL TABLE ft USING {module}(a)")
        assert f"does not allow the virtual table or module {module} " in made
    assert "does not allow the function load_extension()" in refused(
        services, "SELECT load_extension('x.so')"
    )
    assert_business_data_intact(services)


def test_schema_functions_are_refused_where_sqlite_asks(services):
    """SQLite: a CHECK or an index expression with an unlisted function is refused when the table is made."""
    if dialect(services) != "sqlite":
        pytest.skip(reason="SQLite's authorizer")
    check = "CREATE TABLE t1 (a CHECK (sqlite_version() IS NOT NULL))"
    assert "does not allow the function sqlite_version()" in refused(services, check)
    made = services.sql.run("CREATE TABLE t2 (a TEXT DEFAULT 'x', b INTEGER)", tool_call_id="t2")
    assert made["read_only"] is False
    index = "CREATE INDEX i2 ON t2 (soundex(a))"
    assert "does not allow the function soundex()" in refused(services, index)
    assert services.sql.run("CREATE INDEX i3 ON t2 (lower(a))", tool_call_id="i3")["read_only"] is False
    assert (
        services.sql.run("ALTER TABLE t2 RENAME COLUMN b TO c", tool_call_id="rename")["read_only"] is False
    )
    assert services.sql.run("DROP TABLE t2", tool_call_id="drop")["read_only"] is False


ESCAPES = {
    "SELECT pg_read_file('/etc/hostname')": "the function pg_read_file()",
    "SELECT * FROM pg_ls_dir('.')": "the function pg_ls_dir()",
    "SELECT lo_import('/etc/hostname')": "the function lo_import()",
    "SELECT lo_export(1, '/tmp/x')": "the function lo_export()",
    "COPY (SELECT 1) TO PROGRAM 'touch {marker}'": "COPY",
    "COPY orders TO '{marker}'": "COPY",
    "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(a int)": "the function dblink()",
    "CREATE EXTENSION IF NOT EXISTS dblink": "CREATE EXTENSION",
    "SELECT set_config('role', 'postgres', false)": "the function set_config()",
    "SET ROLE postgres": "SET ROLE",
    "RESET ROLE": "RESET ROLE",
    "SELECT current_setting('data_directory')": "the function current_setting()",
    "SELECT rolname, rolpassword FROM pg_authid": "the system catalog relation pg_authid",
    "SELECT * FROM pg_catalog.pg_shadow": "the system catalog relation pg_catalog.pg_shadow",
    "DO $$ BEGIN PERFORM pg_sleep(0); END $$": "DO $$",
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'": "CREATE FUNCTION",
    "ALTER SYSTEM SET work_mem = '64MB'": "ALTER SYSTEM",
    "LOAD 'auto_explain'": "LOAD",
    "SELECT * INTO copied FROM orders": "IntoClause",
    "SELECT 1; SELECT 2": "one statement at a time",
    "ALTER TABLE orders OWNER TO postgres": "ChangeOwner",
    "SELECT 1 OPERATOR(public.+) 2": "the operator public.+",
}
"""Statements that leave the business data on PostgreSQL, and how the refusal names each."""


def test_postgresql_refuses_every_way_out_even_as_a_superuser(services, tmp_path):
    """PostgreSQL: files, programs, large objects, dblink, roles, settings, catalogs: refused by name."""
    if dialect(services) != "postgresql":
        pytest.skip(reason="PostgreSQL's ways out; SQLite's are the fuzzed lists above")
    with services.engine.connect() as conn:
        assert conn.scalar(text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"))
    marker = Path(tmp_path) / "escaped"
    for statement, named in ESCAPES.items():
        message = refused(services, statement.format(marker=marker))
        assert "does not allow" in message or "one statement" in message, (statement, message)
        assert named in message, (statement, message)
    assert not marker.exists()
    with services.engine.connect() as conn:
        assert conn.scalar(text("SELECT count(*) FROM pg_extension WHERE extname = 'dblink'")) == 0
        assert conn.scalar(text("SELECT current_user")) == "postgres"
    assert_business_data_intact(services)


def test_what_the_ops_agent_does_still_runs(services):
    """Both: reads with functions, and approved writes (archive, insert, update, schema) run as before."""
    read = services.sql.run(
        "SELECT lower(customer_name) AS name, count(*) AS n FROM orders "
        "WHERE delivered_on < '2025-01-01' GROUP BY lower(customer_name) ORDER BY name",
        tool_call_id="read",
    )
    assert [row["name"] for row in read["rows"]] == ["jonas weber", "lea santos"]
    for call, statement in enumerate(
        [
            "CREATE TABLE archive (order_id VARCHAR(32) PRIMARY KEY, amount FLOAT CHECK (amount > 0))",
            "INSERT INTO archive SELECT order_id, amount FROM orders WHERE delivered_on < '2025-01-01'",
            "UPDATE archive SET amount = round(amount * 2) WHERE order_id = 'A0412'",
            "ALTER TABLE archive ADD COLUMN note VARCHAR(200)",
            "CREATE INDEX archive_amount ON archive (amount)",
            "DELETE FROM orders WHERE order_id IN ('A0412', 'A0733')",
        ]
    ):
        assert services.sql.run(statement, tool_call_id=f"w{call}")["read_only"] is False, statement
    archived = services.sql.run("SELECT order_id, amount FROM archive ORDER BY order_id", tool_call_id="r2")
    assert archived["rows"] == [{"order_id": "A0412", "amount": 90.0}, {"order_id": "A0733", "amount": 32.0}]
    with services.engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(orders)) == len(DEMO_ORDERS) - 2
    assert services.sql.writes() == 6
