"""The bench server's configuration: a run-time copy of `langgraph.json` with the stock agent added."""

from __future__ import annotations

from agents import support
from agents.settings import DemoSettings
from bench import stock_agent
from bench.served import ROOT, STOCK, STOCK_GRAPH, repo_config, side_by_side_config
from services.registry import default_services
from subagents import refund_specialist
from tools.support import build_support_tools


def test_the_copy_keeps_every_key_and_adds_the_stock_graph():
    """Every key of langgraph.json survives; graphs gain `stock`; nothing of ours is dropped."""
    repo = repo_config()
    config = side_by_side_config(repo)
    assert set(config) == set(repo)
    assert config["graphs"] == {**repo["graphs"], STOCK: STOCK_GRAPH}


def test_relative_paths_point_into_the_repository():
    """The copy is served from a temp dir: `.` and `./file.py:attr` become absolute repo paths."""
    config = side_by_side_config(
        {
            "dependencies": ["."],
            "graphs": {"a": "./agents/support.py:graph"},
            "auth": {"path": "server.http.auth:auth"},
        }
    )
    assert config["dependencies"] == [str(ROOT)]
    assert config["graphs"]["a"] == f"{ROOT / 'agents' / 'support.py'}:graph"
    assert config["auth"] == {"path": "server.http.auth:auth"}


def test_the_stock_agent_reads_the_same_system_prompt():
    """The reference and ours give the model the same words (the prompt is copied, not imported)."""
    assert stock_agent.SYSTEM_PROMPT == support.SYSTEM_PROMPT


def test_the_stock_agent_has_our_refund_specialist_in_stock_terms():
    """The same subagent (name, words, tools), so the two differ only in their approval layer."""
    tools = build_support_tools(default_services)
    ours = refund_specialist.refund_specialist(tools, DemoSettings())
    stock = stock_agent.stock_refund_specialist(tools)
    assert stock["name"] == ours.name
    assert stock["description"] == ours.description
    assert stock["system_prompt"] == ours.system_prompt
    assert [getattr(t, "name", None) for t in stock.get("tools", [])] == [t.name for t in ours.tools]
    assert set(stock.get("interrupt_on", {})) == set(ours.interrupt_on)
