"""The lab agent: a team's agent whose only tools come from misbehaving MCP servers (`tests.mcp_lab.servers`).

It declares four servers as any team would (`lab`, `lab-mirror` and `lab-broken`, reached at the
URLs in `LAB_MCP_URL`, `LAB_MIRROR_MCP_URL` and `LAB_BROKEN_MCP_URL`, and `down`, whose URL nobody
serves), each with a 2 s timeout, and names two tools in its policy: `lab-mirror.read_note`
(read-only, as the server says:
gated all the same) and `lab.archive_note` (a supervisor decides). Its gate works per call. Offline,
its model calls exactly what it is told, offered or not: "call <tool> with <JSON args>".
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from pydantic import Field

from hitl import create_deep_agent
from hitl.mcp import McpServer
from hitl.model.scripted import Script
from hitl.model.scripted.script import Call
from hitl.policy.gates import ToolGate
from hitl.settings import Settings

if TYPE_CHECKING:
    from langgraph.types import Checkpointer

    from hitl.model.scripted.conversation import Conversation
    from hitl.model.scripted.script import Reply


class LabSettings(Settings):
    """The layer's settings, and where the lab's servers are."""

    lab_mcp_url: str = Field(default="", description="The lab server's URL.")
    lab_mirror_mcp_url: str = Field(default="", description="The lab's mirror server's URL.")
    lab_broken_mcp_url: str = Field(default="", description="The server whose listing no SDK reads.")
    lab_down_mcp_url: str = Field(default="", description="A URL nobody serves.")


LAB = McpServer("lab", url_setting="LAB_MCP_URL", timeout_seconds=2)
MIRROR = McpServer("lab-mirror", url_setting="LAB_MIRROR_MCP_URL", timeout_seconds=2)
BROKEN = McpServer("lab-broken", url_setting="LAB_BROKEN_MCP_URL", timeout_seconds=2)
DOWN = McpServer("down", url_setting="LAB_DOWN_MCP_URL", timeout_seconds=2)
ASKED = re.compile(r"^call (?P<tool>[\w-]+) with (?P<args>\{.*\})$", re.DOTALL)


def lab_script(chat: Conversation) -> Reply | None:
    """Call the tool the request names with its JSON args; then say what came back."""
    match = ASKED.match(chat.request)
    if match is None:
        return None
    tool = match["tool"]
    if (result := chat.last(tool)) is not None:
        return f"{tool}: {'ok' if result.ok else 'failed'}: {result.content}"
    return [Call(tool, json.loads(match["args"]))]  # offered or not: a model may call any name


def make_graph(settings: LabSettings | None = None, checkpointer: Checkpointer | None = None) -> Any:
    """The lab agent, on `settings` (the environment by default)."""
    return create_deep_agent(
        None,
        [],
        name="mcp_lab",
        system_prompt="Call the lab's tools as asked.",
        interrupt_on={
            "lab-mirror.read_note": ToolGate(allowed_decisions=("approve", "reject")),
            "lab.archive_note": ToolGate(allowed_decisions=("approve", "reject"), decider="supervisor"),
        },
        interrupt_mode="per_call",
        mcp_servers=[LAB, MIRROR, BROKEN, DOWN],
        offline=Script(lab_script),
        settings=settings or LabSettings(),
        checkpointer=checkpointer,
    )


graph = make_graph()
