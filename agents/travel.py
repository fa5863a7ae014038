"""The `travel` graph: flight search, booking through a form the traveller fills in, cancellations.

`graph` is what `langgraph.json` serves (no checkpointer: the server owns persistence);
`make_graph` builds the same agent for scripts and tests. Booking is the `booking_agent`
subagent's job, so its form reaches the person from inside a subagent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.offline import TRAVEL
from agents.settings import DemoSettings, demo_settings
from agents.travel_policy import travel_policy
from hitl.deep_agent import SubagentSpec, build_deep_agent
from services.registry import Services, default_services
from subagents.booking_agent import booking_agent
from tools.travel import build_travel_tools

if TYPE_CHECKING:
    from collections.abc import Callable

    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Checkpointer


NAME = "travel"
DESCRIPTION_PREFIX = "travel asks before changing a trip"
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
    settings: DemoSettings | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The `travel` agent; defaults come from the settings."""
    settings = settings or demo_settings()
    lookup = (lambda: services) if services else default_services
    own, subagents = _parts(lookup)
    return build_deep_agent(
        NAME,
        settings=settings,
        model=model,
        system_prompt=SYSTEM_PROMPT,
        tools=own,
        interrupt_on=travel_policy(lookup),
        subagents=subagents,
        checkpointer=checkpointer,
        description_prefix=DESCRIPTION_PREFIX,
        offline=TRAVEL,
    )


def _parts(services: Callable[[], Services]) -> tuple[list[BaseTool], list[SubagentSpec]]:
    tools = build_travel_tools(services)
    return [t for t in tools if t.name in TRAVEL_TOOLS], [booking_agent(tools)]


graph = make_graph()
