"""The `support` graph: customer service with refunds, e-mails, questions to the user, and invoices.

Its invoice tools come from the billing MCP server (`BILLING`, `services/billing_mcp.py`), declared
here as a team declares its own servers: the settings holding its URL and token, never the values,
and who answers its questions mid-call (`BILLING_ANSWERED_BY`: the thread's owner, or a group).
`graph` is what `langgraph.json` serves (no checkpointer: the server owns persistence);
`make_graph` builds the same agent for scripts and tests.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agents.offline import SUPPORT
from agents.settings import DemoSettings, demo_settings
from agents.support_policy import support_policy
from hitl.deep_agent import SubagentSpec, build_deep_agent
from hitl.mcp import McpServer
from services.registry import Services, default_services
from subagents.refund_specialist import refund_specialist
from tools.support import build_support_tools

if TYPE_CHECKING:
    from collections.abc import Callable

    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Checkpointer

    from hitl.policy.gates import Policy

NAME = "support"
DESCRIPTION_PREFIX = "support asks before acting for a customer"
SYSTEM_PROMPT = (
    "You are a customer-service agent for an online shop. Look orders up before acting, "
    "follow the refund policy, and ask the user when something is missing. Invoices are "
    "billing's: look them up, void or credit them with its tools."
)
BILLING = McpServer(
    "billing", url_setting="BILLING_MCP_URL", header_settings={"Authorization": "BILLING_MCP_AUTHORIZATION"}
)
"""The billing MCP server: its URL and token come from BILLING_MCP_URL and BILLING_MCP_AUTHORIZATION."""


def billing(settings: DemoSettings) -> McpServer:
    """`BILLING`, its questions answered by whom BILLING_ANSWERED_BY names (the thread's owner by default)."""
    return replace(BILLING, answered_by=settings.billing_answered_by)


def make_graph(
    *,
    model: BaseChatModel | None = None,
    checkpointer: Checkpointer | None = None,
    services: Services | None = None,
    settings: DemoSettings | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The `support` agent; defaults come from the settings."""
    settings = settings or demo_settings()
    tools, interrupt_on, subagents = _parts(settings, (lambda: services) if services else default_services)
    return build_deep_agent(
        NAME,
        settings=settings,
        model=model,
        system_prompt=SYSTEM_PROMPT,
        tools=tools,
        interrupt_on=interrupt_on,
        subagents=subagents,
        checkpointer=checkpointer,
        description_prefix=DESCRIPTION_PREFIX,
        offline=SUPPORT,
        mcp_servers=[billing(settings)],
    )


def _parts(
    settings: DemoSettings, services: Callable[[], Services]
) -> tuple[list[BaseTool], Policy, list[SubagentSpec]]:
    tools = build_support_tools(services)
    return tools, support_policy(settings, services), [refund_specialist(tools, settings, services)]


graph = make_graph()
