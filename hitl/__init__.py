"""hitl: the approval layer for LangGraph Deep Agents, whose risky tool calls wait for a person.

The public API, the part your agents and this template's later releases agree on (CHANGELOG.md):
- `create_deep_agent`: Deep Agents' own, with `interrupt_on` enforced by the layer's gates, plus
  `run_by` (who may run the agent) and `offline` (its script for the offline model);
- `ToolGate` and `Deadline`: a tool's policy beyond `True`/`{"allowed_decisions": ...}`; `Tiers`: who
  decides by a number among the call's args ("finance up to 500, finance-leads above"); `Decider` (who
  answers: "owner" or a group, the roles "reviewer" and "supervisor" being groups of their own, a
  team such as "finance" another) and `DecisionType` (approve, edit, reject, respond);
- `Script`, `Rule`, `Call`: what the offline scripted model does for an agent and its subagents;
- `FirstLineReviewer`, `Triage`, `TriageRule`: a model a gate hands its routine calls to first
  (`ToolGate(first_line=...)`), and the rules its offline classifier follows;
- `McpServer`: an MCP server an agent declares (`create_deep_agent(mcp_servers=[...])`), its tools
  behind the same gate and its questions answered in the inbox; `Settings`, the layer's settings, which
  an agent's own settings extend (an MCP server's URL and token among them);
- `register_form` and `Form`: a tool's own form, checked by name; `Form.ask` asks the thread's owner;
- `Decision` and `build_resume`: what a client answers, and the resume it sends (`{interrupt_id: answer}`);
- `acting_for` (whose records a tool may touch: the thread's owner, as the server names them; a run
  naming nobody raises `NobodyNamedError`) and `in_process` (the config of a graph run without the
  server, which says so: its tools work on every record);
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
    from hitl.contracts.asks import build_resume
    from hitl.contracts.decisions import Decision, DecisionType
    from hitl.contracts.forms import Form, register_form
    from hitl.contracts.interrupts import Decider
    from hitl.deep_agent import create_deep_agent
    from hitl.gate.caller import NobodyNamedError, acting_for, in_process
    from hitl.mcp.servers import McpServer
    from hitl.model.first_line.triage import Triage, TriageRule
    from hitl.model.scripted import Call, Rule, Script
    from hitl.policy.deadlines import Deadline
    from hitl.policy.first_line import FirstLineReviewer
    from hitl.policy.gates import ToolGate
    from hitl.policy.groups import Tiers
    from hitl.settings import Settings

__version__ = "2.0.0"
"""The approval layer's version (CHANGELOG.md); a project made from this template records it too."""

PUBLIC = {
    "create_deep_agent": "hitl.deep_agent",
    "ToolGate": "hitl.policy.gates",
    "Tiers": "hitl.policy.groups",
    "Deadline": "hitl.policy.deadlines",
    "Script": "hitl.model.scripted",
    "Rule": "hitl.model.scripted",
    "Call": "hitl.model.scripted",
    "FirstLineReviewer": "hitl.policy.first_line",
    "Triage": "hitl.model.first_line.triage",
    "TriageRule": "hitl.model.first_line.triage",
    "register_form": "hitl.contracts.forms",
    "Form": "hitl.contracts.forms",
    "Decider": "hitl.contracts.interrupts",
    "DecisionType": "hitl.contracts.decisions",
    "Decision": "hitl.contracts.decisions",
    "build_resume": "hitl.contracts.asks",
    "acting_for": "hitl.gate.caller",
    "in_process": "hitl.gate.caller",
    "NobodyNamedError": "hitl.gate.caller",
    "McpServer": "hitl.mcp.servers",
    "Settings": "hitl.settings",
}
"""Each public name, and the module it is defined in."""

__all__ = [
    "Call",
    "Deadline",
    "Decider",
    "Decision",
    "DecisionType",
    "FirstLineReviewer",
    "Form",
    "McpServer",
    "NobodyNamedError",
    "Rule",
    "Script",
    "Settings",
    "Tiers",
    "ToolGate",
    "Triage",
    "TriageRule",
    "__version__",
    "acting_for",
    "build_resume",
    "create_deep_agent",
    "in_process",
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
