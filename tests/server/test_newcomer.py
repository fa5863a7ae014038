"""A newcomer's first hour, as they run it: a clean copy of HEAD, `make dev`, the README's walk-through.

The copy gets the `.env` that make lays from `.env.example` (relative `DATA_DIR=data` and all),
the server is started by `make dev` itself in a shell with none of the test's variables, and the
README's terminal walk-through runs verbatim (its port moved to a free one, `<thread>` filled in):
A1024 asked for, approved, refunded once. Only the setup make would do on a fresh machine (the
venv, the web build) is shared with this checkout, as `make -o` treats them as done.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from server.replicas import free_port, stop

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
SHARED = (".venv", "web/dist", "web/node_modules")
"""What make would build on a fresh machine: linked from this checkout instead (minutes of installs)."""
PREBUILT = ("-o", ".venv/.installed", "-o", "web/dist/index.html")
SHELL = ("PATH", "HOME", "LANG", "LC_ALL", "USER", "TERM")
"""The variables a newcomer's shell has; nothing of the test run's (DATA_DIR, HITL_*, ...)."""
THREAD = re.compile(r"thread ([0-9a-f-]{36})")


def walk_through() -> list[str]:
    """The commands of the README's terminal walk-through, in order, comments and blanks left out."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Walk-through: one refund, from a terminal", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory) -> Iterator[tuple[Path, int]]:
    """A clean copy of HEAD served by `make dev PORT=<free>`, started as a newcomer starts it."""
    copy = tmp_path_factory.mktemp("newcomer") / "hitl-agent-server"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(copy)], check=True, timeout=120)
    for part in SHARED:
        if (ROOT / part).exists():
            (copy / part).parent.mkdir(parents=True, exist_ok=True)
            (copy / part).symlink_to(ROOT / part)
    assert not (copy / ".env").exists()
    port = free_port()
    env = {key: os.environ[key] for key in SHELL if key in os.environ}
    log = copy.parent / "make-dev.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["make", *PREBUILT, "dev", f"PORT={port}"],
            cwd=copy,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert process.poll() is None, f"make dev exited:\n{log.read_text()[-3000:]}"
            assert "Application startup failed" not in log.read_text(), log.read_text()[-3000:]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail(f"make dev did not serve /ok on {port} in 90 s:\n{log.read_text()[-3000:]}")
        yield copy, port
    finally:
        stop(process)


def test_make_dev_serves_a_clean_copy_with_the_env_example_values(newcomer):
    """`make dev` laid `.env` from `.env.example` untouched, and serves with its relative DATA_DIR."""
    copy, port = newcomer
    assert (copy / ".env").read_text() == (copy / ".env.example").read_text()
    assert "DATA_DIR=data\n" in (copy / ".env").read_text()
    assert (copy / "data" / "business.db").is_file()
    assert (copy / "data" / "checkpoints.db").is_file()
    info = httpx.get(f"http://127.0.0.1:{port}/info", timeout=10)
    assert info.status_code == 200
    assert {"version", "langgraph_py_version", "flags"} <= set(info.json())


def test_the_readme_walk_through_refunds_a1024_once(newcomer):
    """README, verbatim: A1024's 899 refund is asked, listed, approved, written once and audited."""
    copy, port = newcomer
    env = {key: os.environ[key] for key in SHELL if key in os.environ}
    commands = walk_through()
    setup = [c for c in commands if c.startswith(("export ", "alias "))]
    said: dict[str, str] = {}
    thread = ""
    for command in commands:
        script = "\n".join(["shopt -s expand_aliases", *setup, command.replace("<thread>", thread)])
        done = subprocess.run(
            ["bash", "-c", script.replace("127.0.0.1:2024", f"127.0.0.1:{port}")],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        said[command] = done.stdout
        if not thread and (found := THREAD.search(done.stdout)):
            thread = found.group(1)

    def output_of(part: str) -> str:
        return next(out for command, out in said.items() if part in command)

    assert thread, said
    assert "waits again: 1 approval pending" in output_of("hitl run support")
    assert thread in output_of("hitl inbox")
    assert "issue_refund" in output_of("hitl show")
    assert "Refunded 899 on order A1024" in output_of("hitl approve")
    rows = [row.split("|") for row in output_of("sqlite3").splitlines()]
    assert [(order, float(amount)) for order, amount, _call in rows] == [("A1024", 899.0)]
    records = json.loads(output_of("/audit/"))["records"]
    assert [r["decision"] for r in records if r.get("reviewer") == "supervisor1"] == ["approve"]
    with sqlite3.connect(copy / "data" / "business.db") as db:
        assert db.execute("select count(*) from refunds where order_id = 'A1024'").fetchone() == (1,)
