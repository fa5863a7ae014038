"""The policy matrix, read from the built graphs: who gates what, with which decisions, in which mode.

Every agent and subagent of every served graph is found by walking the compiled graph (its
`ApprovalGate` node, its tool node, and the subagent graphs behind its `task` tool) and
compared with the one table below. A tool an agent has that the table does not name must
run without a person.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware

from agents import ops, support, travel
from agents.settings import DemoSettings
from hitl.gate.gate import ApprovalGate
from services.registry import Services

if TYPE_CHECKING:
    from hitl.policy.gates import ToolGate

NEVER = "never"
EVERY = ("approve", "edit", "reject", "respond")
APPROVE_EDIT_REJECT = ("approve", "edit", "reject")
APPROVE_REJECT = ("approve", "reject")

MATRIX: dict[tuple[str, str], dict[str, Any]] = {
    # (graph, agent): {tool: NEVER | (decisions, "always" | "when")}; mode is per graph below.
    ("support", "support"): {
        "get_order": NEVER,
        "get_refund_policy": NEVER,
        "issue_refund": (APPROVE_EDIT_REJECT, "when"),
        "send_email": (APPROVE_REJECT, "always"),
        "ask_user": (("respond",), "always"),
        "task": NEVER,
    },
    ("support", "general-purpose"): {
        "get_order": NEVER,
        "issue_refund": (APPROVE_EDIT_REJECT, "when"),
        "send_email": (APPROVE_REJECT, "always"),
        "ask_user": (("respond",), "always"),
    },
    ("support", "refund_specialist"): {
        "get_order": NEVER,
        "get_refund_policy": NEVER,
        "issue_refund": (APPROVE_EDIT_REJECT, "always"),
    },
    ("travel", "travel"): {
        "search_flights": NEVER,
        "cancel_booking": (APPROVE_REJECT, "always"),
        "task": NEVER,
    },
    ("travel", "general-purpose"): {
        "search_flights": NEVER,
        "cancel_booking": (APPROVE_REJECT, "always"),
    },
    ("travel", "booking_agent"): {
        "search_flights": NEVER,
        "book_flight": NEVER,  # not gated by policy: it raises its own flight-booking form
    },
    ("ops", "ops"): {
        "read_data": NEVER,
        "read_file": NEVER,
        "write_file": (EVERY, "always"),
        "edit_file": (EVERY, "always"),
        "execute_sql": (APPROVE_REJECT, "when"),
        "delete_file": (APPROVE_EDIT_REJECT, "always"),
        "task": NEVER,
    },
    ("ops", "general-purpose"): {
        "read_data": NEVER,
        "read_file": NEVER,
        "write_file": (EVERY, "always"),
        "edit_file": (EVERY, "always"),
        "execute_sql": (APPROVE_REJECT, "when"),
        "delete_file": (APPROVE_EDIT_REJECT, "always"),
    },
    ("ops", "file_manager"): {
        "read_file": (APPROVE_REJECT, "always"),
        "write_file": (EVERY, "always"),
        "edit_file": (EVERY, "always"),
        "delete_file": (APPROVE_EDIT_REJECT, "always"),
    },
    ("ops", "deployer"): {
        "request_approval": NEVER,  # not gated by policy: it asks for a sign-off itself
        "read_file": NEVER,
        "write_file": (EVERY, "always"),
        "edit_file": (EVERY, "always"),
    },
}
MODES = {"support": "batched", "travel": "batched", "ops": "per_call"}
BUILDERS = {"support": support.make_graph, "travel": travel.make_graph, "ops": ops.make_graph}


def agents_in(graph: Any, name: str) -> dict[str, tuple[HumanInTheLoopMiddleware, set[str]]]:
    """Each agent in a compiled Deep Agent, by name: its one HITL middleware and its tools."""
    found = {}
    for agent, compiled in graphs_in(graph, name).items():
        hitl = {
            node.bound.func.__self__
            for node in compiled.nodes.values()
            if isinstance(
                getattr(getattr(node.bound, "func", None), "__self__", None), HumanInTheLoopMiddleware
            )
        }
        assert len(hitl) == 1, f"{agent}: expected one HITL middleware, found {hitl}"
        found[agent] = (hitl.pop(), set(compiled.nodes["tools"].bound.tools_by_name))
    return found


def graphs_in(graph: Any, name: str) -> dict[str, Any]:
    """Each agent's compiled graph in a Deep Agent, by name (the top agent's and every subagent's)."""
    found = {name: graph}
    tools = graph.nodes["tools"].bound.tools_by_name
    if "task" in tools:
        task = tools["task"].func
        closure = dict(
            zip(task.__code__.co_freevars, (c.cell_contents for c in task.__closure__), strict=True)
        )
        for sub_name, sub_graph in closure["subagent_graphs"].items():
            found.update(graphs_in(sub_graph, sub_name))
    return found


def conditional(tool_gate: ToolGate) -> bool:
    """Whether policy pauses only some calls: a `when` or an auto-approve limit.

    Every gate's stock `when` also consults the run's override and the thread's allowances,
    so its presence in `interrupt_on` says nothing about the policy.
    """
    return tool_gate.when is not None or tool_gate.auto_approve_limit is not None


@pytest.fixture(scope="module")
def built():
    """Every served graph, built as the server builds it (over a throwaway database)."""
    services = Services.open("sqlite://")
    return {
        name: agents_in(build(services=services, settings=DemoSettings()), name)
        for name, build in BUILDERS.items()
    }


@pytest.mark.parametrize(("graph", "agent"), list(MATRIX))
def test_each_agent_is_gated_as_the_table_says(built, graph, agent):
    """matrix: gated or not, with which decisions, always or by `when`, and in the graph's mode."""
    gate, tools = built[graph][agent]
    assert isinstance(gate, ApprovalGate)
    assert (gate.agent, gate.interrupt_mode) == (agent, MODES[graph])
    expected = MATRIX[graph, agent]
    assert set(expected) <= tools, f"{agent} lacks {set(expected) - tools}"
    actual = {
        tool: NEVER
        if (config := gate.interrupt_on.get(tool)) is None
        else (tuple(config["allowed_decisions"]), "when" if conditional(gate.policy[tool]) else "always")
        for tool in tools
    }
    assert {t: actual[t] for t in expected} == expected
    unlisted_but_gated = {t: v for t, v in actual.items() if t not in expected and v != NEVER}
    assert unlisted_but_gated == {}


def test_the_table_names_every_agent_that_was_built(built):
    """coverage: no agent or subagent in a served graph is missing from the table."""
    assert {(g, a) for g, agents in built.items() for a in agents} == set(MATRIX)


@pytest.mark.parametrize("graph", list(BUILDERS))
def test_no_gate_adds_a_step_beyond_the_stock_one(graph):
    """steps: each gate's one node is the stock after_model; the run start is in the top's model call."""
    agents = graphs_in(BUILDERS[graph](services=Services.open("sqlite://"), settings=DemoSettings()), graph)
    gate_steps = {
        name: sorted(node for node in compiled.nodes if node.startswith("ApprovalGate."))
        for name, compiled in agents.items()
    }
    assert gate_steps == {name: ["ApprovalGate.after_model"] for name in agents}
