"""`refund_specialist`: a subagent that only handles refunds, and asks before every one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.support_policy import refund_specialist_policy
from hitl.deep_agent import SubagentSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from langchain_core.tools import BaseTool

    from agents.settings import DemoSettings
    from services.registry import Services

NAME = "refund_specialist"
REFUND_TOOLS = ("get_order", "get_refund_policy", "issue_refund")


def refund_specialist(
    tools: list[BaseTool], settings: DemoSettings, services: Callable[[], Services] | None = None
) -> SubagentSpec:
    """The spec, using the refund tools out of the parent's `tools` (`services` for its review text)."""
    return SubagentSpec(
        name=NAME,
        description="Handles refunds carefully; every refund it issues is reviewed by a person.",
        system_prompt="You issue refunds. Check the order and the policy first, then refund.",
        tools=[t for t in tools if t.name in REFUND_TOOLS],
        interrupt_on=refund_specialist_policy(settings, services),
        description_prefix="refund_specialist asks before every refund",
    )
