"""The scripted classifier's rules: what an offline first-line reviewer answers, a pure function of the call.

A `Triage` is a policy's offline stand-in for its instructions, as an agent's `Script` is for its
prompt: `TriageRule`s tried in order, each naming a tool, a pattern searched in the call's args
(as JSON text, case-insensitive) and the answer with its reason; a call no rule covers is referred
to people. `script` serves the same rules to the scripted OpenAI endpoint, so the real-model path
(structured output over the wire) answers as the offline one does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from hitl.model.first_line.verdict import VERDICT_TOOL, FirstLineVerdict, ReviewedCall, verdict_args
from hitl.model.scripted.script import Call

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hitl.model.scripted.conversation import Conversation
    from hitl.model.scripted.script import Reply, ScriptFn

UNCOVERED = "no rule of its offline triage covers this call, so a person decides"


@dataclass(frozen=True)
class TriageRule:
    """When a call of `tool` has args whose JSON text matches `when`, answer `answer` with `reason`.

    `when` is a regular expression searched case-insensitively; empty matches every call of `tool`.
    """

    tool: str
    answer: Literal["approve", "reject", "refer"]
    reason: str
    when: str = ""
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Compile `when`; refuse an empty tool or reason."""
        if not self.tool or not self.reason:
            msg = f"a triage rule needs a tool and a reason (got {self.tool!r}, {self.reason!r})"
            raise ValueError(msg)
        object.__setattr__(self, "pattern", re.compile(self.when, re.IGNORECASE))

    def matches(self, tool: str, args: Mapping[str, Any]) -> bool:
        """Whether this rule covers a call of `tool` with `args`."""
        text = json.dumps(dict(args), sort_keys=True, ensure_ascii=False, default=str)
        return tool == self.tool and self.pattern.search(text) is not None


@dataclass(frozen=True)
class Triage:
    """Rules tried in order; the first that covers a call answers it, else a person decides."""

    rules: tuple[TriageRule, ...]

    def verdict(self, tool: str, args: Mapping[str, Any]) -> FirstLineVerdict:
        """The answer for a call of `tool` with `args`."""
        rule = next((r for r in self.rules if r.matches(tool, args)), None)
        if rule is None:
            return FirstLineVerdict(decision="refer", reason=UNCOVERED)
        return FirstLineVerdict(decision=rule.answer, reason=rule.reason)

    def script(self, reviewer: str) -> ScriptFn:
        """A scripted-model script answering `reviewer`'s review requests by these rules (the endpoint's).

        The same function for the same rules and name, so declaring it twice declares it once.
        """
        return _script(self, reviewer)


@lru_cache(maxsize=64)
def _script(triage: Triage, reviewer: str) -> ScriptFn:
    def answer(chat: Conversation) -> Reply | None:
        if VERDICT_TOOL not in chat.tools:
            return None
        call = ReviewedCall.from_json(chat.request)
        if call is None or call.reviewer != reviewer:
            return None
        return [Call(VERDICT_TOOL, dict(verdict_args(triage.verdict(call.tool, call.args))))]

    return answer
