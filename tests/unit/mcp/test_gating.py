"""Which MCP calls pause: read-only and vetted runs, everything else waits; a policy is the floor."""

from __future__ import annotations

import pytest

from hitl.mcp.gating import WithMcpTools, always, gate_of, unlisted_gate
from hitl.mcp.listing import McpTool
from hitl.policy.gates import ToolGate

UNLISTED = unlisted_gate(lambda name, _args: name)
NAMED = ToolGate(allowed_decisions=("approve", "edit", "reject"), when=lambda args: args.get("n", 0) > 5)


def mcp_tool(*, read_only: bool) -> McpTool:
    return McpTool("crm", "t", "crm_t", "crm.t", "", {"type": "object"}, "ab" * 32, read_only)


@pytest.mark.parametrize(
    ("read_only", "vetted", "named", "expected"),
    [
        (True, True, None, None),  # the one way through without a person
        (True, False, None, UNLISTED),  # listed after start-up
        (False, True, None, UNLISTED),  # destructive, open-world or no annotations
        (True, True, NAMED, NAMED),  # a read-only tool a policy names: as the policy says
        (False, True, NAMED, always(NAMED)),  # the server does not vouch: every call pauses
    ],
)
def test_the_gate_of_an_mcp_tool(read_only, vetted, named, expected):
    """gate_of: only a vetted read-only tool no policy names runs without a person; a policy is the floor."""
    assert gate_of(mcp_tool(read_only=read_only), named, vetted=vetted, unlisted=UNLISTED) == expected


def test_an_unlisted_name_is_gated_and_a_named_gate_always_pauses():
    """no listing (down, unknown name): gated; always(): no `when`, no auto-approve limit."""
    assert gate_of(None, None, vetted=False, unlisted=UNLISTED) is UNLISTED
    assert always(NAMED).pauses({"n": 1})
    assert not NAMED.pauses({"n": 1})


def test_the_policy_mapping_finds_gates_for_names_it_never_listed():
    """WithMcpTools: local tools as the policy says; any name a server owns gets its gate, listed or not."""
    local = ToolGate(allowed_decisions=("approve",))
    gates = WithMcpTools(
        {"local": local},
        owns=lambda name: name.startswith("crm_"),
        gate=lambda name, _named: None if name == "crm_read" else UNLISTED,
        listed=lambda: ["crm_read", "crm_write"],
    )
    assert gates["local"] is local
    assert gates.get("crm_anything") is UNLISTED
    assert "crm_read" not in gates
    assert gates.get("other") is None
    assert sorted(gates) == ["crm_write", "local"]
