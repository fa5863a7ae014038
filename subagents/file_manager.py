"""`file_manager`: the ops subagent for workspace files, stricter than its parent (reads are gated)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.ops_policy import file_manager_policy
from hitl.deep_agent import SubagentSpec

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

NAME = "file_manager"
FILE_TOOLS = ("delete_file",)
"""Its own tools besides Deep Agents' file tools (read_file, write_file, ...), which every agent has."""


def file_manager(tools: list[BaseTool], decider: str = "reviewer") -> SubagentSpec:
    """The spec, using the file tools out of the parent's `tools`."""
    return SubagentSpec(
        name=NAME,
        description="Reads, writes and deletes workspace files; a person reviews every one, reads included.",
        system_prompt="You manage files in the workspace. Do exactly the file operation you are asked for.",
        tools=[t for t in tools if t.name in FILE_TOOLS],
        interrupt_on=file_manager_policy(decider),
    )
