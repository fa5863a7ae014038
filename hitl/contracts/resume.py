"""Build a resume from decisions keyed by tool call id, never by position.

Clients (the CLI, scripts, tests) say "approve call_abc, reject call_def"; this module
finds the pending interrupts those calls belong to and writes the payload each interrupt
shape expects, so a reordered list can never approve the wrong call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from hitl.contracts.decisions import Decision


class ResumeError(ValueError):
    """The decisions do not match the pending tool calls."""


def pending_interrupts(thread: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every pending interrupt of a thread as `threads.get` returns it."""
    return [dict(i) for batch in (thread.get("interrupts") or {}).values() for i in batch]


def tool_call_ids(interrupt: Mapping[str, Any]) -> list[str]:
    """The tool calls an interrupt asks about, in the order its answer must follow."""
    value = interrupt.get("value") or {}
    if isinstance(value.get("action_requests"), list):
        return [str(a.get("tool_call_id", "")) for a in value["action_requests"]]
    return [str(value["tool_call_id"])] if value.get("tool_call_id") else []


def build_resume(
    interrupts: Iterable[Mapping[str, Any]], by_tool_call: Mapping[str, Decision]
) -> dict[str, Any]:
    """`{interrupt_id: answer}` for every interrupt whose tool calls all have a decision.

    A batched interrupt gets `{"decisions": [...]}` in its own order; a per-call one gets
    the decision itself. Interrupts none of whose calls are decided are left pending.

    Raises:
        ResumeError: a decision names a call that is not pending, or a batch is only
            partly decided (a batch is answered whole or not at all).
    """
    remaining = dict(by_tool_call)
    resume: dict[str, Any] = {}
    for interrupt in interrupts:
        ids = tool_call_ids(interrupt)
        decided = [i for i in ids if i in remaining]
        if not decided:
            continue
        if len(decided) != len(ids):
            missing = ", ".join(i for i in ids if i not in remaining)
            msg = f"Interrupt {interrupt['id']} asks about several calls; decide these too: {missing}"
            raise ResumeError(msg)
        value = interrupt.get("value") or {}
        answers = [remaining.pop(i) for i in ids]
        resume[str(interrupt["id"])] = (
            {"decisions": answers} if isinstance(value.get("action_requests"), list) else answers[0]
        )
    if remaining:
        msg = f"No pending approval for tool call(s): {', '.join(remaining)}"
        raise ResumeError(msg)
    return resume
