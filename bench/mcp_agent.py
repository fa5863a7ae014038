"""The MCP bench's two agents: an invoice voided through the billing MCP server, and the same as a local tool.

Both are gated alike (`void_invoice`: approve or reject, a reviewer decides) and scripted alike
("Void invoice INV-..."); they differ only in where the tool runs: billing over streamable HTTP
(`mcp`), or `services.invoices` in the agent's own process (`local`). The bench serves both.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.tools import InjectedToolCallId, tool

from agents.settings import demo_settings
from agents.support import BILLING
from hitl import create_deep_agent
from hitl.model.scripted import Call, Rule, Script
from hitl.policy.gates import ToolGate
from services.registry import default_services
from tools.owners import records_owner

MCP = "mcp_void"
LOCAL = "local_void"
GATE = ToolGate(allowed_decisions=("approve", "reject"))
VOID = r"\bvoid\b.*\binvoice (?P<invoice>INV-\d{1,9})"


@tool
def void_invoice(invoice_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Void an open invoice without credit notes."""
    invoice = default_services().invoices.void(invoice_id, tool_call_id=tool_call_id, owner=records_owner())
    return f"Invoice {invoice['invoice_id']} is void."


def _agent(name: str, tool_name: str, **parts: Any) -> Any:  # noqa: ANN401
    script = Script(Rule(VOID, calls=[Call(tool_name, {"invoice_id": "{invoice}"})], then="{result}"))
    return create_deep_agent(None, name=name, system_prompt="Void invoices.", offline=script, **parts)


mcp_graph = _agent(
    MCP,
    "billing_void_invoice",
    tools=[],
    interrupt_on={"billing.void_invoice": GATE},
    mcp_servers=[BILLING],
    settings=demo_settings(),
)
local_graph = _agent(
    LOCAL, "void_invoice", tools=[void_invoice], interrupt_on={"void_invoice": GATE}, settings=demo_settings()
)
