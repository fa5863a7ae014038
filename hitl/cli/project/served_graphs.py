"""The `graphs` of a `langgraph.json`, edited as a person edits them: one line each, every other byte kept.

`hitl new agent` adds a line; `hitl new project` puts its example agent in place of the demo's.
Rewriting the whole file (`json.dumps`) would reformat what the layer wrote and turn every later
upgrade of the layer's part of it into a conflict, so only the `graphs` object's inside changes.
Not for other keys of the file: those are the layer's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


class ServedGraphsError(ValueError):
    """The text is no `langgraph.json` whose `graphs` can be edited; the message says why."""


@dataclass(frozen=True)
class _Span:
    """Where the `graphs` object is: its braces, and the indentation of its key and of its entries."""

    opening: int
    closing: int
    key_indent: str
    entry_indent: str


def served(text: str) -> dict[str, str]:
    """The graphs a `langgraph.json` serves (name -> `module:attribute`)."""
    return dict(json.loads(text).get("graphs") or {})


def add_graph(text: str, name: str, target: str) -> str:
    """`text` with the graph `name` (served from `target`) added after the last one, the rest as it was.

    Raises:
        ServedGraphsError: `text` is no JSON object with a `graphs` object, or serves `name` already.
    """
    if name in _checked(text):
        msg = f"langgraph.json serves a graph named {name!r} already"
        raise ServedGraphsError(msg)
    span = _graphs_span(text)
    line = f"{json.dumps(name)}: {json.dumps(target)}"
    inside = text[span.opening + 1 : span.closing]
    if not inside.strip():
        opened, closed = text[: span.opening + 1], text[span.closing :]
        edited = f"{opened}\n{span.entry_indent}{line}\n{span.key_indent}{closed}"
    else:
        last = span.opening + 1 + len(inside.rstrip())
        edited = f"{text[:last]},\n{span.entry_indent}{line}{text[last:]}"
    return _verified(text, edited, {**served(text), name: target})


def with_graphs(text: str, graphs: Mapping[str, str]) -> str:
    """`text` serving exactly `graphs`, one line each, every byte outside the `graphs` object kept.

    Raises:
        ServedGraphsError: `text` is no JSON object with a `graphs` object.
    """
    _checked(text)
    span = _graphs_span(text)
    lines = ",\n".join(f"{span.entry_indent}{json.dumps(n)}: {json.dumps(t)}" for n, t in graphs.items())
    inside = f"\n{lines}\n{span.key_indent}" if graphs else ""
    edited = f"{text[: span.opening + 1]}{inside}{text[span.closing :]}"
    return _verified(text, edited, dict(graphs))


def _checked(text: str) -> dict[str, str]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        msg = f"langgraph.json is no valid JSON ({error})"
        raise ServedGraphsError(msg) from None
    if not isinstance(document, dict) or not isinstance(document.get("graphs"), dict):
        msg = 'langgraph.json has no "graphs" object'
        raise ServedGraphsError(msg)
    return document["graphs"]


def _verified(before: str, after: str, graphs: dict[str, str]) -> str:
    """`after`, once it parses, serves `graphs` and keeps every other key of `before` as it was."""
    old, new = json.loads(before), json.loads(after)
    if new.get("graphs") != graphs or {**old, "graphs": graphs} != new:
        msg = "langgraph.json could not be edited line by line; add the graph by hand"
        raise ServedGraphsError(msg)
    return after


def _graphs_span(text: str) -> _Span:
    """The `graphs` object of the top-level JSON object in `text` (strings and nesting read as JSON)."""
    depth, position, key_start = 0, 0, -1
    while position < len(text):
        char = text[position]
        if char == '"':
            end = _string_end(text, position)
            is_key = text[end + 1 :].lstrip().startswith(":")
            if depth == 1 and is_key and text[position : end + 1] == '"graphs"':
                key_start = position
                position = text.index("{", end)
                break
            position = end
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        position += 1
    if key_start < 0:
        msg = 'langgraph.json has no "graphs" object'
        raise ServedGraphsError(msg)
    closing = _closing_brace(text, position)
    key_indent = text[text.rfind("\n", 0, key_start) + 1 : key_start]
    inside = text[position + 1 : closing]
    first = len(inside) - len(inside.lstrip())
    entry_line = inside[:first].rsplit("\n", 1)
    entry_indent = entry_line[-1] if inside.strip() and len(entry_line) > 1 else key_indent + "  "
    return _Span(position, closing, key_indent, entry_indent)


def _string_end(text: str, start: int) -> int:
    """The index of the quote that closes the JSON string opened at `start`."""
    position = start + 1
    while text[position] != '"':
        position += 2 if text[position] == "\\" else 1
    return position


def _closing_brace(text: str, opening: int) -> int:
    """The index of the brace that closes the object opened at `opening`."""
    depth, position = 0, opening
    while True:
        char = text[position]
        if char == '"':
            position = _string_end(text, position)
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return position
        position += 1
