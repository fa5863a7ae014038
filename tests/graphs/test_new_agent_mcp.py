"""`hitl new agent NAME --mcp URL`: a team's agent with an MCP server in minutes, its URL in `.env`, not code.

The agent is written into a bare project (this `langgraph.json`, its `.env.example`) pointing at the lab's
MCP server (`tests.mcp_lab.servers`, on a free port); built in a fresh interpreter there, its first
listing offers the lab's tools and says which are gated. The generated module passes the linters.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from server.runtime.replicas import free_port, stop
from tests.mcp_lab.beside import _answering

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
HITL = Path(sys.executable).parent / "hitl"
LISTING = """
import asyncio
from hitl.policy.served import card_of
from agents.crm import make_graph
box = next(b for b in card_of(make_graph()).toolboxes if b.agent == "crm")
for line in asyncio.run(box.start()):
    print(line)
"""


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory) -> Iterator[str]:
    """The lab's MCP server on a free port; its `lab` server's URL."""
    port, workdir = free_port(), tmp_path_factory.mktemp("lab")
    command = [sys.executable, "-m", "tests.mcp_lab.servers", "--port", str(port), "--data", str(workdir)]
    with (workdir / "lab.log").open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _answering(f"http://127.0.0.1:{port}/health", process, workdir / "lab.log")
        yield f"http://127.0.0.1:{port}/lab/mcp"
    finally:
        stop(process)


def test_new_agent_with_mcp_gets_the_servers_tools_behind_its_gate(tmp_path, lab_url):
    """--mcp: its URL in .env only; the agent lists the lab's tools, read-only ones ungated; lint-clean."""
    project = tmp_path / "team"
    for package in ("agents", "tools"):  # a project's own packages, as `hitl new project` makes them
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text("")
    (project / "hitl").symlink_to(ROOT / "hitl")  # a project carries the layer (`hitl new project`)
    shutil.copy(ROOT / "langgraph.json", project / "langgraph.json")
    shutil.copy(ROOT / ".env.example", project / ".env.example")
    made = subprocess.run(
        [str(HITL), "new", "agent", "crm", "--mcp", lab_url],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert "wrote .env" in made.stdout
    module = (project / "agents" / "crm.py").read_text()
    assert lab_url not in module
    assert 'McpServer("crm", url_setting="CRM_MCP_URL")' in module
    assert f"CRM_MCP_URL={lab_url}\n" in (project / ".env").read_text()
    assert (project / ".env").read_text().startswith((project / ".env.example").read_text())
    assert json.loads((project / "langgraph.json").read_text())["graphs"]["crm"] == "agents.crm:graph"

    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{project}:{ROOT}", "MODEL": "scripted"}
    listed = subprocess.run(
        [sys.executable, "-c", LISTING],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr[-3000:]
    [line] = listed.stdout.strip().splitlines()
    assert line.startswith(f"MCP crm for crm at {lab_url}: ")
    assert "crm.read_note (read-only, ungated)" in line
    assert "crm.delete_note (gated: not read-only)" in line

    for check in (["ruff", "check"], ["ruff", "format", "--check"]):
        done = subprocess.run(
            [
                str(Path(sys.executable).parent / check[0]),
                *check[1:],
                "--config",
                str(ROOT / "pyproject.toml"),
                "agents/crm.py",
            ],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
