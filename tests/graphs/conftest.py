"""In-process agents with `InMemorySaver`, each over its own business database."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agents import ops, support, travel
from agents.settings import DemoSettings


@dataclass
class Conversation:
    """One thread of an in-process agent, driven like a client would."""

    graph: Any
    thread_id: str

    @property
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.thread_id}}

    def say(self, text: str) -> Any:
        return self.graph.invoke({"messages": [{"role": "user", "content": text}]}, self.config, version="v2")

    def resume(self, answer: Any) -> Any:
        return self.graph.invoke(Command(resume=answer), self.config, version="v2")

    def last_words(self) -> str:
        return self.graph.get_state(self.config).values["messages"][-1].text

    def pending(self) -> tuple[Any, ...]:
        """The interrupts the thread waits on now, as a client would read them."""
        return self.graph.get_state(self.config).interrupts


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
