"""An agent with MCP servers in-process (`InMemorySaver`, sync `invoke`): the same gate without a server.

The lab's servers (`tests.mcp_lab.servers`) run on a free port for the module; the lab agent is built
on settings pointing at them. Without a server no person is named: the gate still pauses what it
gates, an approved call still runs only against the schema it was asked with, and a server's
question is still an interrupt, resumed by position whatever key the server gives it next.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from hitl.policy.served import card_of
from server.runtime.replicas import free_port, stop
from tests.graphs.layer.threads import Conversation
from tests.mcp_lab.agent import LabSettings, make_graph
from tests.mcp_lab.beside import McpBeside, _answering

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[tuple[McpBeside, LabSettings]]:
    """The lab's servers on a free port, and the settings that point the lab agent at them."""
    port, workdir = free_port(), tmp_path_factory.mktemp("mcp-lab")
    command = [
        sys.executable,
        "-m",
        "tests.mcp_lab.servers",
        "--port",
        str(port),
        "--data",
        str(workdir / "lab"),
    ]
    with (workdir / "lab.log").open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _answering(f"http://127.0.0.1:{port}/health", process, workdir / "lab.log")
        settings = LabSettings(
            lab_mcp_url=f"http://127.0.0.1:{port}/lab/mcp",
            lab_mirror_mcp_url=f"http://127.0.0.1:{port}/mirror/mcp",
            lab_broken_mcp_url=f"http://127.0.0.1:{port}/broken/mcp",
            lab_down_mcp_url=f"http://127.0.0.1:{free_port()}/mcp",
            mcp_list_seconds=0,
        )
        yield McpBeside(env={}, config=workdir, lab_data=workdir / "lab"), settings
    finally:
        stop(process)


@pytest.fixture
def thread(lab) -> Conversation:
    beside, settings = lab
    beside.switch(changed=False)
    return Conversation(make_graph(settings, InMemorySaver()), str(uuid.uuid4()))


def call(tool: str, **args: str) -> str:
    return f"call {tool} with {json.dumps(args)}"


def test_a_read_only_tool_runs_without_a_pause(thread, lab):
    """lab_read_note (read-only): run through the sync path at once; the lab ran it."""
    thread.say(call("lab_read_note", note_id="p1"))
    assert thread.pending() == ()
    assert 'lab ran read_note with {"note_id": "p1"}' in thread.last_words()
    assert any("p1" in r["arguments"] for r in lab[0].lab_calls("read_note"))


def test_a_destructive_tool_waits_and_runs_once_approved(thread, lab):
    """lab_delete_note: paused with its server, tool and digest; approved: run once."""
    thread.say(call("lab_delete_note", note_id="p2"))
    [pending] = thread.pending()
    assert pending.value["mcp"]["tool"] == "delete_note"
    assert not [r for r in lab[0].lab_calls("delete_note") if "p2" in r["arguments"]]
    thread.resume({pending.id: {"type": "approve"}})
    assert len([r for r in lab[0].lab_calls("delete_note") if "p2" in r["arguments"]]) == 1


def test_a_schema_changed_after_the_pause_is_refused_in_process_too(thread, lab):
    """without a server the digest the gate asked with stands in for the receipt's: changed, not run."""
    thread.say(call("lab_delete_note", note_id="p3"))
    [pending] = thread.pending()
    lab[0].switch(changed=True)
    thread.resume({pending.id: {"type": "approve"}})
    assert "Not run: lab.delete_note changed its input schema" in thread.last_words()
    assert not [r for r in lab[0].lab_calls("delete_note") if "p3" in r["arguments"]]


def test_a_question_is_an_interrupt_resumed_by_position_whatever_its_new_key(thread, lab):
    """lab_ask_reason: approved, then its question (a new key on every run) gets the answer it was given."""
    thread.say(call("lab_ask_reason", note_id="p4"))
    [approval] = thread.pending()
    thread.resume({approval.id: {"type": "approve"}})
    [question] = thread.pending()
    assert question.value["type"] == "mcp_elicitation"
    thread.resume({question.id: {"action": "accept", "content": {"reason": "Stale note"}}})
    [ran] = [r for r in lab[0].lab_calls("ask_reason") if "p4" in r["arguments"]]
    assert json.loads(ran["answers"]) == {"action": "accept", "content": {"reason": "Stale note"}}


def test_an_answer_that_does_not_fit_is_refused_and_stays_answerable(thread, lab):
    """in-process (no server check): the tool's own check refuses a short reason; nothing reaches the lab."""
    thread.say(call("lab_ask_reason", note_id="p5"))
    [approval] = thread.pending()
    thread.resume({approval.id: {"type": "approve"}})
    [question] = thread.pending()
    with pytest.raises(Exception, match=r"content\.reason"):
        thread.resume({question.id: {"action": "accept", "content": {"reason": "no"}}})
    assert not [r for r in lab[0].lab_calls("ask_reason") if "p5" in r["arguments"]]


def test_the_recipe_of_docs_agents_md_builds_an_agent_with_its_server(monkeypatch):
    """docs/agents.md "Your MCP servers": its code as written builds an agent; the policy names the tool."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text()
    section = text.split("## Your MCP servers", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.setenv("CRM_MCP_URL", "")
    recipe = types.ModuleType("docs_mcp_recipe")  # a module of its own, as a reader's file would be
    recipe.__dict__.update(model=None, tools=[])
    monkeypatch.setitem(sys.modules, recipe.__name__, recipe)
    exec(compile(code, "docs/agents.md", "exec"), recipe.__dict__)  # noqa: S102  (the doc's code, as a reader runs it)
    box = next(b for b in card_of(recipe.agent).toolboxes if b.agent == "agent")
    assert set(box.named) == {"crm_delete_contact"}
    assert not box.endpoints["crm"].configured
