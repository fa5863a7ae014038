"""`make dev` when the server cannot start: a configuration error ends it, a code error waits for a fix.

Each test runs `make dev` itself in a clean copy of HEAD (`tests.newcomer`), in a shell with none
of the test run's variables, with its `.env` or its code made wrong first. A bad `HITL_USERS` entry
and a policy's group that nobody is in end `make dev` non-zero, the error the last line before
make's own; an agent that fails to import keeps it alive, its last line saying that it waits for a
fix, and the fix saved serves `/ok`.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from server.http.outgoing import tls
from server.runtime.replicas import free_port, stop
from tests.newcomer import PREBUILT, clean_copy, shell_env

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = [pytest.mark.server, pytest.mark.long]

ROOT = Path(__file__).resolve().parents[2]
MAKES_OWN = re.compile(r"^make(\[\d+\])?: ")
"""make's own last words on a failed recipe (`make: *** [Makefile:87: dev] Error 3`)."""
CONFIGURATION = "The server cannot start with this configuration: "
WAITS = "make dev: the server stopped (exit status 3; its error is above). It waits for a fix"


@pytest.fixture
def copy(tmp_path) -> Path:
    """A clean copy of HEAD with the `.env` make would lay from `.env.example`."""
    made = clean_copy(ROOT, tmp_path / "hitl-agent-server")
    (made / ".env").write_text((made / ".env.example").read_text())
    return made


def with_env_line(copy: Path, line: str) -> None:
    """Put `line` at the end of the copy's `.env` (the last line of a name wins)."""
    env = copy / ".env"
    env.write_text(f"{env.read_text()}\n{line}\n")


def ended_make_dev(copy: Path) -> subprocess.CompletedProcess[str]:
    """`make dev` run to its end (it must end by itself), stdout and stderr as one."""
    return subprocess.run(
        ["make", *PREBUILT, "dev", f"PORT={free_port()}"],
        cwd=copy,
        env=shell_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=240,
        check=False,
    )


def last_line_before_makes_own(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip() and not MAKES_OWN.match(line)]
    return lines[-1]


def test_a_malformed_hitl_users_entry_ends_make_dev_with_the_error_last(copy):
    """HITL_USERS=ana: make dev exits non-zero by itself; its last line names the entry and the form."""
    with_env_line(copy, "HITL_USERS=ana")
    done = ended_make_dev(copy)
    assert done.returncode != 0, done.stdout[-3000:]
    last = last_line_before_makes_own(done.stdout)
    assert last.startswith(CONFIGURATION), done.stdout[-3000:]
    assert "HITL_USERS entry 'ana' must be name:role:token" in last


def test_a_group_nobody_is_in_ends_make_dev_with_the_error_last(copy):
    """refunds decided by finance, nobody in finance: make dev exits non-zero, the group named last."""
    with_env_line(copy, "REFUND_DECIDER_GROUP=finance")
    done = ended_make_dev(copy)
    assert done.returncode != 0, done.stdout[-3000:]
    last = last_line_before_makes_own(done.stdout)
    assert last.startswith(CONFIGURATION), done.stdout[-3000:]
    assert "'finance', a group nobody here is in" in last


def polled(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether `condition()` holds within `seconds` (asked every half second)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def test_a_code_error_keeps_make_dev_waiting_says_so_and_a_saved_fix_serves(copy):
    """an agent that raises on import: make dev stays, its last line says it waits; the fix saved: /ok."""
    agent = copy / "agents" / "ops.py"
    fixed = agent.read_text()
    agent.write_text(f"{fixed}\nraise RuntimeError('broken on purpose')\n")
    port = free_port()
    log = copy.parent / "make-dev.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["make", *PREBUILT, "dev", f"PORT={port}"],
            cwd=copy,
            env=shell_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def last_line() -> str:
            lines = [line for line in log.read_text().splitlines() if line.strip()]
            return lines[-1] if lines else ""

        assert polled(lambda: last_line().startswith(WAITS) or process.poll() is not None, 180), last_line()
        assert process.poll() is None, log.read_text()[-3000:]
        assert "broken on purpose" in log.read_text()
        assert CONFIGURATION not in log.read_text()

        agent.write_text(fixed)

        def serves() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/ok", timeout=2, verify=tls()).status_code == 200
            except httpx.HTTPError:
                return False

        assert polled(lambda: serves() or process.poll() is not None, 180), log.read_text()[-3000:]
        assert process.poll() is None, log.read_text()[-3000:]
        assert "make dev: agents/ops.py changed: starting the server again" in log.read_text()
    finally:
        stop(process)
