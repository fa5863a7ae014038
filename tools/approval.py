"""`request_approval`: a tool that asks a person to sign an action off and returns the answer.

For actions no single tool call captures ("deploy 1.4 to production"): the agent asks,
the reviewer answers yes or no with a reason, and the agent goes on knowing which.
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.types import interrupt
from pydantic import BaseModel, Field

from agents.settings import demo_settings
from hitl.contracts.decisions import ApprovalAnswer
from hitl.contracts.interrupts import ApprovalRequest
from hitl.gate.caller import requested_by
from hitl.policy.deadlines import Deadline
from tools.asking import asking_agent
from tools.results import as_json


class SignOff(BaseModel):
    """Arguments of `request_approval`."""

    action: str = Field(description="What needs signing off, e.g. 'Deploy version 1.4 to production'.")
    message: str = Field(description="What the reviewer should know to decide.")
    tool_call_id: Annotated[str, InjectedToolCallId]


def build_approval_tool(default_agent: str) -> BaseTool:
    """`request_approval`, attributed to the calling agent (`default_agent` outside a graph)."""

    @tool(args_schema=SignOff)
    def request_approval(action: str, message: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Ask a reviewer to approve an action; returns whether they did and why."""
        request = ApprovalRequest(
            type="approval_request",
            action=action,
            message=message,
            agent=asking_agent(default=default_agent),
            tool_call_id=tool_call_id,
            **requested_by(),  # type: ignore[typeddict-item]
            **Deadline(demo_settings().signoff_deadline_seconds).stamp(),  # type: ignore[typeddict-item]
        )
        answer = interrupt(request, response_schema=ApprovalAnswer)
        return as_json({"action": action, "approved": answer.approved, "reason": answer.reason})

    return request_approval
