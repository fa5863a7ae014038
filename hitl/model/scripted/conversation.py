"""A read-only view of a conversation for scripts: the request and this turn's tool results.

Scripts are pure functions of this view, so the scripted model never keeps state between
calls, threads or subagents.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from hitl.model.scripted.wording import plain

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from langchain_core.messages import BaseMessage


@dataclass(frozen=True)
class ToolResult:
    """One tool call of the current turn and what came back."""

    name: str
    args: dict[str, Any]
    content: str
    ok: bool

    @property
    def data(self) -> dict[str, Any] | None:
        """The JSON object the tool returned (after any reviewer notice), if it returned one."""
        last_line = self.content.strip().rsplit("\n", 1)[-1]
        try:
            value = json.loads(last_line)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class Conversation:
    """The last human request (without its 'please' and 'thanks'), the tool results since, and the tools."""

    request: str
    results: tuple[ToolResult, ...]
    tools: frozenset[str] = field(default_factory=frozenset)
    earlier: tuple[ToolResult, ...] = ()
    schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """The JSON schema of each tool's arguments, where the model was told it."""

    @classmethod
    def of(
        cls,
        messages: Sequence[BaseMessage],
        tools: frozenset[str],
        schemas: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Conversation:
        """Read a message list as the model receives it."""
        start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
        request = plain(_text(messages[start])) if start >= 0 else ""
        return cls(
            request=request,
            results=_results(messages[start + 1 :]),
            tools=tools,
            earlier=_results(messages[: max(start, 0)]),
            schemas=schemas or {},
        )

    def last(self, tool: str) -> ToolResult | None:
        """The latest result of `tool` in this turn."""
        return next((r for r in reversed(self.results) if r.name == tool), None)

    def previous(self, tool: str) -> ToolResult | None:
        """The latest result of `tool` in an earlier turn ("book the cheapest one" of a past search)."""
        return next((r for r in reversed(self.earlier) if r.name == tool), None)


def _results(messages: Sequence[BaseMessage]) -> tuple[ToolResult, ...]:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    results: list[ToolResult] = []
    for message in messages:
        if isinstance(message, AIMessage):
            calls.update({c["id"] or "": (c["name"], c["args"]) for c in message.tool_calls})
        elif isinstance(message, ToolMessage):
            name, args = calls.get(message.tool_call_id, (message.name or "", {}))
            results.append(ToolResult(name, args, _text(message), message.status != "error"))
    return tuple(results)


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)
