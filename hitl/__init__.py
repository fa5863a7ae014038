"""hitl: the approval layer for LangGraph Deep Agents, whose risky tool calls wait for a person.

The public API, the part your agents and this template's later releases agree on (CHANGELOG.md):
- `create_deep_agent`: Deep Agents' own, with `interrupt_on` enforced by the layer's gates, plus
  `run_by` (who may run the agent) and `offline` (its script for the offline model);
- `ToolGate` and `Deadline`: a tool's policy beyond `True`/`{"allowed_decisions": ...}`; `Decider`
  (who answers: "owner", "reviewer", "supervisor") and `DecisionType` (approve, edit, reject, respond);
- `Script`, `Rule`, `Call`: what the offline scripted model does for an agent and its subagents;
- `McpServer`: an MCP server an agent declares (`create_deep_agent(mcp_servers=[...])`), its tools
  behind the same gate and its questions answered in the inbox;
- `register_form` and `Form`: a tool's own form, checked by name; `Form.ask` asks the thread's owner;
- `Decision` and `build_resume`: what a client answers, and the resume it sends (`{interrupt_id: answer}`);
- `hitl.contracts.interrupts`, `.decisions`, `.records` and `.run_context`: the interrupt, decision,
  receipt, audit and run context shapes (published as JSON Schema by `hitl.contracts.publish`);
- the server wiring a `langgraph.json` names: `server.http.auth:auth`, `server.http.app:app` and
  `server.runtime.checkpointer.durable_checkpointer`.
Names are loaded on first use, so importing a part of `hitl` does not load Deep Agents.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hitl.contracts.decisions import Decision, DecisionType
    from hitl.contracts.forms import Form, register_form
    from hitl.contracts.interrupts import Decider
    from hitl.contracts.resume import build_resume
    from hitl.deep_agent import create_deep_agent
    from hitl.mcp.servers import McpServer
    from hitl.model.scripted import Call, Rule, Script
    from hitl.policy.deadlines import Deadline
    from hitl.policy.gates import ToolGate

__version__ = "2.0.0"
"""The approval layer's version (CHANGELOG.md); a project made from this template records it too."""

PUBLIC = {
    "create_deep_agent": "hitl.deep_agent",
    "ToolGate": "hitl.policy.gates",
    "Deadline": "hitl.policy.deadlines",
    "Script": "hitl.model.scripted",
    "Rule": "hitl.model.scripted",
    "Call": "hitl.model.scripted",
    "register_form": "hitl.contracts.forms",
    "Form": "hitl.contracts.forms",
    "Decider": "hitl.contracts.interrupts",
    "DecisionType": "hitl.contracts.decisions",
    "Decision": "hitl.contracts.decisions",
    "build_resume": "hitl.contracts.resume",
    "McpServer": "hitl.mcp.servers",
}
"""Each public name, and the module it is defined in."""

__all__ = [
    "Call",
    "Deadline",
    "Decider",
    "Decision",
    "DecisionType",
    "Form",
    "McpServer",
    "Rule",
    "Script",
    "ToolGate",
    "__version__",
    "build_resume",
    "create_deep_agent",
    "register_form",
]


def __getattr__(name: str) -> Any:  # noqa: ANN401  (the attribute asked for, of any type)
    """A public name, imported when first asked for.

    Raises:
        AttributeError: for any other name.
    """
    if name in PUBLIC:
        return getattr(import_module(PUBLIC[name]), name)
    msg = f"module 'hitl' has no attribute {name!r}"
    raise AttributeError(msg)
