"""`make dev` on a taken PORT stops at once with a line saying so, before announcing any address."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PREBUILT = ("-o", ".env", "-o", ".venv/.installed", "-o", "web/dist/index.html")
"""Make's own setup steps are not what this checks: treat them as done."""


def test_make_dev_stops_when_the_port_is_taken():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        done = subprocess.run(
            ["make", "-s", *PREBUILT, "dev", f"PORT={port}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode != 0
    assert f"Port {port} on 127.0.0.1 is taken" in done.stderr
    assert f"make dev PORT={port + 1}" in done.stderr
    assert "Serving on" not in done.stdout


def test_make_dev_stops_when_a_server_beside_it_cannot_have_its_port():
    """DEV_PORTS (port:VARIABLE of a server started beside the agents) taken: stops, naming VARIABLE."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        taken = listener.getsockname()[1]
        done = subprocess.run(
            ["make", "-s", *PREBUILT, "dev", f"PORT={free_port()}", f"DEV_PORTS={taken}:BESIDE_PORT"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode != 0
    assert f"Port {taken} on 127.0.0.1 is taken" in done.stderr
    assert f"make dev BESIDE_PORT={taken + 1}" in done.stderr
    assert "Serving on" not in done.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.runtime.port_check", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_a_free_port_passes_and_a_bad_one_is_named():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    assert check(str(free)).returncode == 0
    bad = check("70000")
    assert (bad.returncode, "PORT must be a number from 1 to 65535" in bad.stderr) == (1, True)
