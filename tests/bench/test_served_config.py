"""The bench server's configuration: a run-time copy of `langgraph.json` with the stock agent added."""

from __future__ import annotations

from agents import support
from bench import stock_agent
from bench.served import ROOT, STOCK, STOCK_GRAPH, repo_config, side_by_side_config


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
