"""Offline scripts from rules: what a person says, the tool calls the scripted model makes, its answer.

A `Rule` matches the person's last request with a regular expression; the model then calls the
rule's tools in order, one model turn each, with arguments filled in from the request's named
groups; once the last call came back, it answers with `then` (or `refused`, when a call was
rejected or failed). `Script(rule, ...)` is what `create_deep_agent(offline=...)` takes, so an
agent runs with no key, in `make dev` and in its tests. Hand-written script functions
(`Conversation -> Reply | None`) fit the same place; the rules cover the usual "do X for Y" agent.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hitl.contracts.edits import coerce_by_schema
from hitl.model.scripted.script import Call
from hitl.model.scripted.wording import plain

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from hitl.model.scripted.conversation import Conversation, ToolResult
    from hitl.model.scripted.script import Reply, ScriptFn


@dataclass(frozen=True)
class Rule:
    """When a request matches `when`, call `calls` in order, then answer.

    `when` is searched in the request (case-insensitive), after the scripted model dropped
    greetings and "please"/"thanks". Each call's string arguments may name the pattern's
    groups as `{group}`; a value that is exactly one `{group}` takes the type the tool's schema
    asks for ("250" becomes 250 for a number). `then` and `refused` may name the groups, and
    `{result}`: the text the last tool returned. `example` is a request the rule answers: the
    scripted model's help text, your tests and `hitl new agent`'s hint use it.

    Raises:
        ValueError: a `{name}` in an argument, `then` or `refused` that `when` has no group for.
    """

    when: str
    calls: Sequence[Call]
    then: str = "Done: {result}"
    refused: str = "Not done: {result}"
    example: str = ""
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Compile `when` and check every template against its groups."""
        object.__setattr__(self, "calls", tuple(self.calls))
        object.__setattr__(self, "pattern", re.compile(self.when, re.IGNORECASE))
        known = {*self.pattern.groupindex, "result"}
        templates = [self.then, self.refused, *(v for c in self.calls for v in _strings(c.args))]
        for template in templates:
            missing = sorted({name for _, name, _, _ in string.Formatter().parse(template) if name} - known)
            if missing:
                msg = f"rule {self.when!r}: {', '.join(missing)} in {template!r} is no group of its pattern"
                raise ValueError(msg)
        if self.example and not self.pattern.search(plain(self.example)):
            msg = f"rule {self.when!r}: its example {self.example!r} does not match it"
            raise ValueError(msg)

    def answer(self, chat: Conversation) -> Reply | None:
        """The next step for `chat`, if its request matches: the next call, or the answer."""
        if not all(call.name in chat.tools for call in self.calls):
            return None
        match = self.pattern.search(chat.request)
        if match is None:
            return None
        groups = {k: v or "" for k, v in match.groupdict().items()}
        done = _done(chat, self.calls)
        if done and not done[-1].ok:
            return self.refused.format(**groups, result=done[-1].content)
        if len(done) < len(self.calls):
            call = self.calls[len(done)]
            args = {k: _filled(v, groups) for k, v in call.args.items()}
            return [Call(call.name, coerce_by_schema(args, chat.schemas.get(call.name, {})))]
        return self.then.format(**groups, result=done[-1].content if done else "")


class Script:
    """An agent's offline script: its rules (or script functions), tried in order; the first answers.

    A script function (`hitl.model.scripted.script.ScriptFn`) takes the `Conversation` and returns the
    next step, or None for a request it does not know: for agents whose steps depend on what
    their tools returned. `examples` adds requests it answers to those of the rules.
    """

    def __init__(self, *parts: Rule | ScriptFn, examples: Sequence[str] = ()) -> None:
        """Script `parts` (each a `Rule` or a script function)."""
        self.parts = parts
        self.examples = (*examples, *(p.example for p in parts if isinstance(p, Rule) and p.example))

    def __call__(self, chat: Conversation) -> Reply | None:
        """The first part's next step that answers, or None when none does."""
        for part in self.parts:
            reply = part.answer(chat) if isinstance(part, Rule) else part(chat)
            if reply is not None:
                return reply
        return None


def _done(chat: Conversation, calls: Sequence[Call]) -> list[ToolResult]:
    """This turn's results of the rule's calls, in order, up to the first still to make."""
    done: list[ToolResult] = []
    for call in calls:
        result = next((r for r in chat.results if r.name == call.name and r not in done), None)
        if result is None:
            break
        done.append(result)
    return done


def _filled(value: Any, groups: Mapping[str, str]) -> Any:  # noqa: ANN401  (any JSON value)
    """`value` with `{group}`s filled in (strings, also inside lists and objects)."""
    if isinstance(value, str):
        return value.format(**groups)
    if isinstance(value, list):
        return [_filled(v, groups) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, groups) for k, v in value.items()}
    return value


def _strings(value: Any) -> list[str]:  # noqa: ANN401  (any JSON value)
    """Every string inside `value`."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []
