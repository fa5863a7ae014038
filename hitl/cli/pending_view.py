"""What `hitl show` prints of a pending interrupt: what it asks, of whom, until when; a form's fields.

Every shape is read through `hitl.contracts.asks` (the published contract), so a shape the layer adds
is shown here without a list of its own; one this CLI cannot read says so and points at `--json`. A
form's fields come from its answer schema, one line each: its name, its kind (text, number, yes/no,
one of ...), required or its default, its limits and its description (JSON Schema as pydantic writes
it; anything else is "any value"). Not for answering (`decide`) or checking an answer (the server).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from hitl.cli.terminal import progress
from hitl.contracts.asks import read
from hitl.policy.groups import who

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hitl.contracts.asks import Ask, Asked


def interrupt_lines(
    interrupt: Mapping[str, Any], *, escalated_at: str | None = None, thread: str = "THREAD"
) -> list[str]:
    """The lines of one pending interrupt of `thread`; `escalated_at`: when the trail says it escalated."""
    value = interrupt.get("value")
    asked = read(value)
    if asked is None:
        kind = value.get("type", "untyped") if isinstance(value, dict) else type(value).__name__
        unread = f"an interrupt of no published shape ({kind}): `hitl show --json` prints it as it is"
        return [f"  waiting  {interrupt['id']}  {unread}"]
    lines = []
    for ask in asked.asks:
        quorum = progress({"required": ask.approvals_required, "approved_by": list(ask.approved_by)})
        named = "context" if asked.kind == "form" else "args"
        fields = f"  {named}={json.dumps(dict(ask.fields), default=str)}" if ask.fields else ""
        lines += [
            f"  waiting  {interrupt['id']}  {ask.agent} wants {ask.subject}  call={ask.tool_call_id}{fields}"
            + (f"  [{quorum}]" if quorum and ask.approvals_required > 1 else ""),
            f"    {asked.kind}: {ask.text}",
            f"    decided by: {deciders(asked, ask, escalated=escalated_at is not None)}",
            f"    answers: {answers(asked, ask)}",
        ]
        if (note := ask.first_line) is not None:
            lines.append(
                f"    first-line reviewer {note['reviewer']} ({note['model']}, a model) left this to you: "
                f"{note['reason']}"
            )
    if asked.kind == "mcp_elicitation":
        lines += question_lines(interrupt, thread)
    if deadline := due(asked, escalated_at):
        lines.append(f"    deadline: {deadline}{expiry(asked, escalated=escalated_at is not None)}")
    return lines


def question_lines(interrupt: Mapping[str, Any], thread: str) -> list[str]:
    """An MCP server's question beyond what every interrupt shows: its link or its fields, and how to answer.

    The server's words are shown as they are, never read as markup (the caller prints with markup off).
    """
    value = interrupt["value"]
    answer = f"hitl answer {thread} {interrupt['id']} --json"
    if value.get("mode") == "url":
        lines = [f"    open: {value.get('url')}", f'    then confirm: {answer} \'{{"action": "accept"}}\'']
    else:
        lines = [f"    {line}" for line in field_lines(value.get("requested_schema") or {})]
        lines.append(f'    answer: {answer} \'{{"action": "accept", "content": {{...}}}}\'')
    lines.append(f'    or: {answer} \'{{"action": "decline"}}\' (or cancel, to abandon the call)')
    return lines


def due(asked: Asked, escalated_at: str | None) -> str | None:
    """When `asked` expires: its stamped deadline, or once escalated, the escalation's own."""
    if escalated_at is None or asked.escalated_seconds is None:
        return asked.deadline
    try:
        return (datetime.fromisoformat(escalated_at) + timedelta(seconds=asked.escalated_seconds)).isoformat()
    except ValueError:
        return asked.deadline


def deciders(asked: Asked, ask: Ask, *, escalated: bool) -> str:
    """Who decides `ask` in words, who may not (its askers), and where an escalation sent it."""
    if escalated:
        return f"{who(asked.escalates_to)} (escalated from {who(ask.decider)})"
    askers = [] if ask.self_approval else list(asked.requested_by)
    return who(ask.decider) + (f", not {' or '.join(askers)} who asked" if askers else "")


def answers(asked: Asked, ask: Ask) -> str:
    """The answers `ask` takes: its decisions, or a form's own fields."""
    if not ask.decisions:
        return f"the fields of {ask.subject} (below)"
    return ", ".join(ask.decisions) + (" (sign-off)" if asked.kind == "approval_request" else "")


def expiry(asked: Asked, *, escalated: bool) -> str:
    """What happens when the deadline passes: ', then escalates to someone in finance-leads'."""
    if escalated or asked.on_expiry == "reject":
        return ", then it is rejected"
    if asked.on_expiry == "escalate":
        return f", then it escalates to {who(asked.escalates_to)}"
    return ""


def may_escalate(pending: list[dict[str, Any]]) -> bool:
    """Whether any of `pending` escalates when overdue (only then is the trail worth reading)."""
    return any((asked := read(i.get("value"))) is not None and asked.on_expiry == "escalate" for i in pending)


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
