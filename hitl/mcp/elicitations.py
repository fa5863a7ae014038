"""What an MCP server may ask mid-call, and the answer each question accepts, derived from the question alone.

An MCP elicitation (`hitl.contracts.interrupts.McpElicitationRequest`) carries the server's own JSON
Schema of what it asks. Only the flat shape MCP allows is asked at all (`requested_schema_problem`:
text, numbers, booleans and choices, nothing that reaches outside the document); the answer's schema
(`answer_schema`) is built from it here, so the server checks an answer before it is saved and the
tool checks it again before it reaches the MCP server. `question_of` is the fingerprint that binds an
answer to what was asked. Not for asking (`hitl.mcp.questions`) nor for who answers (the server).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

MAX_SCHEMA_BYTES = 16_000
"""The largest `requested_schema` a question may carry (JSON bytes)."""
MAX_MESSAGE_CHARS = 4_000
"""The longest `message` a question may carry."""
MAX_FIELDS = 32
"""The most fields one form may ask for."""
ACTIONS = ("accept", "decline", "cancel")
"""How a person may answer, as MCP says: accept (with content), decline (the call may go on), cancel."""
RECORDED_AS = {"accept": "answered", "decline": "declined", "cancel": "cancelled"}
"""What each answer is recorded, signed and counted as (`RecordedDecision`)."""

_FIELD_KEYS: dict[str, frozenset[str]] = {
    "string": frozenset(
        {
            "type",
            "title",
            "description",
            "minLength",
            "maxLength",
            "format",
            "enum",
            "enumNames",
            "oneOf",
            "default",
        }
    ),
    "number": frozenset({"type", "title", "description", "minimum", "maximum", "default"}),
    "integer": frozenset({"type", "title", "description", "minimum", "maximum", "default"}),
    "boolean": frozenset({"type", "title", "description", "default"}),
    "array": frozenset({"type", "title", "description", "minItems", "maxItems", "items", "default"}),
}
"""Each field type MCP's form elicitation allows, and the keywords it may carry: nothing else is asked."""
_FORMATS = frozenset({"email", "uri", "date", "date-time"})
_TOP_KEYS = frozenset({"type", "properties", "required", "title", "description", "$schema"})


def requested_schema_problem(schema: object) -> str | None:  # noqa: PLR0911  (one reason per rule)
    """What is wrong with a form question's `requested_schema`, in words; None when it may be asked.

    Allowed: an object of at most `MAX_FIELDS` fields, each text (with length, format or choices), a
    number, an integer, a boolean or a list of choices, with only the keywords MCP names; no `$ref`,
    no nesting, nothing the answer check would have to fetch.
    """
    if not isinstance(schema, dict):
        return "it is not a JSON object"
    if len(json.dumps(schema)) > MAX_SCHEMA_BYTES:
        return f"it is larger than {MAX_SCHEMA_BYTES} bytes"
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        return "it is not an object schema with properties"
    if unknown := sorted(set(schema) - _TOP_KEYS):
        return f"it has keywords a form may not have: {', '.join(unknown)}"
    fields = schema["properties"]
    if not fields or len(fields) > MAX_FIELDS:
        return f"it asks for {len(fields)} fields (1 to {MAX_FIELDS} may be asked)"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) and r in fields for r in required):
        return "its required list names fields it does not have"
    for name, field in fields.items():
        if (problem := _field_problem(field)) is not None:
            return f"field {name!r}: {problem}"
    return None


def _field_problem(field: object) -> str | None:  # noqa: C901, PLR0911  (one reason per rule MCP sets)
    if not isinstance(field, dict):
        return "it is not a JSON object"
    kind = field.get("type")
    if not isinstance(kind, str) or kind not in _FIELD_KEYS:
        return f"type {kind!r} is not one a form asks for (string, number, integer, boolean, array)"
    if unknown := sorted(set(field) - _FIELD_KEYS[kind]):
        return f"it has keywords a {kind} field may not have: {', '.join(unknown)}"
    if kind == "string" and "format" in field and field["format"] not in _FORMATS:
        return f"format {field['format']!r} is not one of {', '.join(sorted(_FORMATS))}"
    if "enum" in field and not (
        isinstance(field["enum"], list) and field["enum"] and all(isinstance(v, str) for v in field["enum"])
    ):
        return "enum must be a list of texts"
    if "oneOf" in field and not _choices(field["oneOf"]):
        return "oneOf must list choices as {const, title} texts"
    if kind == "array":
        items = field.get("items")
        choices = items.get("enum") if isinstance(items, dict) else None
        any_of = items.get("anyOf") if isinstance(items, dict) else None
        if not isinstance(items, dict) or not (
            (set(items) <= {"type", "enum"} and isinstance(choices, list) and choices)
            or (set(items) == {"anyOf"} and _choices(any_of))
        ):
            return "a list asks for choices: items must be {enum: [...]} or {anyOf: [{const, title}...]}"
    for key in ("minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"):
        if key in field and (isinstance(field[key], bool) or not isinstance(field[key], int | float)):
            return f"{key} must be a number"
    for key in ("title", "description"):
        if key in field and not isinstance(field[key], str):
            return f"{key} must be text"
    return None


def _choices(options: object) -> bool:
    return (
        isinstance(options, list)
        and bool(options)
        and all(
            isinstance(o, dict) and isinstance(o.get("const"), str) and set(o) <= {"const", "title"}
            for o in options
        )
    )


def question_of(  # noqa: PLR0913  (everything that makes a question this question)
    *, server: str, tool: str, mode: str, message: str, requested_schema: object = None, url: object = None
) -> str:
    """The SHA-256 of what is asked: the server, the tool, the mode, the message, the schema or the URL."""
    asked = {
        "server": server,
        "tool": tool,
        "mode": mode,
        "message": message,
        "requested_schema": requested_schema,
        "url": url,
    }
    text = json.dumps(asked, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def answer_schema(value: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON Schema of an answer to the elicitation `value`; None for a value that is not one.

    Accept carries `content` fitting the question's fields exactly (form mode) or nothing (url
    mode); decline and cancel carry nothing. Each may carry `question`, which must be this one's.
    """
    mode, question = value.get("mode"), value.get("question")
    if mode not in {"form", "url"} or not isinstance(question, str):
        return None
    stamp = {"question": {"const": question}}
    accept: dict[str, Any] = {
        "type": "object",
        "properties": {"action": {"const": "accept"}, **stamp},
        "required": ["action"],
        "additionalProperties": False,
    }
    if mode == "form":
        requested = value.get("requested_schema")
        if requested_schema_problem(requested) is not None:
            return None
        assert isinstance(requested, dict)  # noqa: S101  (checked just above)
        accept["properties"]["content"] = {
            "type": "object",
            "properties": requested["properties"],
            "required": list(requested.get("required", [])),
            "additionalProperties": False,
        }
        accept["required"] = ["action", "content"]
    branches = [
        accept,
        *(
            {
                "type": "object",
                "properties": {"action": {"const": action}, **stamp},
                "required": ["action"],
                "additionalProperties": False,
            }
            for action in ("decline", "cancel")
        ),
    ]
    return {
        "title": "McpElicitationAnswer",
        "type": "object",
        "oneOf": branches,
        "discriminator": {"propertyName": "action"},
    }


def recorded_as(answer: object) -> str:
    """What an answer to an elicitation is recorded as: answered, declined or cancelled."""
    action = answer.get("action") if isinstance(answer, dict) else None
    return RECORDED_AS.get(str(action), "answered")
