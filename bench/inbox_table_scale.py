"""The inbox's own table at a million rows: the page query the layer runs, its time and its plan.

Rows go straight into `hitl_inbox` (the layer's schema, `server.ledger.storage.inbox`) on a
PostgreSQL database of the bench's own, by COPY, indexes built after; then the layer's own page
query (`server.coordination.inbox.read_page`) is timed for a reviewer and a supervisor (their
groups and their own questions), on the first page and on a page half way down the reader's
queue, and so are the counts a served page carries (`read_counts`, from `hitl_inbox_counts`, counted
once from the COPied rows as a store an older release filled is); the SQL they sent is run again
under `EXPLAIN (ANALYZE, BUFFERS)` into `inbox_table_plans.md` beside RESULTS.md. No server: the
queries and their plans only.
"""

from __future__ import annotations

import json
import random
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql
from sqlalchemy import create_engine, event, text
from sqlalchemy.schema import CreateIndex, CreateTable

from bench.report import Row
from bench.stats import tail_summary
from server.coordination.inbox import InboxQuery, read_counts, read_page
from server.identity.users import User
from server.ledger import inbox_counts as inbox_counts_module
from server.ledger.storage import inbox, inbox_counts, store_marks

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from rich.progress import Progress
    from sqlalchemy.engine import Engine

POSTGRES = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "bench_inbox"
"""Prefix of the database made for one run (`bench_inbox_<random>`), dropped after."""
PLANS = "inbox_table_plans.md"
"""Where the plans are written, beside RESULTS.md."""
OTHER_GROUPS = tuple(f"team-{i:02d}" for i in range(20))
"""Groups of the org besides the roles, whose rows the readers may not decide."""
OWNERS = tuple(f"user-{i:04d}" for i in range(1000))
READERS = (User("user-0042", "reviewer"), User("user-0043", "supervisor"))
"""Who reads: a reviewer (groups: reviewer) and a supervisor (reviewer, supervisor), each also the
owner of the questions their identity started."""
SHARES = (("reviewer", 0.4), ("supervisor", 0.1), ("owner", 0.2))
"""The share of rows each role decides; the rest is spread over `OTHER_GROUPS`."""
RowKey = tuple[str, str, str, int]
"""A row's place in the inbox's order: created_at, thread_id, interrupt_id, action_index."""
EXECUTION = re.compile(r"^Execution Time: ([0-9.]+) ms$", re.MULTILINE)
PAGE = 50
COUNTS_TARGET = "p95 ≤ 5 ms"
STEP = timedelta(milliseconds=100)
"""Rows paused 0.1 s apart, oldest first (a million: 28 hours of pauses)."""


def decider(draw: float, team: int) -> str:
    """Who decides a row, from a uniform draw in [0, 1) and a team number: a role, else a team."""
    bound = 0.0
    for group, share in SHARES:
        bound += share
        if draw < bound:
            return group
    return OTHER_GROUPS[team % len(OTHER_GROUPS)]


def inbox_rows(count: int, seed: int = 50) -> Iterator[tuple[Any, ...]]:
    """`count` rows of `hitl_inbox`, in the table's column order, oldest first; the same for a seed."""
    draws = random.Random(seed)  # noqa: S311  (a bench's data, not a secret)
    started = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(count):
        thread_id = f"{i:08d}-bench-{seed:04d}"
        created_at = (started + i * STEP).isoformat(timespec="microseconds")
        group = decider(draws.random(), draws.randrange(len(OTHER_GROUPS)))
        owner = OWNERS[draws.randrange(len(OWNERS))]
        served = {
            "thread_id": thread_id,
            "interrupt_id": f"i{i:031d}",
            "action_index": 0,
            "kind": "tool_approval",
            "agent": "support",
            "graph_id": "support",
            "tool": "issue_refund",
            "tool_call_id": f"call-{thread_id}",
            "args": {"order_id": f"B{i:07d}", "amount": 450.0},
            "description": f"Refund 450.00 on order B{i:07d} (paid 450.00)",
            "allowed_decisions": ["approve", "edit", "reject"],
            "required_role": group,
            "owner": owner,
            "created_at": created_at,
            "deadline": None,
            "escalated": False,
        }
        yield (
            thread_id,
            served["interrupt_id"],
            0,
            created_at,
            group,
            owner,
            "support",
            "support",
            "issue_refund",
            None,
            ",",
            1,
            json.dumps(served),
            started.timestamp() + i * STEP.total_seconds(),
        )


def visible(row: Sequence[Any], reader: User) -> bool:
    """Whether `reader` may decide `row` (a tuple of `inbox_rows`): one of their groups, or their own."""
    return row[4] in reader.groups or (row[4] == "owner" and row[5] == reader.identity)


@dataclass
class Captured:
    """The SQL statements an engine sent while capturing, with their parameters."""

    statements: list[tuple[str, Any]]

    def of_inbox(self) -> list[tuple[str, Any]]:
        """Those that read the inbox table."""
        return [(text, params) for text, params in self.statements if inbox.name in text]


def capture(engine: Engine) -> tuple[Captured, Callable[[], None]]:
    """Record every statement `engine` sends from now; call the returned function to stop."""
    captured = Captured([])

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:  # noqa: ANN401, FBT001
        captured.statements.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    return captured, lambda: event.remove(engine, "before_cursor_execute", record)


def fill(url: str, count: int, progress: Progress) -> tuple[float, dict[str, RowKey]]:
    """Make `hitl_inbox` in the database at `url`, COPY `count` rows in, build its indexes.

    Returns the seconds taken and, per reader, the key of the first row they may decide half way
    down the table (what a page deep into their queue comes after).
    """
    task = progress.add_task(f"{count:,} rows into {inbox.name}", total=count)
    columns = sql.SQL(", ").join(sql.Identifier(c.name) for c in inbox.columns)
    dialect = create_engine("postgresql+psycopg://").dialect
    middle: dict[str, RowKey] = {}
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(str(CreateTable(inbox, include_foreign_key_constraints=[]).compile(dialect=dialect)))
        with conn.cursor() as cursor:
            copy_sql = sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(inbox.name), columns)
            with cursor.copy(copy_sql) as copy:
                for n, row in enumerate(inbox_rows(count), 1):
                    copy.write_row(row)
                    if n > count // 2:
                        for reader in READERS:
                            if reader.identity not in middle and visible(row, reader):
                                middle[reader.identity] = (row[3], row[0], row[1], row[2])
                    if n % 10_000 == 0:
                        progress.update(task, completed=n)
        for index in inbox.indexes:
            conn.execute(str(CreateIndex(index).compile(dialect=dialect)))
        for table in (inbox_counts, store_marks):  # the counts kept with the rows, made from them once
            conn.execute(str(CreateTable(table).compile(dialect=dialect)))
        conn.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.Identifier(inbox.name)))
    progress.update(task, completed=count)
    return time.perf_counter() - started, middle


def count_once(engine: Engine) -> float:
    """Seconds the layer takes to count a store's rows the first time (`inbox_counts.counted`)."""
    started = time.perf_counter()
    inbox_counts_module.counted(engine)
    with engine.connect() as conn:
        conn.execute(text(f"ANALYZE {inbox_counts.name}"))
        conn.commit()
    return time.perf_counter() - started


Query = Callable[["Engine", User, "RowKey | None"], object]
"""One read of the inbox table for a reader, after a row key (None: from the start)."""


def page(engine: Engine, reader: User, after: RowKey | None) -> object:
    """The layer's page query: `PAGE` rows for `reader` after `after`."""
    return read_page(engine, reader, InboxQuery(limit=PAGE, after=after))


def counts(engine: Engine, reader: User, _after: RowKey | None) -> object:
    """The counts a served page carries: the reader's total and their rows per group."""
    return read_counts(engine, reader, InboxQuery(limit=PAGE))


def timed(query: Query, engine: Engine, reader: User, after: RowKey | None, repeats: int) -> list[float]:
    """Seconds per call of `query`, `repeats` times after one untimed call."""
    query(engine, reader, after)
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        query(engine, reader, after)
        samples.append(time.perf_counter() - started)
    return samples


def explained(query: Query, engine: Engine, reader: User, after: RowKey | None) -> list[str]:
    """`EXPLAIN (ANALYZE, BUFFERS)` of each statement on the inbox table that one call of `query` sends."""
    captured, stop = capture(engine)
    try:
        query(engine, reader, after)
    finally:
        stop()
    plans = []
    with engine.connect() as conn:
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        for statement, params in captured.of_inbox():
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {statement}", params)
            lines = "\n".join(line for (line,) in cursor.fetchall())
            plans.append(f"```sql\n{statement}\n```\n\nparameters: `{params}`\n\n```\n{lines}\n```")
    return plans


def readings(
    engine: Engine, middle: dict[str, RowKey], repeats: int
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Each reader's first page, deep page and counts: their timings and their plans."""
    found: dict[str, Any] = {}
    plans: dict[str, list[str]] = {}
    for reader in READERS:
        asks: dict[str, tuple[Query, RowKey | None]] = {
            "first page": (page, None),
            "page half way down": (page, middle.get(reader.identity)),
            "counts": (counts, None),
        }
        for name, (query, after) in asks.items():
            found.setdefault(reader.role, {})[name] = tail_summary(
                timed(query, engine, reader, after, repeats)
            )
            plans[f"{name}, as a {reader.role}"] = explained(query, engine, reader, after)
    return found, plans


def measure(count: int, repeats: int, out_dir: Path, progress: Progress) -> dict[str, Any]:
    """Fill a database of its own with `count` rows; time and explain each reader's pages; drop it."""
    name = f"{DATABASE}_{secrets.token_hex(3)}"
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    engine = create_engine(f"{POSTGRES.replace('postgresql://', 'postgresql+psycopg://')}/{name}")
    try:
        seconds, middle = fill(f"{POSTGRES}/{name}", count, progress)
        counting = count_once(engine)
        found, plans = readings(engine, middle, repeats)
    finally:
        engine.dispose()
        with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    write_plans(out_dir / PLANS, plans, count)
    executed = {key: executed_ms(texts) for key, texts in plans.items()}
    return {
        "rows": count,
        "fill_s": seconds,
        "count_once_s": counting,
        "deep_after": middle,
        "seconds": found,
        "plans": PLANS,
        "executed_ms": executed,
    }


def executed_ms(plans: Sequence[str]) -> float:
    """PostgreSQL's own execution time of every statement in `plans` (EXPLAIN ANALYZE texts), added up."""
    return sum(float(ms) for text in plans for ms in EXECUTION.findall(text))


def write_plans(path: Path, plans: dict[str, list[str]], count: int) -> None:
    """Each page's statements and their plans, as Markdown into `path`."""
    lines = [
        f"# The inbox page query at {count:,} rows: its plans",
        "",
        (
            "Written by `make bench` (section 7): `EXPLAIN (ANALYZE, BUFFERS)` of what "
            "`server.coordination.inbox.read_page` (a page) and `read_counts` (the counts a served page "
            "carries) sent for "
            + " and ".join(
                f"`{r.identity}` ({r.role}, groups {', '.join(sorted(r.groups))})" for r in READERS
            )
            + "."
        ),
        "",
    ]
    for which, found in plans.items():
        lines += [f"## {which}", "", *found, ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def rows(table: dict[str, Any], target: str) -> list[Row]:
    """p95 of each reader's first page, deep page and counts (no reference: the stock runtime has none)."""
    at = f"{table['rows']:,}"
    plans = f"plans in `bench/{table['plans']}`; no reference: the stock runtime has no such table"

    def limit(name: str, role: str) -> str:
        executed = f"PostgreSQL executed it in {table['executed_ms'][f'{name}, as a {role}']:.1f} ms"
        if name == "counts":
            return (
                "the counts kept with the rows (`hitl_inbox_counts`, changed in each row's transaction): one "
                f"primary-key range per group of the reader, whatever the rows ({executed}; a filter other "
                f"than the group still counts the rows; {plans})"
            )
        return (
            "one index scan per scope of the reader (each group, their own questions), each cut at the page, "
            f"merged in order ({executed} under EXPLAIN ANALYZE; the rest is the client, the pool and the "
            f"JSON; {plans})"
        )

    return [
        Row(
            "org_scale",
            f"inbox {name} at {at} rows" + ("" if role == "reviewer" else f", as a {role}"),
            "ms",
            summary["p95"] * 1000,
            None,
            limit(name, role),
            target if "page" in name else COUNTS_TARGET,
        )
        for role, found in table["seconds"].items()
        for name, summary in found.items()
    ]


def notes(table: dict[str, Any]) -> list[str]:
    """What the million-row rows measured."""
    shares = ", ".join(f"{group} {share:.0%}" for group, share in SHARES)
    readers = " and ".join(f"`{r.identity}` ({r.role})" for r in READERS)
    return [
        (
            f"Inbox table: {table['rows']:,} rows COPied into `hitl_inbox` on a database of the bench's own "
            f"({table['fill_s']:.0f} s with its indexes; counted once into `hitl_inbox_counts` in "
            f"{table.get('count_once_s', 0.0):.1f} s, as a store an older release filled is), "
            f"decided by {shares}, the rest by 20 teams the "
            f"readers are not in; 1,000 owners. Read as {readers} through `server.coordination.inbox`'s "
            f"`read_page` ({PAGE} rows: the first page, and the page after the reader's first row half way "
            "down the table) and `read_counts` (what a served page also carries, kept 1 s per reader); "
            "p95 of the repeats after one untimed call each."
        ),
    ]
