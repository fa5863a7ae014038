"""What a script returns: words for the person, or tool calls to make next."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hitl.model.scripted.conversation import Conversation


@dataclass(frozen=True)
class Call:
    """One tool call the scripted model proposes."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


Reply = str | list[Call]
ScriptFn = Callable[[Conversation], Reply | None]
"""A script answers a conversation it understands and returns None for one it does not
(`hitl.model.scripted.rules.Script` is one, built from rules)."""
