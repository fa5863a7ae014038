"""Per-run policy overrides: check one against an agent's tools, say what it changes, apply it.

A run passes `context={"policy": {...}}` (`hitl.contracts.run_context.PolicyOverride`). This module is
pure: the server calls `parse` and `changes` before a run starts (and refuses or audits);
the gate calls `effective_policy` on every gated decision. Who may loosen is the server's call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from hitl.contracts.run_context import PolicyOverride
from hitl.policy.gates import BUILTIN_TOOLS, ToolGate

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from hitl.contracts.decisions import DecisionType
    from hitl.policy.gates import Policy

NEW_GATE_DECISIONS: tuple[DecisionType, ...] = ("approve", "reject")
"""What a reviewer may answer for a tool that only this run's override gates."""

MAX_ERRORS_SHOWN = 3


class OverrideError(ValueError):
    """A policy override that cannot apply to this agent; the message says why."""


@dataclass(frozen=True)
class PolicyCatalog:
    """What an override may name for one served agent: its tools and every gate on them.

    `gates` holds, per tool, the gate of the agent and of each subagent that gates it:
    an override reaches subagents too, so loosening any of them counts.
    """

    agent: str
    tools: frozenset[str]
    gates: Mapping[str, tuple[ToolGate, ...]]

    @classmethod
    def of(cls, agent: str, parts: Iterable[tuple[Iterable[str], Policy]]) -> PolicyCatalog:
        """The catalog of `agent` from (tool names, policy) of the agent and each subagent."""
        tools: set[str] = set(BUILTIN_TOOLS)
        gates: dict[str, list[ToolGate]] = {}
        for names, policy in parts:
            tools |= set(names)
            for name, gate in policy.items():
                gates.setdefault(name, []).append(gate)
        return cls(agent=agent, tools=frozenset(tools), gates={k: tuple(v) for k, v in gates.items()})

    def approvals_needed(self, tool: str, args: Mapping[str, Any]) -> int:
        """The most distinct approvers any gate of `tool` asks for a call with `args` (1 when ungated)."""
        return max((gate.approvals_needed(args) for gate in self.gates.get(tool, ())), default=1)


@dataclass(frozen=True)
class Change:
    """One thing an override changes, in words, and whether it tightens or loosens the policy."""

    kind: Literal["tighten", "loosen"]
    text: str


def parse(raw: object, catalog: PolicyCatalog) -> dict[str, Any]:
    """The override `raw` checked against `catalog`, as plain JSON (what the gate reads).

    Raises:
        OverrideError: wrong shape or types, an unknown tool or decision, a contradiction,
            or a knob this agent does not have.
    """
    try:
        override = PolicyOverride.model_validate(raw)
    except ValidationError as error:
        shown = "; ".join(
            f"policy.{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {_short(e.get('input'))})"
            for e in error.errors()[:MAX_ERRORS_SHOWN]
        )
        msg = f"Bad policy override for {catalog.agent}: {shown}"
        raise OverrideError(msg) from None
    unknown = sorted(set(override.tools) - catalog.tools)
    if unknown:
        msg = (
            f"Bad policy override for {catalog.agent}: policy.tools names tools it does not have: "
            f"{', '.join(unknown)}. Its tools are: {', '.join(sorted(catalog.tools))}."
        )
        raise OverrideError(msg)
    for name, entry in override.tools.items():
        if entry.gated is False and entry.allowed_decisions is not None:
            msg = (
                f"Bad policy override for {catalog.agent}: policy.tools.{name} sets gated: false and "
                "allowed_decisions; an ungated tool has no decisions."
            )
            raise OverrideError(msg)
        if entry.gated is not None and entry.auto_approve_limit is not None:
            msg = (
                f"Bad policy override for {catalog.agent}: policy.tools.{name} sets gated and "
                "auto_approve_limit; gated decides every call, so it takes no limit."
            )
            raise OverrideError(msg)
        if entry.auto_approve_limit is not None and not _limits(catalog, name):
            msg = (
                f"Bad policy override for {catalog.agent}: policy.tools.{name}.auto_approve_limit: "
                f"{name} has no auto-approve limit to change."
            )
            raise OverrideError(msg)
    return override.model_dump(exclude_none=True, exclude_defaults=True)


def changes(override: Mapping[str, Any], catalog: PolicyCatalog) -> list[Change]:
    """What a parsed override changes against the agent's own policy, tightening or loosening."""
    found: list[Change] = []
    if override.get("gate_all"):
        found.append(Change("tighten", f"pauses every call of {', '.join(sorted(catalog.gates))}"))
    for name, entry in sorted((override.get("tools") or {}).items()):
        found += _tool_changes(name, entry, catalog.gates.get(name, ()))
    return found


def without_loosening(override: Mapping[str, Any], catalog: PolicyCatalog) -> dict[str, Any]:
    """A parsed `override` with every part that loosens the agent's policy taken out; the rest kept.

    What an assistant's policy becomes for a run of someone who may not loosen (only a
    supervisor may): a raised limit, an ungated tool or added decisions go; tightenings stay.
    """
    kept: dict[str, Any] = dict(override)
    tools: dict[str, Any] = {}
    for name, given in (override.get("tools") or {}).items():
        gates = catalog.gates.get(name, ())
        entry = dict(given)
        if gates and entry.get("gated") is False:
            continue
        limit = entry.get("auto_approve_limit")
        if limit is not None and any(limit > base for base in _limits(catalog, name)):
            del entry["auto_approve_limit"]
        decisions = entry.get("allowed_decisions")
        if (
            gates
            and decisions is not None
            and any(d not in g.allowed_decisions for g in gates for d in decisions)
        ):
            del entry["allowed_decisions"]
        if entry:
            tools[name] = entry
    kept.pop("tools", None)
    if tools:
        kept["tools"] = tools
    if any(change.kind == "loosen" for change in changes(kept, catalog)):  # never looser, whatever is left
        return {}
    return kept


def _tool_changes(name: str, entry: Mapping[str, Any], gates: tuple[ToolGate, ...]) -> list[Change]:
    gated = entry.get("gated")
    decisions = entry.get("allowed_decisions")
    if not gates:
        if gated is False:
            return []
        return [Change("tighten", f"gates {name} ({', '.join(decisions or NEW_GATE_DECISIONS)})")]
    if gated is False:
        return [Change("loosen", f"ungates {name}")]
    found: list[Change] = []
    if gated and any(g.when is not None or g.auto_approve_limit is not None for g in gates):
        found.append(Change("tighten", f"pauses every call of {name}"))
    found += _limit_changes(name, entry.get("auto_approve_limit"), gates)
    if decisions is not None:
        added = sorted({d for g in gates for d in decisions if d not in g.allowed_decisions})
        removed = sorted({d for g in gates for d in g.allowed_decisions if d not in decisions})
        if added:
            found.append(Change("loosen", f"adds {', '.join(added)} to {name}"))
        if removed:
            found.append(Change("tighten", f"removes {', '.join(removed)} from {name}"))
    return found


def _limit_changes(name: str, limit: float | None, gates: tuple[ToolGate, ...]) -> list[Change]:
    """An override's auto-approve limit for `name` against each of its gates' own."""
    found: list[Change] = []
    for base in sorted({g.auto_approve_limit for g in gates if g.auto_approve_limit is not None}):
        if limit is not None and limit != base:
            kind: Literal["tighten", "loosen"] = "loosen" if limit > base else "tighten"
            verb = "raises" if kind == "loosen" else "lowers"
            found.append(Change(kind, f"{verb} {name}'s auto-approve limit from {base:g} to {limit:g}"))
    return found


def effective_policy(
    policy: Policy, gateable: Iterable[str], override: Mapping[str, Any] | None
) -> dict[str, ToolGate]:
    """`policy` as a run's parsed `override` changes it; `gateable` are the tools it may add gates to."""
    if not override:
        return dict(policy)
    entries: Mapping[str, Any] = override.get("tools") or {}
    names = set(policy) | (set(entries) & set(gateable))
    result: dict[str, ToolGate] = {}
    for name in names:
        gate = effective_gate(name, policy.get(name), override)
        if gate is not None:
            result[name] = gate
    return result


def effective_gate(name: str, gate: ToolGate | None, override: Mapping[str, Any]) -> ToolGate | None:
    """One tool's gate under a parsed override; None when the tool runs without a person."""
    entry: Mapping[str, Any] | None = (override.get("tools") or {}).get(name)
    if gate is not None and override.get("gate_all"):
        gate = replace(gate, when=None, auto_approve_limit=None)
    if entry is None:
        return gate
    limit = entry.get("auto_approve_limit")
    if limit is not None and gate is not None and gate.auto_approve_limit is not None:
        gate = replace(gate, auto_approve_limit=float(limit))
    if entry.get("gated") is False:
        # Ungated, but what policy always reviews still pauses.
        return None if gate is None else replace(gate, when=_never, auto_approve_limit=None)
    if gate is None:
        gate = ToolGate(allowed_decisions=NEW_GATE_DECISIONS)
    elif entry.get("gated"):
        gate = replace(gate, when=None, auto_approve_limit=None)
    if decisions := entry.get("allowed_decisions"):
        gate = replace(gate, allowed_decisions=tuple(decisions))
    return gate


def _never(_args: Mapping[str, Any]) -> bool:
    return False


def _limits(catalog: PolicyCatalog, tool: str) -> list[float]:
    return [g.auto_approve_limit for g in catalog.gates.get(tool, ()) if g.auto_approve_limit is not None]


def _short(value: object, limit: int = 60) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else f"{text[:limit]}…"
