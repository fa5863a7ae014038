"""A bench-only graph that asks for approval at once: the cheapest real pending approval.

One node builds the per-call approval value the layer's gate builds (`ToolApprovalRequest`,
with who asked and who may decide) and interrupts with it and its answer contract; no model,
no tool. It fills the replica set with 100,000 pending approvals in minutes instead of hours.
Served only by the bench's own replica configuration (`bench.org_scale`), never by the
product's `langgraph.json`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig  # noqa: TC002  (LangGraph reads the node's annotations)
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt

from hitl.contracts import answers
from hitl.contracts.interrupts import ToolApprovalRequest
from hitl.gate.caller import requested_by
from hitl.gate.review_requests import answer_contract

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

GRAPH_ID = "bench_pause"
"""The name the bench's replica configuration serves it under (its inbox rows' agent)."""
TOOL = "bench_action"
DECIDER = "reviewer"


@tool(TOOL)
def bench_action(thread: str) -> str:
    """What an approval of the bench graph is about: nothing runs when it is answered."""
    return thread


answers.register(GRAPH_ID, [bench_action])  # the answer contract of its approvals, as an agent's gate does


def approval_value(thread_id: str) -> ToolApprovalRequest:
    """What the node asks: one call of `TOOL`, decided by a reviewer, asked by the run's caller."""
    return ToolApprovalRequest(
        type="tool_approval",
        tool_call_id=f"call-{thread_id}",
        name=TOOL,
        args={"thread": thread_id},
        description=f"Bench approval on thread {thread_id}",
        agent=GRAPH_ID,
        required_role=DECIDER,
        allowed_decisions=["approve", "reject"],
        **requested_by(),  # type: ignore[typeddict-item]
    )


def ask(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:  # noqa: ARG001  (LangGraph passes it)
    """Pause for a reviewer's answer; whatever it is, the run ends."""
    thread_id = str((config.get("configurable") or {}).get("thread_id", ""))
    value = approval_value(thread_id)
    interrupt(value, response_schema=answer_contract(value))
    return {}


def make_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """START -> ask."""
    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    return builder.compile()


graph = make_graph()
