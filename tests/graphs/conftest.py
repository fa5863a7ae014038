"""In-process agents with `InMemorySaver`, each over its own business database."""

from __future__ import annotations

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents import ops, support, travel
from agents.settings import DemoSettings
from tests.graphs.layer.threads import Conversation

__all__ = ["Conversation"]


@pytest.fixture
def support_agent(services):
    """A `support` graph over the test's database, with default limits."""
    graph = support.make_graph(checkpointer=InMemorySaver(), services=services, settings=DemoSettings())

    def new_conversation() -> Conversation:
        return Conversation(graph, str(uuid.uuid4()))

    return new_conversation


@pytest.fixture
def travel_agent(services):
    """A `travel` graph over the test's database."""
    graph = travel.make_graph(checkpointer=InMemorySaver(), services=services, settings=DemoSettings())
    return lambda: Conversation(graph, str(uuid.uuid4()))


@pytest.fixture
def workspace(tmp_path):
    """The ops workspace of one test, with a file `tmp/old.log` in it."""
    root = tmp_path / "workspace"
    (root / "tmp").mkdir(parents=True)
    (root / "tmp" / "old.log").write_text("old log\n")
    return root


@pytest.fixture
def ops_agent(services, workspace):
    """An `ops` graph over the test's database and workspace."""
    graph = ops.make_graph(
        checkpointer=InMemorySaver(), services=services, settings=DemoSettings(workspace_dir=workspace)
    )
    return lambda: Conversation(graph, str(uuid.uuid4()))
