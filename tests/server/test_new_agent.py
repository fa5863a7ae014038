"""Your own agent in five minutes, as the README has it: `hitl new agent invoices`, then `make dev`.

A clean copy of HEAD gets the agent from `hitl new agent`; `make dev` serves it; the request
the command printed, run verbatim, pauses on the gated tool; a reviewer approves; the tool runs
once. The server lists the agent (what the web app shows), and the generated tests and lint pass.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from server.http.outgoing import tls
from tests.devserver import TOKENS
from tests.newcomer import as_typed, clean_copy, make_dev, shell_env

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = [pytest.mark.server, pytest.mark.long]

ROOT = Path(__file__).resolve().parents[2]
THREAD = re.compile(r"thread ([0-9a-f-]{36})")
SETUP = ["export HITL_URL=http://127.0.0.1:2024", "alias hitl=.venv/bin/hitl"]
"""The README walk-through's first two lines."""


@pytest.fixture(scope="module")
def invoices(tmp_path_factory) -> Iterator[tuple[Path, int, str]]:
    """A clean copy with `hitl new agent invoices` run in it, served by `make dev`; its printed command."""
    copy = clean_copy(ROOT, tmp_path_factory.mktemp("new-agent") / "my-agents")
    made = subprocess.run(
        [str(copy / ".venv" / "bin" / "hitl"), "new", "agent", "invoices"],
        cwd=copy,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    command = made.stdout.strip().splitlines()[-1]
    assert command.startswith('hitl run invoices "'), made.stdout
    with make_dev(copy) as port:
        yield copy, port, command


def test_the_printed_request_pauses_and_a_reviewers_approve_runs_the_tool_once(invoices):
    """`hitl run invoices "<printed>"` waits; the reviewer's inbox has it; approve sends one update."""
    copy, port, command = invoices
    asked = as_typed(copy, port, [*SETUP, f"HITL_TOKEN=dev-requester1 {command}"])
    assert "waits: 1 approval pending" in asked
    found = THREAD.search(asked)
    assert found, asked
    thread = found.group(1)
    inbox = as_typed(copy, port, [*SETUP, "HITL_TOKEN=dev-reviewer1 hitl inbox --json"])
    assert thread in inbox
    assert "send_update" in inbox
    approved = as_typed(copy, port, [*SETUP, f"HITL_TOKEN=dev-reviewer1 hitl approve {thread}"])
    assert "Sent the update to ana@example.com" in approved
    with sqlite3.connect(copy / "data" / "business.db") as db:
        assert db.execute("select recipient from invoices_outbox").fetchall() == [("ana@example.com",)]


def test_the_server_lists_the_new_agent_beside_the_others(invoices):
    """POST /assistants/search (what the web app lists): invoices is served, as the demo's agents are."""
    _, port, _ = invoices
    answer = httpx.post(
        f"http://127.0.0.1:{port}/assistants/search",
        json={"limit": 100},
        headers={"Authorization": f"Bearer {TOKENS['requester1']}"},
        timeout=10,
        verify=tls(),
    )
    answer.raise_for_status()
    assert "invoices" in {assistant["graph_id"] for assistant in answer.json()}


def test_the_generated_tests_and_lint_pass(invoices):
    """the tests `hitl new agent` wrote pass in the copy (one through its own server); lint is clean."""
    copy, _, _ = invoices
    bin_dir = copy / ".venv" / "bin"
    written = ["agents/invoices.py", "tools/invoices.py", "tests/graphs/test_invoices.py"]
    written.append("tests/server/test_invoices_server.py")
    if (ROOT / ".mypy_cache").is_dir():
        # The checkout's mypy cache, where `make lint` left one (CI lints before it tests): mypy then
        # reuses its analysis of the dependencies (~20 s of CPU when cold) and checks the new files in full.
        shutil.copytree(ROOT / ".mypy_cache", copy / ".mypy_cache")
    for check in (
        [str(bin_dir / "ruff"), "check", *written],
        [str(bin_dir / "ruff"), "format", "--check", *written],
        [str(bin_dir / "mypy"), "agents/invoices.py", "tools/invoices.py"],
        [str(bin_dir / "pytest"), "-q", "-p", "no:cacheprovider", *written[2:]],
    ):
        done = subprocess.run(check, cwd=copy, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, f"{' '.join(check)}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
