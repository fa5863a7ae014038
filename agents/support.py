"""The `support` graph: customer service with refunds, e-mails and questions to the user.

`graph` is what `langgraph.json` serves (no checkpointer: the server owns persistence);
`make_graph` builds the same agent for scripts and tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hitl.deadlines import Deadline
from hitl.deep_agent import build_deep_agent
from hitl.models import make_model
from hitl.policies.support import support_policy
from hitl.settings import Settings, get_settings
from services.registry import Services, default_services
from subagents.refund_specialist import refund_specialist
from tools.support import build_support_tools

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Checkpointer

NAME = "support"
SYSTEM_PROMPT = (
    "You are a customer-service agent for an online shop. Look orders up before acting, "
    "follow the refund policy, and ask the user when something is missing."
)


def make_graph(
    *,
    model: BaseChatModel | None = None,
    checkpointer: Checkpointer | None = None,
    services: Services | None = None,
    settings: Settings | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The `support` agent; defaults come from the settings."""
    settings = settings or get_settings()
    tools = build_support_tools((lambda: services) if services else default_services)
    return build_deep_agent(
        NAME,
        model=model or make_model(settings),
        system_prompt=SYSTEM_PROMPT,
        tools=tools,
        policy=support_policy(settings),
        subagents=[refund_specialist(tools, settings)],
        checkpointer=checkpointer,
        default_deadline=Deadline(settings.approval_deadline_seconds),
    )


graph = make_graph()
