"""A bad path given to a file tool is that tool's error: the run goes on, nothing is touched.

The scripted model is made to send paths holding a NUL byte (no request phrase yields one),
through the `ops` agent's Deep Agents file tools over the workspace.
"""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from agents import ops
from agents.offline import OPS
from agents.settings import DemoSettings
from hitl.model.scripted.chat import ScriptedChatModel
from hitl.model.scripted.script import Call
from tests.graphs.conftest import Conversation

NUL_REQUEST = "Poke the workspace with NUL paths"
UNGATED_CALLS = [
    Call("read_file", {"file_path": "tmp/old.log\x00"}),
    Call("ls", {"path": "tmp\x00"}),
    Call("glob", {"pattern": "*.log", "path": "tmp\x00"}),
    Call("grep", {"pattern": "old", "path": "tmp\x00"}),
]


def nul_script(chat):
    """Send the calls once, then say what came back."""
    if chat.request != NUL_REQUEST:
        return None
    if not chat.results:
        return [*UNGATED_CALLS, Call("write_file", {"file_path": "/new\x00.txt", "content": "x"})]
    return "; ".join(f"{r.name}: {r.content}" for r in chat.results)


@pytest.fixture
def nul_paths(services, workspace):
    """The ops agent, whose scripted model also knows `nul_script`."""
    graph = ops.make_graph(
        model=ScriptedChatModel(scripts=(nul_script, OPS)),
        checkpointer=InMemorySaver(),
        services=services,
        settings=DemoSettings(workspace_dir=workspace),
    )
    return lambda: Conversation(graph, str(uuid.uuid4()))


def test_nul_bytes_in_paths_come_back_as_tool_errors(nul_paths, workspace):
    """read_file, ls, glob, grep and an approved write_file: each says 'path must not contain a NUL byte'."""
    chat = nul_paths()
    (pending,) = chat.say(NUL_REQUEST).interrupts
    assert pending.value["name"] == "write_file"

    result = chat.resume({pending.id: {"type": "approve"}})

    assert result.interrupts == ()
    answers = [m for m in chat.graph.get_state(chat.config).values["messages"] if isinstance(m, ToolMessage)]
    assert {m.name for m in answers} == {"read_file", "ls", "glob", "grep", "write_file"}
    for message in answers:
        assert "path must not contain a NUL byte" in message.text, message
    assert sorted(p.name for p in workspace.rglob("*")) == ["old.log", "tmp"]
