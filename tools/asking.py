"""For tools that ask a person themselves (a form, a sign-off): who is asking.

`create_agent` puts each agent's name in its run's metadata (`lc_agent_name`), and a
subagent's own name wins over its parent's, so a tool learns which agent called it
without being told when it is built.
"""

from __future__ import annotations

from langgraph.config import get_config


def asking_agent(default: str) -> str:
    """The name of the agent or subagent running the current tool call, else `default`."""
    try:
        name = get_config().get("metadata", {}).get("lc_agent_name")
    except RuntimeError:  # called outside a graph
        return default
    return str(name) if name else default
