"""A bad path given to a file tool is that tool's error: the run goes on, nothing is touched.

The scripted model is made to send paths holding a NUL byte (no request phrase yields one),
through the `ops` agent's Deep Agents file tools over the workspace.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import ToolMessage

from hitl.scripted import model as scripted_model
from hitl.scripted.script import Call

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
def nul_paths(monkeypatch):
    monkeypatch.setattr(scripted_model, "SCRIPTS", (nul_script, *scripted_model.SCRIPTS))


def test_nul_bytes_in_paths_come_back_as_tool_errors(nul_paths, ops_agent, workspace):
    """read_file, ls, glob, grep and an approved write_file: each says 'path must not contain a NUL byte'."""
    chat = ops_agent()
    (pending,) = chat.say(NUL_REQUEST).interrupts
    assert pending.value["name"] == "write_file"

    result = chat.resume({pending.id: {"type": "approve"}})

    assert result.interrupts == ()
    answers = [m for m in chat.graph.get_state(chat.config).values["messages"] if isinstance(m, ToolMessage)]
    assert {m.name for m in answers} == {"read_file", "ls", "glob", "grep", "write_file"}
    for message in answers:
        assert "path must not contain a NUL byte" in message.text, message
    assert sorted(p.name for p in workspace.rglob("*")) == ["old.log", "tmp"]
