"""The MCP servers a test server's agents use, started beside it and stopped by PID: billing and the lab.

`mcp_beside(workdir)` starts the demo's billing server (`services.billing_mcp`, on the server's own
business database: the same `DATA_DIR`) and the lab's misbehaving servers (`tests.mcp_lab.servers`),
each on a free loopback port, waits until they answer, and gives the environment and the
`langgraph.json` (the repository's graphs and the lab agent, `mcp_lab`) the server starts with.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from server.runtime.replicas import free_port, stop

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
BILLING_AUTHORIZATION = "Bearer test-billing-token"
LAB_GRAPH = "tests.mcp_lab.agent:graph"


@dataclass
class McpBeside:
    """The MCP servers beside one test server: where they are, and the lab's ledger and switches."""

    env: dict[str, str]
    config: Path
    lab_data: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    billing: tuple[list[str], Path, dict[str, str]] | None = None
    """How billing was started (command, work directory, environment): `restart_billing` does it again."""

    def restart_billing(self) -> None:
        """Stop billing by its PID and start it again on the same port (its request-state key is new)."""
        assert self.billing is not None
        command, workdir, env = self.billing
        stop(self.processes[0])
        self.processes[0] = _started(command, workdir, env, "billing.log")
        _answering(self.env["BILLING_MCP_URL"], self.processes[0], workdir / "billing.log")

    def lab_calls(self, tool: str | None = None) -> list[dict[str, Any]]:
        """Every call a lab tool ran (of `tool`, if given), oldest first: the lab's business database."""
        with sqlite3.connect(self.lab_data / "ledger.db") as db:
            db.row_factory = sqlite3.Row
            rows = [dict(r) for r in db.execute("SELECT * FROM calls ORDER BY rowid")]
        return [r for r in rows if tool is None or r["tool"] == tool]

    def switch(self, **switches: bool) -> None:
        """Change what the lab lists from now on (`added`, `changed`, `not_read_only`)."""
        path = self.lab_data / "listing.json"
        current = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**current, **switches}))


def _started(command: list[str], workdir: Path, env: dict[str, str], log: str) -> subprocess.Popen[bytes]:
    with (workdir / log).open("wb") as out:
        return subprocess.Popen(
            command, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _answering(url: str, process: subprocess.Popen[bytes], log: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    with httpx.Client(timeout=1) as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                msg = f"{url} exited with {process.returncode}:\n{log.read_text()[-2000:]}"
                raise RuntimeError(msg)
            try:
                http.get(url)
            except httpx.TransportError:
                time.sleep(0.2)
                continue
            return
    msg = f"{url} did not answer in {seconds} s:\n{log.read_text()[-2000:]}"
    raise RuntimeError(msg)


@contextmanager
def mcp_beside(workdir: Path, *, lab_agent: bool = True, lab: bool = True) -> Iterator[McpBeside]:
    """Billing and the lab for a test server run from `workdir`, for the length of a `with` block.

    `lab_agent=False` serves the repository's graphs only (the lab's servers still run); `lab=False`
    starts billing alone (and serves the repository's graphs only).
    """
    lab_agent = lab_agent and lab
    billing_port, lab_port, down_port = free_port(), free_port(), free_port()
    env = {
        **os.environ,
        "DATA_DIR": "data",
        "BILLING_MCP_AUTHORIZATION": BILLING_AUTHORIZATION,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    config = json.loads((ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str(ROOT)]
    config["graphs"] = {**config["graphs"], **({"mcp_lab": LAB_GRAPH} if lab_agent else {})}
    served = workdir / "langgraph.mcp.json"
    served.write_text(json.dumps(config, indent=2))
    beside = McpBeside(
        env={
            "BILLING_MCP_URL": f"http://127.0.0.1:{billing_port}/mcp",
            "BILLING_MCP_AUTHORIZATION": BILLING_AUTHORIZATION,
            "LAB_MCP_URL": f"http://127.0.0.1:{lab_port}/lab/mcp",
            "LAB_MIRROR_MCP_URL": f"http://127.0.0.1:{lab_port}/mirror/mcp",
            "LAB_BROKEN_MCP_URL": f"http://127.0.0.1:{lab_port}/broken/mcp",
            "LAB_DOWN_MCP_URL": f"http://127.0.0.1:{down_port}/mcp",
            "MCP_LIST_SECONDS": "1",  # a tool the lab adds is offered within a second
        },
        config=served,
        lab_data=workdir / "mcp-lab",
    )
    try:
        command = [sys.executable, "-m", "services.billing_mcp", "--port", str(billing_port)]
        beside.billing = (command, workdir, env)
        billing = _started(command, workdir, env, "billing.log")
        beside.processes.append(billing)
        lab_server: subprocess.Popen[bytes] | None = None
        if lab:
            lab_server = _started(
                [
                    sys.executable,
                    "-m",
                    "tests.mcp_lab.servers",
                    "--port",
                    str(lab_port),
                    "--data",
                    str(beside.lab_data),
                ],
                workdir,
                env,
                "mcp-lab.log",
            )
            beside.processes.append(lab_server)
        _answering(f"http://127.0.0.1:{billing_port}/mcp", billing, workdir / "billing.log")
        if lab_server is not None:
            _answering(f"http://127.0.0.1:{lab_port}/health", lab_server, workdir / "mcp-lab.log")
        yield beside
    finally:
        for process in beside.processes:
            stop(process)
