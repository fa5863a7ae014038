"""A newcomer's first hour, as they run it: a clean copy of HEAD, `make dev`, the terminal walk-through.

The copy gets the `.env` that make lays from `.env.example` (relative `DATA_DIR=data` and all),
the server is started by `make dev` itself in a shell with none of the test's variables, and the
terminal walk-through of docs/reviewing.md (the README links it) runs verbatim (its port moved to a
free one, `<thread>` filled in): A1024 asked for, approved, refunded once. Only the setup make
would do on a fresh machine (the venv, the web build) is shared with this checkout, as `make -o`
treats them as done.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from server.http.outgoing import tls
from tests.newcomer import as_typed, clean_copy, make_dev

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
THREAD = re.compile(r"thread ([0-9a-f-]{36})")


def walk_through(title: str = "one refund, from a terminal") -> list[str]:
    """The commands of one terminal walk-through of docs/reviewing.md, in order, no comments, no blanks."""
    text = (ROOT / "docs" / "reviewing.md").read_text()
    section = text.split(f"## Walk-through: {title}", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory) -> Iterator[tuple[Path, int]]:
    """A clean copy of HEAD served by `make dev PORT=<free>`, started as a newcomer starts it."""
    copy = clean_copy(ROOT, tmp_path_factory.mktemp("newcomer") / "hitl-agent-server")
    assert not (copy / ".env").exists()
    with make_dev(copy) as port:
        yield copy, port


def test_make_dev_serves_a_clean_copy_with_the_env_example_values(newcomer):
    """`make dev` laid `.env` from `.env.example` untouched, and serves with its relative DATA_DIR."""
    copy, port = newcomer
    assert (copy / ".env").read_text() == (copy / ".env.example").read_text()
    assert "DATA_DIR=data\n" in (copy / ".env").read_text()
    assert (copy / "data" / "checkpoints.db").is_file()
    # The business database is made on first use: by the watcher's first pass, just after `/ok`.
    assert appears(copy / "data" / "business.db", seconds=30)
    info = httpx.get(f"http://127.0.0.1:{port}/info", timeout=10, verify=tls())
    assert info.status_code == 200
    assert {"version", "langgraph_py_version", "flags"} <= set(info.json())


def appears(path: Path, seconds: float) -> bool:
    """Whether `path` is a file within `seconds`."""
    deadline = time.monotonic() + seconds
    while not path.is_file():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_the_readme_walk_through_refunds_a1024_once(newcomer):
    """the walk-through, verbatim: A1024's 899 refund is asked, listed, approved, written once and audited."""
    copy, port = newcomer
    commands = walk_through()
    setup = [c for c in commands if c.startswith(("export ", "alias "))]
    said: dict[str, str] = {}
    thread = ""
    for command in commands:
        said[command] = as_typed(copy, port, [*setup, command.replace("<thread>", thread)])
        if not thread and (found := THREAD.search(said[command])):
            thread = found.group(1)

    def output_of(part: str) -> str:
        return next(out for command, out in said.items() if part in command)

    assert thread, said
    assert "waits: 1 approval pending" in output_of("hitl run support")
    assert thread in output_of("hitl inbox")
    assert "issue_refund" in output_of("hitl show")
    assert "Refunded 899 on order A1024" in output_of("hitl approve")
    rows = [row.split("|") for row in output_of("sqlite3").splitlines()]
    assert [(order, float(amount)) for order, amount, _call in rows] == [("A1024", 899.0)]
    records = json.loads(output_of("/audit/"))["records"]
    assert [r["decision"] for r in records if r.get("reviewer") == "supervisor1"] == ["approve"]
    with sqlite3.connect(copy / "data" / "business.db") as db:
        assert db.execute("select count(*) from refunds where order_id = 'A1024'").fetchone() == (1,)


def test_make_dev_serves_the_billing_mcp_server_beside_the_agents(newcomer):
    """`make dev` printed billing's address and serves it: support looks an invoice up through it at once."""
    copy, port = newcomer
    log = (copy.parent / f"{copy.name}-make-dev.log").read_text()
    assert re.search(r"MCP server billing: http://127\.0\.0\.1:\d+/mcp", log), log[-2000:]
    setup = [c for c in walk_through() if c.startswith(("export ", "alias "))]
    said = as_typed(
        copy, port, [*setup, "HITL_TOKEN=dev-requester1 hitl run support 'Look up invoice INV-1024'"]
    )
    assert "Invoice INV-1024 for order A1024: 899, open" in " ".join(said.split())


WAITING = re.compile(r"waiting  ([0-9a-f]{32})")


def test_the_mcp_question_walk_through_writes_one_credit_note(newcomer):
    """the MCP walk-through, verbatim: billing's two questions answered by the owner; one credit note."""
    copy, port = newcomer
    commands = walk_through("a question from an MCP server, from a terminal")
    setup = [c for c in commands if c.startswith(("export ", "alias "))]
    said: list[str] = []
    thread = interrupt = ""
    for command in commands[len(setup) :]:
        out = as_typed(
            copy, port, [*setup, command.replace("<thread>", thread).replace("<interrupt>", interrupt)]
        )
        said.append(" ".join(out.split()))
        if not thread and (found := THREAD.search(out)):
            thread = found.group(1)
        if "hitl show" in command and (waiting := WAITING.search(out)):
            interrupt = waiting.group(1)
    assert "Why should INV-2048 be credited 20?" in said[2]
    assert "reason text, required, 3 to 500 characters" in said[2]
    assert "Credit 20 on INV-2048 (invoice 59)?" in said[4]
    assert "of 20 on INV-2048: Arrived late" in said[5]
    assert said[6] == "INV-2048|20.0|Arrived late"
    assert "verified: 3 receipt(s) and the audit chain" in said[7]
    with sqlite3.connect(copy / "data" / "business.db") as db:
        assert db.execute("select count(*) from credit_notes where invoice_id = 'INV-2048'").fetchone() == (
            1,
        )
