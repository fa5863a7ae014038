"""Agents found from the graph itself: the card create_deep_agent files, and how the server reaches it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import hitl
from hitl.policy.served import card_of, load_graphs, run_by_roles
from tests.fresh_interpreter import last_line

ROOT = Path(__file__).resolve().parents[3]


def test_the_served_graphs_carry_their_cards():
    """langgraph.json's graphs, loaded as the server loads them: each has a card, with its offline script."""
    graphs = load_graphs(ROOT / "langgraph.json")
    cards = {graph_id: card_of(graph) for graph_id, graph in graphs.items()}
    assert cards
    assert all(cards.values()), cards
    assert all(card.offline is not None for card in cards.values() if card)


def test_run_by_takes_roles_and_well_formed_groups_only():
    """run_by: None is everyone; a role or group is kept; a malformed name, `owner` or none fails to build.

    Whether anyone is in a named group is the start-up check's (`test_answerers`).
    """
    assert run_by_roles(None) is None
    assert run_by_roles("supervisor") == frozenset({"supervisor"})
    assert run_by_roles(["sre", "reviewer"]) == frozenset({"sre", "reviewer"})
    with pytest.raises(ValueError, match="'Admin!'"):
        run_by_roles(["Admin!"])
    with pytest.raises(ValueError, match="'owner'"):
        run_by_roles(["owner"])
    with pytest.raises(ValueError, match="no role"):
        run_by_roles([])
    with pytest.raises(ValueError, match="'Admin!'"):
        hitl.create_deep_agent(tools=[], name="x", run_by=["Admin!"])


def test_the_engine_still_keeps_its_graphs_where_the_server_reads_them():
    """langgraph_api.graph.GRAPHS holds the served graphs by id (engine_compat.served_graph reads it).

    Checked in a process set up as `langgraph dev` sets its own (in-memory runtime). If a
    langgraph-api upgrade moves it, this fails here, and `served_graph` needs a new home.
    """
    script = (
        "from langgraph_api import graph\n"
        "from server.runtime import engine_compat\n"
        "marker = object()\n"
        "graph.GRAPHS['some-graph'] = marker\n"
        "assert engine_compat.served_graph('some-graph') is marker\n"
        "assert engine_compat.served_graph('no-such-graph') is None\n"
        "print('ok')\n"
    )
    env = {**os.environ, "DATABASE_URI": ":memory:", "REDIS_URI": "fake", "MIGRATIONS_PATH": "__inmem"}
    assert last_line(script, env) == "ok"
    assert card_of(object()) is None
