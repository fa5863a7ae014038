"""Thread allowances: "approve, and don't ask again in this thread for this tool (within bounds)".

Allowances live in the thread's state (`approval_allowances`, keyed by id), written only by
the server from an approve's `allow` and revoked by it; this module decides whether one covers
a call. It never grants anything itself and never covers a call policy always reviews.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from collections.abc import Mapping

    from langchain_core.messages import ToolCall

    from hitl.contracts.decisions import ArgBound
    from hitl.contracts.records import Allowance
    from hitl.policy.gates import ToolGate

STATE_KEY = "approval_allowances"
RANK: dict[str, int] = {"reviewer": 1, "supervisor": 2}
"""Who may decide what: an allowance covers only calls its granter could have decided."""


def merge_allowances(
    current: Mapping[str, Allowance] | None, update: Mapping[str, Allowance] | None
) -> dict[str, Allowance]:
    """State reducer: allowances by id; a later write of the same id (a revocation) replaces it."""
    return {**(current or {}), **(update or {})}


def covering(
    allowances: Mapping[str, Allowance] | None,
    *,
    thread_id: str | None,
    agent: str,
    gate: ToolGate,
    call: ToolCall,
) -> Allowance | None:
    """The live allowance that lets `call` run without a pause, if any.

    Never for: another thread or agent or tool, a revoked allowance, a call that was already
    waiting when it was granted (its answer stands, and a resume must decide the same), a call
    policy always reviews, or one its granter could not have decided.
    """
    if not allowances or not thread_id:
        return None
    args = call["args"]
    if not gate.allows_later(args):
        return None
    decider = gate.required_role(args)
    for allowance in allowances.values():
        if (
            isinstance(allowance, dict)
            and "revoked_at" not in allowance
            and allowance.get("thread_id") == thread_id
            and allowance.get("agent") == agent
            and allowance.get("tool") == call["name"]
            and call["id"] not in (allowance.get("tool_call_ids") or ())
            and could_decide(allowance, decider)
            and within(allowance.get("bounds") or {}, args)
        ):
            return allowance
    return None


def could_decide(allowance: Mapping[str, Any], decider: str) -> bool:
    """Whether the granter of `allowance` could decide a call for `decider`: by role rank, or group."""
    if decider in RANK:
        return RANK.get(str(allowance.get("granted_role")), 0) >= RANK[decider]
    groups = allowance.get("granted_groups")
    return isinstance(groups, list) and decider in groups


def within(bounds: Mapping[str, ArgBound], args: Mapping[str, Any]) -> bool:
    """Whether `args` meet every bound; a missing or unreadable argument does not."""
    for name, bound in bounds.items():
        rule = cast("Mapping[str, Any]", bound)
        if name not in args:
            return False
        value = args[name]
        if "max" in rule:
            if isinstance(value, bool) or not isinstance(value, int | float) or value > rule["max"]:
                return False
        elif "equals" in rule:
            if value != rule["equals"] or isinstance(value, bool) != isinstance(rule["equals"], bool):
                return False
        else:
            return False
    return True
