"""The SQL console's worker processes: a statement that kills its worker fails alone, and the next one runs.

Each statement runs in a worker process apart from the one that holds the server's keys. These
tests kill workers the way a native crash would (SIGSEGV), stop one that hangs, and read what a
worker's environment holds; outcomes are read from the console and from the business tables.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import func, select

from services.database import DEMO_ORDERS, orders, sql_runs
from services.errors import BusinessRuleError
from services.sql import SqlConsole
from services.sql.console import MAX_STATEMENT_CHARS
from services.sql.pool import GRACE_SECONDS
from tests.services.test_owners_and_limits import ENDLESS, ENDLESS_AS_SELECT

COUNT = "SELECT count(*) AS n FROM orders"


def until(condition, seconds: float = 30) -> None:
    """Poll `condition` until it holds (fail after `seconds`)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not true within {seconds} s: {condition}")
        time.sleep(0.01)


def bytes_read(pid: int) -> int:
    """Bytes `pid` has read by any read call, its stdin included (`rchar` of `/proc/<pid>/io`)."""
    return next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/io").read_text().splitlines()
        if line.startswith("rchar:")
    )


def idle_worker(console: SqlConsole) -> int:
    """The pid of the console's one idle worker, after a statement made it."""
    assert console.run(COUNT, tool_call_id="first")["rows"] == [{"n": len(DEMO_ORDERS)}]
    (pid,) = console.workers.pids()
    return pid


def in_background(console: SqlConsole, query: str, tool_call_id: str) -> dict:
    """Run `query` in a thread; the dict gets its `result` or its `error`."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = console.run(query, tool_call_id=tool_call_id)
        except BusinessRuleError as error:
            outcome["error"] = str(error)

    thread = threading.Thread(target=run)
    thread.start()
    outcome["thread"] = thread
    return outcome


def counts(engines) -> tuple[int, int]:
    with engines[-1].connect() as conn:
        return (
            conn.scalar(select(func.count()).select_from(orders)),
            conn.scalar(select(func.count()).select_from(sql_runs)),
        )


@pytest.mark.parametrize(("query", "kind"), [(ENDLESS_AS_SELECT, "read"), (ENDLESS, "write")])
def test_a_worker_killed_mid_statement_fails_it_and_the_next_runs(services, engines, query, kind):
    """SIGSEGV in the worker: that statement fails saying so, nothing written; a new worker runs the next."""
    console = SqlConsole(engines[-1], read_timeout_ms=60_000, write_timeout_ms=60_000)
    pid = idle_worker(console)
    idle = bytes_read(pid)
    running = in_background(console, query, tool_call_id=f"endless-{kind}")
    # Read by the worker, not only taken from the idle list: a worker killed between the two is
    # found dead and replaced, and the statement runs its whole minute in the new one.
    until(lambda: bytes_read(pid) > idle)
    os.kill(pid, signal.SIGSEGV)
    running["thread"].join(timeout=30)
    assert "killed by SIGSEGV" in running["error"], running
    assert "changed nothing" in running["error"]
    assert console.run(COUNT, tool_call_id="after")["rows"] == [{"n": len(DEMO_ORDERS)}]
    assert console.workers.pids() not in ([], [pid])
    assert counts(engines) == (len(DEMO_ORDERS), 0)
    console.workers.close()


def test_a_worker_that_died_while_idle_is_replaced(services, engines):
    """A worker killed between statements: the next statement gets a new worker and runs."""
    console = SqlConsole(engines[-1])
    pid = idle_worker(console)
    os.kill(pid, signal.SIGKILL)
    until(
        lambda: (
            not Path(f"/proc/{pid}/status").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        )
    )
    assert console.run(COUNT, tool_call_id="after")["rows"] == [{"n": len(DEMO_ORDERS)}]
    assert console.workers.pids() != [pid]
    console.workers.close()


def test_a_worker_that_stops_answering_is_killed_after_its_time_limit(services, engines):
    """A hung worker (SIGSTOP): killed after the limit and a grace; the statement fails in time."""
    if engines[-1].dialect.name != "sqlite":
        pytest.skip(reason="the same path on either database: once is enough")
    console = SqlConsole(engines[-1], read_timeout_ms=300)
    pid = idle_worker(console)
    os.kill(pid, signal.SIGSTOP)
    started = time.monotonic()
    with pytest.raises(
        BusinessRuleError, match="ran longer than 300 ms and was stopped; nothing was changed"
    ):
        console.run(COUNT, tool_call_id="hung")
    assert GRACE_SECONDS <= time.monotonic() - started < GRACE_SECONDS + 10
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    assert console.run(COUNT, tool_call_id="after")["rows"] == [{"n": len(DEMO_ORDERS)}]
    console.workers.close()


def test_a_write_waits_for_another_writer_instead_of_failing(services, engines):
    """A write while another connection holds the write lock (a tool beside it in the turn) waits, then runs.

    A deferred transaction that read first could not take the lock once the other committed
    ("database is locked", seen when the ops agent's three approved calls ran at once).
    """
    if engines[-1].dialect.name != "sqlite":
        pytest.skip(reason="SQLite's write lock; PostgreSQL locks rows")
    console = SqlConsole(engines[-1], write_timeout_ms=30_000)
    pid = idle_worker(console)
    idle = bytes_read(pid)
    other = engines[-1].raw_connection()
    try:
        other.driver_connection.isolation_level = None
        other.driver_connection.execute("BEGIN IMMEDIATE")
        other.driver_connection.execute("UPDATE orders SET item = item WHERE order_id = 'A1024'")
        running = in_background(console, "DELETE FROM orders WHERE order_id = 'A2048'", "beside-a-writer")
        until(lambda: bytes_read(pid) > idle)  # the worker read the statement and waits for the lock
        time.sleep(0.3)  # the other writer keeps its lock a while: the statement must wait, not fail
        other.driver_connection.execute("COMMIT")
    finally:
        other.close()
    running["thread"].join(timeout=30)
    assert "error" not in running, running
    assert running["result"]["rowcount"] == 1
    assert counts(engines) == (len(DEMO_ORDERS) - 1, 1)
    console.workers.close()


def test_a_worker_is_a_fresh_process_without_the_servers_secrets(services, engines, monkeypatch):
    """env: the seal and signing keys, tokens and API keys of the server are not in a worker's environment."""
    secrets = {
        "HITL_SEAL_KEY": "seal-secret",
        "HITL_RECEIPT_KEY": "signing-secret",
        "HITL_USERS": "someone:reviewer:token-secret",
        "OPENAI_API_KEY": "api-secret",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    console = SqlConsole(engines[-1])
    pid = idle_worker(console)
    assert pid != os.getpid()
    environment = Path(f"/proc/{pid}/environ").read_bytes()
    for value in secrets.values():
        assert value.encode() not in environment
    assert b"PYTHONPATH=" in environment
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    assert int(stat[1]) == os.getpid()  # a child of this process, started as a new interpreter
    assert b"services.sql.worker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    console.workers.close()


def test_statements_run_side_by_side_up_to_the_pool_size(services, engines):
    """Twelve reads at once from twelve threads: all answer, in at most four workers."""
    console = SqlConsole(engines[-1])
    with ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(lambda n: console.run(COUNT, tool_call_id=f"r{n}"), range(12)))
    assert [r["rows"] for r in results] == [[{"n": len(DEMO_ORDERS)}]] * 12
    assert 1 <= len(console.workers.pids()) <= 4
    console.workers.close()
    assert console.workers.pids() == []


def test_a_statement_longer_than_the_console_takes_is_refused_before_any_worker(services, engines):
    """size: a statement past MAX_STATEMENT_CHARS is refused with its length; no worker was started."""
    console = SqlConsole(engines[-1])
    query = "SELECT 1 AS one WHERE 1 = 1" + " AND 1 = 1" * (MAX_STATEMENT_CHARS // 10)
    with pytest.raises(BusinessRuleError, match=f"the SQL console takes {MAX_STATEMENT_CHARS:,} at most"):
        console.run(query, tool_call_id="long")
    assert console.workers.pids() == []


def test_a_read_is_cut_at_a_million_bytes_and_says_so(services, engines):
    """bytes: six rows of 600 KB each come back as the one that fits, marked truncated."""
    console = SqlConsole(engines[-1])
    big = (
        "SELECT order_id, hex(randomblob(300000)) AS filler FROM orders"
        if engines[-1].dialect.name == "sqlite"
        else "SELECT order_id, lpad('', 600000, 'ab') AS filler FROM orders"
    )
    cut = console.run(big, tool_call_id="big")
    assert (cut["rowcount"], cut["truncated"]) == (1, True)
    assert len(cut["rows"][0]["filler"]) == 600_000
    console.workers.close()


def test_text_that_is_no_text_is_refused_and_the_worker_goes_on(services, engines):
    """input: a lone surrogate or a NUL is refused saying where; the worker lives on."""
    console = SqlConsole(engines[-1])
    pid = idle_worker(console)
    with pytest.raises(BusinessRuleError, match="not valid text: surrogates not allowed at character 9"):
        console.run("SELECT '\ud800' AS x", tool_call_id="surrogate")
    with pytest.raises(BusinessRuleError, match="contains a NUL character \\(at character 10\\)"):
        console.run("SELECT 'a\x00b' AS x", tool_call_id="nul")
    assert console.run(COUNT, tool_call_id="after")["rows"] == [{"n": len(DEMO_ORDERS)}]
    assert console.workers.pids() == [pid]
    console.workers.close()


def test_an_in_memory_database_is_refused_by_name():
    """memory: a console on `sqlite://` says it needs a file or server (a worker could not see it)."""
    from services.registry import Services  # noqa: PLC0415  (this module's fixtures open files)

    with pytest.raises(BusinessRuleError, match="in one process's memory"):
        Services.open("sqlite://").sql.run(COUNT, tool_call_id="memory")
