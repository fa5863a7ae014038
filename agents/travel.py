"""The `travel` graph: flight search, booking through a form the traveller fills in, cancellations.

`graph` is what `langgraph.json` serves (no checkpointer: the server owns persistence);
`make_graph` builds the same agent for scripts and tests. Booking is the `booking_agent`
subagent's job, so its form reaches the person from inside a subagent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hitl.deadlines import Deadline
from hitl.deep_agent import build_deep_agent
from hitl.models import make_model
from hitl.policies.travel import travel_policy
from hitl.settings import Settings, get_settings
from services.registry import Services, default_services
from subagents.booking_agent import booking_agent
from tools.travel import build_travel_tools

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Checkpointer

NAME = "travel"
TRAVEL_TOOLS = ("search_flights", "cancel_booking")
SYSTEM_PROMPT = (
    "You are a travel agent. Search flights for the traveller; to book one, hand its flight id "
    "to the booking_agent subagent. Cancel bookings only when asked."
)


def make_graph(
    *,
    model: BaseChatModel | None = None,
    checkpointer: Checkpointer | None = None,
    services: Services | None = None,
    settings: Settings | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The `travel` agent; defaults come from the settings."""
    settings = settings or get_settings()
    tools = build_travel_tools((lambda: services) if services else default_services)
    return build_deep_agent(
        NAME,
        model=model or make_model(settings),
        system_prompt=SYSTEM_PROMPT,
        tools=[t for t in tools if t.name in TRAVEL_TOOLS],
        policy=travel_policy(),
        subagents=[booking_agent(tools)],
        checkpointer=checkpointer,
        default_deadline=Deadline(settings.approval_deadline_seconds),
    )


graph = make_graph()
