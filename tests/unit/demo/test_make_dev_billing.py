"""`make dev` beside the demo's billing MCP server (services/billing.mk): a taken MCP_PORT stops it."""

from __future__ import annotations

import socket
import subprocess

from tests.unit.runtime.test_make_dev_port import PREBUILT, ROOT, free_port


def test_make_dev_stops_when_billings_port_is_taken():
    """MCP_PORT taken (the demo's billing server): make dev stops at once, naming the variable to change."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        taken = listener.getsockname()[1]
        done = subprocess.run(
            ["make", "-s", *PREBUILT, "dev", f"PORT={free_port()}", f"MCP_PORT={taken}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode != 0
    assert f"Port {taken} on 127.0.0.1 is taken" in done.stderr
    assert f"make dev MCP_PORT={taken + 1}" in done.stderr
    assert "Serving on" not in done.stdout
