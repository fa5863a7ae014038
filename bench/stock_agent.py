"""The reference agent: a stock `create_deep_agent(..., interrupt_on=...)` with our model and tools.

Same scripted model, same support tools, same system prompt, the same `refund_specialist`
subagent and the same decisions per tool as `agents.support`, but LangChain's own
`HumanInTheLoopMiddleware` (Deep Agents' `interrupt_on`, the subagent's too): no `ApprovalGate`,
no roles, no answer validation, no receipts. So the two differ in their approval layer only.
The benchmarks serve it beside `support` as `stock`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deepagents import SubAgent, create_deep_agent

from agents.offline import SUPPORT
from agents.settings import DemoSettings, demo_settings
from hitl.model.factory import make_model
from services.registry import Services, default_services
from tools.support import build_support_tools

if TYPE_CHECKING:
    from langchain.agents.middleware import InterruptOnConfig
    from langchain.agents.middleware.types import ToolCallRequest
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Checkpointer

NAME = "stock"
SYSTEM_PROMPT = (
    "You are a customer-service agent for an online shop. Look orders up before acting, "
    "follow the refund policy, and ask the user when something is missing. Invoices are "
    "billing's: look them up, void or credit them with its tools."
)
"""The words of `agents.support.SYSTEM_PROMPT`, kept here so that importing the reference does not
import ours (the import-time benchmark compares the two); the smoke test checks they agree."""
REFUND_SPECIALIST = "refund_specialist"
REFUND_SPECIALIST_DESCRIPTION = "Handles refunds carefully; every refund it issues is reviewed by a person."
REFUND_SPECIALIST_PROMPT = "You issue refunds. Check the order and the policy first, then refund."
REFUND_TOOLS = ("get_order", "get_refund_policy", "issue_refund")
"""`subagents.refund_specialist`'s name, words and tools, copied like the system prompt."""


def stock_interrupt_on(settings: DemoSettings) -> dict[str, bool | InterruptOnConfig]:
    """The support policy in stock terms: the same tools pause with the same decisions."""
    limit = settings.refund_auto_approve_limit

    def above_limit(request: ToolCallRequest) -> bool:
        return float(request.tool_call["args"]["amount"]) > limit

    return {
        "issue_refund": {"allowed_decisions": ["approve", "edit", "reject"], "when": above_limit},
        "send_email": {"allowed_decisions": ["approve", "reject"]},
        "ask_user": {"allowed_decisions": ["respond"]},
    }


def stock_refund_specialist(tools: list[BaseTool]) -> SubAgent:
    """`subagents.refund_specialist` in stock terms: the same words and tools, every refund paused."""
    return SubAgent(
        name=REFUND_SPECIALIST,
        description=REFUND_SPECIALIST_DESCRIPTION,
        system_prompt=REFUND_SPECIALIST_PROMPT,
        tools=[t for t in tools if t.name in REFUND_TOOLS],
        interrupt_on={"issue_refund": {"allowed_decisions": ["approve", "edit", "reject"]}},
    )


def make_graph(
    *,
    model: BaseChatModel | None = None,
    checkpointer: Checkpointer | None = None,
    services: Services | None = None,
    settings: DemoSettings | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The stock agent, built like `agents.support.make_graph`."""
    settings = settings or demo_settings()
    tools = build_support_tools((lambda: services) if services else default_services)
    return create_deep_agent(
        model or make_model(settings, scripts=(SUPPORT,)),
        tools,
        system_prompt=SYSTEM_PROMPT,
        interrupt_on=stock_interrupt_on(settings),
        subagents=[stock_refund_specialist(tools)],
        checkpointer=checkpointer,
        name=NAME,
    )


graph = make_graph()
