"""A server's listing as the layer takes it: what is offered, what is left out and why, what is read-only."""

from __future__ import annotations

from mcp.types import Tool, ToolAnnotations

from hitl.mcp.listing import read_listing, schema_sha256
from hitl.mcp.servers import McpServer

CRM = McpServer("crm", url_setting="CRM_MCP_URL")
ARGS = {"type": "object", "properties": {"id": {"type": "string"}}}


def tool(name: str, schema: dict | None = None, **annotations: bool) -> Tool:
    return Tool(
        name=name,
        description="x",
        input_schema=schema or ARGS,
        annotations=ToolAnnotations(**annotations) if annotations else None,
    )


def test_tools_are_named_for_policies_and_models_and_fingerprinted():
    """read_listing: crm.find (policy), crm_find (model), the schema's SHA-256, read-only if said so."""
    listing = read_listing(CRM, [tool("find", read_only_hint=True), tool("delete", destructive_hint=True)])
    found = listing.tools["crm_find"]
    assert (found.policy_name, found.read_only) == ("crm.find", True)
    assert found.input_schema_sha256 == schema_sha256(ARGS)
    assert not listing.tools["crm_delete"].read_only
    assert listing.left_out == []


def test_read_only_and_destructive_together_is_not_read_only():
    """a contradiction in the annotations: the stricter reading wins."""
    listing = read_listing(CRM, [tool("odd", read_only_hint=True, destructive_hint=True)])
    assert not listing.tools["crm_odd"].read_only


def test_unsafe_or_ambiguous_tools_are_left_out_with_why():
    """a remote $ref, an $id, a bad schema, a name twice, a name a model cannot take: left out, said."""
    remote = {"type": "object", "properties": {"x": {"$ref": "https://evil.example/s.json"}}}
    local = {"type": "object", "$defs": {"n": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/n"}}}
    listing = read_listing(
        CRM,
        [
            tool("remote", remote),
            tool("ided", {**ARGS, "$id": "https://evil.example/x"}),
            tool("bad", {"type": "object", "properties": {"x": {"type": "nope"}}}),
            tool("twice"),
            tool("twice"),
            tool("a.b"),
            tool("a_b"),
            tool("x" * 70),
            tool("local", local),
        ],
    )
    assert sorted(listing.tools) == ["crm_local"]
    said = " | ".join(listing.left_out)
    assert "crm.remote: its input schema refers outside itself" in said
    assert "crm.ided: its input schema refers outside itself" in said
    assert "crm.bad: its input schema is not a valid JSON Schema" in said
    assert "crm.twice: the server lists several tools named twice" in said
    assert "several tools named a.b and a_b (as crm_a_b)" in said
    assert "longer than a model takes" in said


def test_descriptions_are_plain_text_of_bounded_length():
    """control characters and terminal escapes dropped; over 1,000 characters is cut, saying so."""
    noisy = Tool(name="t", description="Hi \x1b[31mred\x1b[0m\u202e!" + "y" * 2000, input_schema=ARGS)
    described = read_listing(CRM, [noisy]).tools["crm_t"].description
    assert described.startswith("Hi red!")
    assert "\x1b" not in described
    assert "\u202e" not in described
    assert described.endswith("[cut at 1000 of 2007 characters]")
