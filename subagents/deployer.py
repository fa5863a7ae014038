"""`deployer`: the ops subagent that asks a reviewer to sign a deployment off before reporting it."""

from __future__ import annotations

from agents.ops_policy import deployer_policy
from hitl.deep_agent import SubagentSpec
from tools.approval import build_approval_tool

NAME = "deployer"


def deployer(decider: str = "reviewer") -> SubagentSpec:
    """The spec, with its own `request_approval` tool."""
    return SubagentSpec(
        name=NAME,
        description="Deploys a version to an environment once a reviewer has signed it off.",
        system_prompt="You deploy releases. Ask with request_approval first, then report the answer.",
        tools=[build_approval_tool(default_agent=NAME)],
        interrupt_on=deployer_policy(decider),
    )
