"""The `mcp` SDK loads at a server's first listing or call, never with the graph (0.4 s of every import).

Run in a fresh interpreter: the lab agent declares four servers; with no URL set, building it, offering
its tools and refreshing its servers load nothing of the SDK; with one URL set (a loopback port nobody
serves), the first listing loads it and fails in words, as any listing of a server that is down does.
"""

from __future__ import annotations

import json
import os

from tests.fresh_interpreter import last_line

PROBE = """
import asyncio, json, sys
from tests.mcp_lab.agent import LabSettings, make_graph
from hitl.mcp.toolbox import toolboxes

make_graph(LabSettings())
for box in toolboxes():
    asyncio.run(box.refresh(force=True))
    box.offered()
quiet = "mcp" in sys.modules
make_graph(LabSettings(lab_down_mcp_url="http://127.0.0.1:9/mcp"))
down = [b for b in toolboxes() if b.endpoints["down"].configured]  # the agent's and its subagents'
asyncio.run(down[0].refresh(force=True))
print(json.dumps({"quiet": quiet, "loaded": "mcp" in sys.modules, "problem": down[0].states["down"].problem}))
"""


def test_an_agent_whose_servers_have_no_url_never_loads_the_sdk() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAB_")}
    found = json.loads(last_line(PROBE, env=env))
    assert found["quiet"] is False
    assert found["loaded"] is True
    assert found["problem"].startswith("down could not be reached for its tool list")
