"""langgraph.json's graphs edited line by line: a graph added or the set replaced, every other byte kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hitl.cli.project.served_graphs import ServedGraphsError, add_graph, served, with_graphs

ROOT = Path(__file__).resolve().parents[3]
CONFIG = """{
  "graphs": {
    "first": "agents.first:graph"
  },
  "http": {
    "configurable_headers": {
      "includes": ["idempotency-key"]
    }
  },
  "note": "a \\"graphs\\" key in a string: {not an object}"
}
"""


def test_a_graph_is_added_as_one_line_after_the_last():
    """add_graph: one new line, a comma after the line before; nothing else changes (lists stay put)."""
    edited = add_graph(CONFIG, "second", "agents.second:graph")
    assert edited == CONFIG.replace(
        '"first": "agents.first:graph"\n',
        '"first": "agents.first:graph",\n    "second": "agents.second:graph"\n',
    )
    assert served(edited) == {"first": "agents.first:graph", "second": "agents.second:graph"}


def test_graphs_are_replaced_inside_their_object_only():
    """with_graphs: none, then one: the braces open up as a person writes them; the rest is byte for byte."""
    empty = with_graphs(CONFIG, {})
    assert '"graphs": {},' in empty
    assert add_graph(empty, "mine", "agents.mine:graph") == CONFIG.replace("first", "mine")
    assert with_graphs(CONFIG, {"a": "agents.a:graph", "b": "agents.b:graph"}).splitlines()[2:4] == [
        '    "a": "agents.a:graph",',
        '    "b": "agents.b:graph"',
    ]


def test_the_templates_own_config_keeps_every_other_line():
    """this checkout's langgraph.json: its graphs replaced by one, every line outside them unchanged."""
    text = (ROOT / "langgraph.json").read_text()
    edited = with_graphs(text, {"mine": "agents.mine:graph"})
    outside = [line for line in text.splitlines() if "agents." not in line]
    assert [line for line in edited.splitlines() if "agents." not in line] == outside
    assert json.loads(edited)["graphs"] == {"mine": "agents.mine:graph"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "no valid JSON"),
        ('{"graphs": []}', 'no "graphs" object'),
        ('["graphs"]', 'no "graphs" object'),
    ],
)
def test_what_cannot_be_edited_is_refused_in_words(text, problem):
    """no JSON, no graphs object: a ServedGraphsError saying so, nothing written."""
    with pytest.raises(ServedGraphsError, match=problem):
        add_graph(text, "x", "agents.x:graph")


def test_a_graph_already_served_is_refused():
    """the same name twice: refused, naming it."""
    with pytest.raises(ServedGraphsError, match="'first'"):
        add_graph(CONFIG, "first", "agents.other:graph")
