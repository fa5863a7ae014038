"""Attribution: a tool that asks a person itself names the agent it runs in, from the run's metadata."""

from __future__ import annotations

import uuid

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from agents.offline import DEMO, phrases
from hitl.model.scripted.chat import ScriptedChatModel
from tools.approval import build_approval_tool
from tools.asking import asking_agent


def test_the_asking_agent_comes_from_the_run_not_from_the_tool():
    """lc_agent_name: request_approval built with a fallback name reports the agent that runs it."""
    agent = create_agent(
        ScriptedChatModel(scripts=DEMO),
        tools=[build_approval_tool(default_agent="fallback")],
        name="release_bot",
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    result = agent.invoke({"messages": [("user", phrases.deploy("2.0", "staging"))]}, config, version="v2")
    [pending] = result.interrupts
    assert (pending.value["agent"], pending.value["action"]) == (
        "release_bot",
        "Deploy version 2.0 to staging",
    )


def test_outside_a_graph_the_fallback_is_used():
    """Fallback: with no run around it, the name the tool was built with is used."""
    assert asking_agent(default="deployer") == "deployer"
