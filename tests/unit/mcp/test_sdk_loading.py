"""The `mcp` SDK loads at a server's first listing or call, never with the graph (0.4 s of every import).

Run in a fresh interpreter: a team's agent declares its CRM's server; with no URL set, building it,
offering its tools and refreshing its servers load nothing of the SDK; with the URL set (a loopback port
nobody serves), the first listing loads it and fails in words, as any listing of a server that is down does.
"""

from __future__ import annotations

import json
import os

from tests.fresh_interpreter import last_line

PROBE = """
import asyncio, json, sys
from pydantic import Field
from hitl import McpServer, create_deep_agent
from hitl.mcp.toolbox import toolboxes
from hitl.settings import Settings

class TeamSettings(Settings):
    crm_mcp_url: str = Field(default="")

def build(url):
    crm = McpServer("crm", url_setting="CRM_MCP_URL", timeout_seconds=2)
    settings = TeamSettings(crm_mcp_url=url)
    return create_deep_agent(None, [], name="crm_agent", system_prompt="Use the CRM.", interrupt_on={},
                             mcp_servers=[crm], settings=settings)

build("")
for box in toolboxes():
    asyncio.run(box.refresh(force=True))
    box.offered()
quiet = "mcp" in sys.modules
build("http://127.0.0.1:9/mcp")
crm = [b for b in toolboxes() if b.endpoints["crm"].configured]  # the agent's and its subagent's
asyncio.run(crm[0].refresh(force=True))
print(json.dumps({"quiet": quiet, "loaded": "mcp" in sys.modules, "problem": crm[0].states["crm"].problem}))
"""


def test_an_agent_whose_servers_have_no_url_never_loads_the_sdk() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CRM_MCP_URL"}
    found = json.loads(last_line(PROBE, env=env))
    assert found["quiet"] is False
    assert found["loaded"] is True
    assert found["problem"].startswith("crm could not be reached for its tool list")
