"""`booking_agent`: the travel subagent that owns `book_flight`, so the form comes from inside it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.travel_policy import booking_agent_policy
from hitl.deep_agent import SubagentSpec

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

NAME = "booking_agent"
BOOKING_TOOLS = ("search_flights", "book_flight")


def booking_agent(tools: list[BaseTool]) -> SubagentSpec:
    """The spec, using the booking tools out of every travel tool in `tools`."""
    return SubagentSpec(
        name=NAME,
        description="Books one flight by its id; the traveller picks seat class and insurance in a form.",
        system_prompt="You book flights: call book_flight with the flight id you are given, then report.",
        tools=[t for t in tools if t.name in BOOKING_TOOLS],
        interrupt_on=booking_agent_policy(),
    )
