"""The SQL console reaches no native code and cannot crash the server (issue 54, finding 2).

Through the real `langgraph dev`: an ungated `SELECT fts3_tokenizer(...)` returned a library
address, and with two arguments wrote a native pointer; the next FTS table crashed the server
that holds the seal and signing keys. Now the console's allowlist refuses each step by name, as
a reviewer's or supervisor's read and as an approved write; a requester may not run ops and an
anonymous caller is not let in. A worker killed mid-statement (SIGSEGV) fails that statement
alone. Outcomes: the business tables, the server's `/ok`, and its process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from agents.offline import phrases
from tests.security.test_ledger_apart import APPROVER, console
from tests.server.helpers import APPROVE, start

pytestmark = pytest.mark.server

CRASH = [
    "SELECT hex(fts3_tokenizer('simple')) AS address",
    "SELECT fts3_tokenizer('simple', x'4141414141414141')",
    "CREATE VIRTUAL TABLE notes USING fts3(body)",
    "SELECT * FROM fts3tokenize",
]
"""The finding: read the tokenizer's address, overwrite it, then use FTS (which crashed the server)."""
OTHER_NATIVE = [
    "SELECT load_extension('/tmp/evil.so')",
    "SELECT rtreenode(2, x'00')",
    "PRAGMA writable_schema = 1",
    "SELECT * FROM dbstat",
    "CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1)",
]
COUNT = "SELECT count(*) AS n FROM orders"
ENDLESS_WRITE = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r"
"""Not a plain SELECT (a CTE), so it is gated; approved, it runs until its 30 s limit."""


def virtual_tables(ledger) -> list[str]:
    with ledger.engine.connect() as conn:
        return list(
            conn.exec_driver_sql("SELECT name FROM sqlite_schema WHERE sql LIKE 'CREATE VIRTUAL%'").scalars()
        )


async def server_answers(http_as, server) -> None:
    assert server.process.poll() is None
    assert (await http_as(None).get("/ok")).status_code == 200


@pytest.mark.parametrize("asker", ["reviewer1", "supervisor1"])
async def test_the_crashing_sequence_is_refused_and_the_server_lives(
    client_as, http_as, server, ledger, asker
):
    """staff, read and approved write: each step refused by name; the server answers; nothing written."""
    before = ledger.snapshot()
    replies = {statement: await console(client_as, asker, statement) for statement in [*CRASH, *OTHER_NATIVE]}
    for statement, reply in replies.items():
        assert reply.startswith("execute_sql did not run: The SQL console does not allow"), (statement, reply)
    assert "0x" not in replies[CRASH[0]]
    assert "function fts3_tokenizer()" in replies[CRASH[0]]
    assert "function fts3_tokenizer()" in replies[CRASH[1]]
    assert "module fts3 " in replies[CRASH[2]]
    assert "module fts3tokenize " in replies[CRASH[3]]
    assert "function load_extension()" in replies[OTHER_NATIVE[0]]
    assert "PRAGMA writable_schema" in replies[OTHER_NATIVE[2]]
    await server_answers(http_as, server)
    assert f"[{{'n': {before['orders']}}}]" in await console(client_as, asker, COUNT)
    assert ledger.snapshot() == before
    assert virtual_tables(ledger) == []


async def test_requesters_and_strangers_reach_no_console(http_as, server, ledger):
    """requester1: 403 running ops with the finding's SQL; anonymous: 401; nothing ran, the server lives."""
    before = ledger.snapshot()
    for statement in CRASH[:2]:
        body = {
            "assistant_id": "ops",
            "input": {"messages": [{"role": "user", "content": phrases.run_sql(statement)}]},
        }
        refusal = await http_as("requester1").post("/runs/wait", json=body)
        assert refusal.status_code == 403, refusal.text
        stranger = await http_as(None).post("/runs/wait", json=body)
        assert stranger.status_code == 401, stranger.text
    await server_answers(http_as, server)
    assert ledger.snapshot() == before


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def busy_worker(server) -> int | None:
    """The server's SQL worker that is burning CPU now (the endless statement's), if any."""
    workers = [
        pid
        for pid in descendants(server.process.pid)
        if b"services.sql.worker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    before = {pid: cpu_ticks(pid) for pid in workers}
    time.sleep(0.3)  # a sampling interval of the CPU counters, not a wait for an outcome
    return next((pid for pid in workers if cpu_ticks(pid) > before[pid] + 5), None)


async def test_a_worker_crashed_mid_statement_fails_that_statement_only(client_as, http_as, server, ledger):
    """SIGSEGV in an approved statement's worker: the tool says so, nothing recorded; the next read runs."""
    before = ledger.snapshot()
    asker = client_as("reviewer1")
    thread_id, thread = await start(asker, phrases.run_sql(ENDLESS_WRITE), "ops")
    assert thread["status"] == "interrupted"
    state = await asker.threads.get_state(thread_id)
    ids = [i["id"] for task in state["tasks"] for i in task["interrupts"]]
    approval = asyncio.create_task(
        client_as(APPROVER["reviewer1"]).runs.wait(
            thread_id, "ops", command={"resume": dict.fromkeys(ids, APPROVE)}
        )
    )
    deadline = time.monotonic() + 25
    while (pid := await asyncio.to_thread(busy_worker, server)) is None:
        assert time.monotonic() < deadline, "no SQL worker of the server ran the approved statement"
        assert not approval.done(), await approval
    os.kill(pid, signal.SIGSEGV)
    await approval
    reply = (await asker.threads.get_state(thread_id))["values"]["messages"][-1]["content"]
    assert "execute_sql did not run" in reply, reply
    assert "killed by SIGSEGV" in reply
    assert "changed nothing" in reply
    await server_answers(http_as, server)
    assert f"[{{'n': {before['orders']}}}]" in await console(client_as, "supervisor1", COUNT)
    assert ledger.snapshot() == before
