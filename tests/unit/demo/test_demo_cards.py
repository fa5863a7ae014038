"""The demo's agents as the server finds them: who may run each, and what the support agent gates."""

from __future__ import annotations

from pathlib import Path

from hitl.policy.served import card_of, load_graphs

ROOT = Path(__file__).resolve().parents[3]


def test_the_demo_graphs_carry_their_cards():
    """ops is for staff; support takes requesters and gates issue_refund; travel has its offline script."""
    cards = {graph_id: card_of(graph) for graph_id, graph in load_graphs(ROOT / "langgraph.json").items()}
    assert cards["ops"] is not None
    assert cards["support"] is not None
    assert cards["travel"] is not None
    assert cards["ops"].run_by == frozenset({"reviewer", "supervisor"})
    assert not cards["ops"].may_run({"requester"})
    assert cards["support"].may_run({"requester"})
    assert "issue_refund" in cards["support"].catalog.gates
    assert cards["travel"].offline is not None
