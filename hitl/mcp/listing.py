"""A server's tool list as the layer takes it: each tool checked, named, fingerprinted, or left out, and why.

A server's listing is untrusted input. A tool is offered only when its name makes a model tool name no
other of its tools makes, and its input schema is a self-contained JSON Schema of an object (no `$ref`
outside the document, nothing to fetch); its description is kept as plain text of bounded length.
Every tool left out is reported with why. The digest of the input schema is what an approval binds.
`described` is a listed tool as the model sees it. Not for connecting or calling (`hitl.mcp.connection`,
`hitl.mcp.calls`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jsonschema_rs
from langchain_core.tools import StructuredTool

from hitl.mcp.servers import MODEL_TOOL_NAME
from hitl.recently_used import RecentlyUsed

if TYPE_CHECKING:
    from collections.abc import Iterable

    from hitl.mcp.servers import McpServer

MAX_DESCRIPTION_CHARS = 1_000
"""The longest tool description passed to the model (a longer one is cut, and says so)."""
MAX_SCHEMA_BYTES = 64_000
"""The largest input schema (JSON bytes) a tool may have."""
MAX_TOOLS = 200
"""The most tools one server's listing may offer; the rest are left out and reported."""
_CONTROL = re.compile(
    r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]"
)
"""Terminal escapes, control characters and invisible direction marks: never passed on."""
_REF_KEYS = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
DESCRIBED_KEPT = 4096
"""How many listed tools' model views are kept built (one per name, schema and description)."""


@dataclass(frozen=True)
class McpTool:
    """One tool a server lists, as the layer offers it."""

    server: str
    name: str
    """The server's own name for it."""
    tool_name: str
    """What the model calls it (`crm_delete_contact`)."""
    policy_name: str
    """What a policy names it (`crm.delete_contact`)."""
    description: str
    input_schema: dict[str, Any]
    input_schema_sha256: str
    read_only: bool
    """The server annotates it `readOnlyHint: true` (and nothing destructive)."""
    hints: dict[str, Any] = field(default_factory=dict)
    """Its annotations as listed (for reports)."""

    @property
    def provenance(self) -> dict[str, str]:
        """`McpProvenance`: the server, its name for the tool, the digest of its input schema."""
        return {"server": self.server, "tool": self.name, "input_schema_sha256": self.input_schema_sha256}


@dataclass(frozen=True)
class Listing:
    """What one listing of a server gave: the tools offered (by model name) and those left out, with why."""

    tools: dict[str, McpTool]
    left_out: list[str]


def schema_sha256(schema: object) -> str:
    """SHA-256 of a schema's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def plain_text(text: object, limit: int) -> str:
    """`text` without control characters or terminal escapes, cut at `limit` characters (saying so)."""
    cleaned = _CONTROL.sub("", str(text or ""))
    if len(cleaned) <= limit:
        return cleaned
    return f"{cleaned[:limit]}… [cut at {limit} of {len(cleaned)} characters]"


def read_listing(server: McpServer, listed: Iterable[Any]) -> Listing:
    """The tools of `listed` (MCP `Tool`s) the layer offers, and why each other one is left out."""
    tools: dict[str, McpTool] = {}
    left_out: list[str] = []
    by_model_name: dict[str, list[str]] = {}
    candidates = []
    for index, tool in enumerate(listed):
        name = getattr(tool, "name", None)
        shown = plain_text(name, 80) if isinstance(name, str) else repr(name)[:80]
        if index >= MAX_TOOLS:
            left_out.append(f"{server.name}.{shown}: the server lists more than {MAX_TOOLS} tools")
            continue
        if not isinstance(name, str) or not name or plain_text(name, 128) != name:
            left_out.append(f"{server.name}.{shown}: its name is empty, too long or not plain text")
            continue
        model_name = server.tool_name(name)
        if not MODEL_TOOL_NAME.fullmatch(model_name):
            left_out.append(f"{server.policy_name(name)}: {model_name!r} is longer than a model takes (64)")
            continue
        if (problem := input_schema_problem(getattr(tool, "input_schema", None))) is not None:
            left_out.append(f"{server.policy_name(name)}: its input schema {problem}")
            continue
        by_model_name.setdefault(model_name, []).append(name)
        candidates.append((model_name, tool))
    for model_name, tool in candidates:
        if len(by_model_name[model_name]) > 1:
            left_out.append(
                f"{server.policy_name(tool.name)}: the server lists several tools named "
                f"{' and '.join(sorted(set(by_model_name[model_name])))} (as {model_name}); none is offered"
            )
            continue
        tools[model_name] = _offered(server, model_name, tool)
    return Listing(tools=tools, left_out=list(dict.fromkeys(left_out)))


def _offered(server: McpServer, model_name: str, tool: Any) -> McpTool:  # noqa: ANN401  (an MCP `Tool`)
    annotations = getattr(tool, "annotations", None)
    hints = annotations.model_dump(exclude_none=True) if annotations is not None else {}
    read_only = hints.get("read_only_hint") is True and hints.get("destructive_hint") is not True
    schema = dict(tool.input_schema)
    return McpTool(
        server=server.name,
        name=tool.name,
        tool_name=model_name,
        policy_name=server.policy_name(tool.name),
        description=plain_text(getattr(tool, "description", None) or "", MAX_DESCRIPTION_CHARS),
        input_schema=schema,
        input_schema_sha256=schema_sha256(schema),
        read_only=read_only,
        hints=hints,
    )


def input_schema_problem(schema: object) -> str | None:
    """What makes `schema` no input schema the layer offers; None when it is one.

    An object schema (`"type": "object"`), at most `MAX_SCHEMA_BYTES`, valid as JSON Schema, whose
    references all stay inside the document (a remote one would be fetched by whoever checks args).
    """
    if not isinstance(schema, dict):
        return "is not a JSON object"
    try:
        size = len(json.dumps(schema))
    except (TypeError, ValueError):
        return "is not JSON"
    if size > MAX_SCHEMA_BYTES:
        return f"is larger than {MAX_SCHEMA_BYTES} bytes"
    if schema.get("type") != "object":
        return "does not describe an object of arguments"
    if _outside_refs(schema):
        return "refers outside itself ($ref to another document)"
    try:
        valid = jsonschema_rs.meta.is_valid(schema)
    except (ValueError, jsonschema_rs.ReferencingError):  # type: ignore[misc]
        valid = False
    return None if valid else "is not a valid JSON Schema"


def _outside_refs(node: object) -> bool:
    if isinstance(node, list):
        return any(_outside_refs(item) for item in node)
    if not isinstance(node, dict):
        return False
    for key, value in node.items():
        if key in _REF_KEYS and not (isinstance(value, str) and value.startswith("#")):
            return True
        if key == "$id" or _outside_refs(value):
            return True
    return False


_described_tools: RecentlyUsed[tuple[str, str, str], StructuredTool] = RecentlyUsed(DESCRIBED_KEPT)


def described(tool: McpTool) -> StructuredTool:
    """The tool as the model (and an edit's check) sees it; the toolbox, never this object, runs it."""
    key = (tool.tool_name, tool.input_schema_sha256, tool.description)
    if (found := _described_tools.get(key)) is not None:
        return found

    def not_here(**_: Any) -> str:  # noqa: ANN401
        msg = f"{tool.policy_name} is run by its agent's McpToolbox"
        raise RuntimeError(msg)

    described = StructuredTool(
        name=tool.tool_name,
        description=tool.description or f"{tool.name} (MCP server {tool.server})",
        args_schema=tool.input_schema,
        func=not_here,
        metadata={"mcp": tool.provenance},
    )
    _described_tools.put(key, described)
    return described
