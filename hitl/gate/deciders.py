"""Who may decide a gated call, judged in the graph on the call the decision would run.

The role the (edited) arguments need, the arguments an edit may not change, separation of duties
(whoever asked decides only where the gate allows it) and a quorum's distinct approvers. The
server refuses such answers first; this is the graph's own wall, so a refusal becomes the model's
answer and the call does not run. Not for building what the reviewer sees (`review_requests`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage

from hitl.gate.caller import Caller, current_caller, thread_owner
from hitl.policy import quorum
from hitl.policy.groups import who
from hitl.proof.receipt_check import signed_decider

if TYPE_CHECKING:
    from collections.abc import Mapping

    from langchain_core.messages import ToolCall

    from hitl.policy.gates import ToolGate

IN_PROCESS = Caller(identity="in-process", roles=frozenset({"supervisor", "reviewer"}))
"""Who decides when no server names anyone (scripts, tests): only the fixed arguments are checked."""


def refusal(call: ToolCall, decision: dict[str, Any], gate: ToolGate) -> ToolMessage | None:
    """The refusal of a decision its sender may not make on the call it would run, if so.

    An edit is judged on its edited arguments. Owners' own questions and rejections need no role here.
    The sender is the person the decision's signed receipt names, when the server named one: the run
    may be someone else's (the owner answering a question the approved tool asks).
    """
    caller = current_caller()
    if caller is not None:
        caller = signed_decider(call, str(decision.get("type"))) or caller
    if decision.get("type") == "reject" or (caller is None and decision.get("type") != "edit"):
        return None
    if caller is None:  # in-process (no server): only the fixed arguments are checked
        caller = IN_PROCESS
    args = decision["edited_action"]["args"] if decision.get("type") == "edit" else call["args"]
    changed = sorted(a for a in gate.fixed_on_edit if args.get(a) != call["args"].get(a))
    needed = gate.required_role(args)
    owner = thread_owner()
    own = owner is not None and owner.identity == caller.identity and gate.four_eyes(call["args"])
    short = quorum_short(call, args, gate)
    if not changed and not own and not short and (needed == "owner" or needed in caller.roles):
        return None
    if changed:
        why = f"an edit may not change {', '.join(changed)}"
    elif own:
        why = "they asked for it, so someone else must decide it (separation of duties)"
    elif short:
        why = short
    else:
        why = f"it needs {who(needed)}"
    return ToolMessage(
        content=f"Not run: {caller.identity} ({caller.role}) may not decide this {call['name']}; {why}.",
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error",
    )


def quorum_short(call: ToolCall, args: Mapping[str, Any], gate: ToolGate) -> str | None:
    """Why a call that needs several approvers may not run yet, if so (the server's names count).

    Without a server (no caller, no names) the rounds alone count, as for every person check.
    """
    needed = gate.approvals_needed(args)
    if needed <= 1:
        return None
    named = quorum.approvers(call["id"] or "", args)
    if named is None and current_caller() is None:
        return None
    people = sorted(set(named or []))
    if len(people) >= needed:
        return None
    so_far = f"approved by {', '.join(people)} only" if people else "no approval is on record"
    return f"it needs {needed} different approvers, and {so_far}"
