"""A form's fields in words, from its answer schema: what `hitl show` prints so a person can fill it in.

One line per field: its name, its kind (text, number, yes/no, one of ...), whether it is required or
its default, its limits (length, range, pattern) and its description. Reads JSON Schema as pydantic
writes it (`$ref` to `$defs`, `anyOf` with null for optional values); anything else is "any value".
An MCP server's question (`question_lines`) is shown the same way, with the answers it takes.
Not for checking an answer: the server does that.
"""

from __future__ import annotations

import json
from typing import Any

KINDS = {
    "string": "text",
    "integer": "whole number",
    "number": "number",
    "boolean": "yes/no",
    "array": "list",
}


def field_lines(schema: dict[str, Any]) -> list[str]:
    """`name  kind, required or default, limits  description` for each field of an object schema."""
    root = _resolved(schema, schema)
    required = set(root.get("required") or [])
    fields = root.get("properties") or {}
    if not isinstance(fields, dict):
        return []
    width = max((len(name) for name in fields), default=0)
    lines = []
    for name, raw in fields.items():
        field = _resolved(schema, raw if isinstance(raw, dict) else {})
        facts = [_kind(schema, field)]
        if name in required:
            facts.append("required")
        elif "default" in field or "default" in raw:
            facts.append(f"default {json.dumps(raw.get('default', field.get('default')))}")
        facts.extend(_limits(field))
        about = field.get("description") or raw.get("description") or ""
        lines.append(f"{name.ljust(width)}  {', '.join(facts)}" + (f"  {about}" if about else ""))
    return lines


def _resolved(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`node` with a `$ref` into `$defs` followed and an optional `anyOf: [X, null]` read as X."""
    for _ in range(10):  # a ref to a ref, never a loop
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            node = {
                **(schema.get("$defs") or {}).get(ref.removeprefix("#/$defs/"), {}),
                **_without(node, "$ref"),
            }
            continue
        options = node.get("anyOf")
        if isinstance(options, list):
            real = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
            if len(real) == 1:
                node = {**real[0], **_without(node, "anyOf")}
                continue
        break
    return node


def _without(node: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k != key}


def _kind(schema: dict[str, Any], field: dict[str, Any]) -> str:
    if "const" in field:
        return f"exactly {json.dumps(field['const'])}"
    if isinstance(field.get("enum"), list):
        return "one of " + ", ".join(str(v) for v in field["enum"])
    if field.get("type") == "array" and isinstance(field.get("items"), dict):
        return f"list of {_kind(schema, _resolved(schema, field['items']))}"
    kind = field.get("type")
    if kind == "object":
        return str(field.get("title") or "a group of fields")
    return KINDS.get(kind, "any value") if isinstance(kind, str) else "any value"


def _limits(field: dict[str, Any]) -> list[str]:
    limits = []
    if "minLength" in field or "maxLength" in field:
        low, high = field.get("minLength"), field.get("maxLength")
        limits.append(f"{low or 0} to {high} characters" if high is not None else f"{low}+ characters")
    for key, words in (
        ("minimum", "at least"),
        ("exclusiveMinimum", "more than"),
        ("maximum", "at most"),
        ("exclusiveMaximum", "less than"),
    ):
        if key in field:
            limits.append(f"{words} {field[key]}")
    if "pattern" in field:
        limits.append(f"matching {field['pattern']}")
    if "minItems" in field or "maxItems" in field:
        limits.append(f"{field.get('minItems', 0)} to {field.get('maxItems', 'any number of')} items")
    return limits


def question_lines(thread: str, interrupt: dict[str, Any]) -> list[str]:
    """What an MCP server asks (`mcp_elicitation`), its fields or link, and how to answer: plain text lines.

    The server's words are shown as they are, never read as markup (the caller prints with markup off).
    """
    value = interrupt.get("value") or {}
    mcp = value.get("mcp") or {}
    where = f"{mcp.get('server')}.{mcp.get('tool')}"
    asker = (
        f"  waiting  {interrupt['id']}  {where} asks {value.get('required_role', 'owner')} "
        f"(call={value.get('tool_call_id')} args={json.dumps(value.get('args') or {})}):"
    )
    lines = [asker, f"    {value.get('message', '')}"]
    answer = f"hitl answer {thread} {interrupt['id']} --json"
    if value.get("mode") == "url":
        lines += [
            f"    open: {value.get('url')}",
            f'    then confirm: {answer} \'{{"action": "accept"}}\'',
        ]
    else:
        lines += [f"    {line}" for line in field_lines(value.get("requested_schema") or {})]
        lines.append(f'    answer: {answer} \'{{"action": "accept", "content": {{...}}}}\'')
    lines.append(f'    or: {answer} \'{{"action": "decline"}}\' (or cancel, to abandon the call)')
    return lines
