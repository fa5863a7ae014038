"""Who may decide a gated call, judged in the graph on the call the decision would run.

The role the (edited) arguments need, or the group an escalation gave the call to (the server's
record, which it names in the run: `ESCALATED_KEY`, the same record it checked the answer
against), the arguments an edit may not change, separation of duties (whoever asked decides only
where the gate allows it) and a quorum's distinct approvers. The server refuses such answers
first; this is the graph's own wall, so a refusal becomes the model's answer and the call does not
run, and in a server run it is on the trail too: a decision the server accepted that the gate then
refuses is never silent. Not for building what the reviewer sees (`review_requests`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from langgraph.config import get_config, get_store

from hitl.gate.caller import Caller, current_caller, in_server, thread_owner
from hitl.policy import quorum
from hitl.policy.groups import deciding, is_decider, who
from hitl.proof import audit_chain
from hitl.proof.receipt_check import not_run_record, signed_decider

if TYPE_CHECKING:
    from collections.abc import Mapping

    from langchain_core.messages import ToolCall

    from hitl.contracts.interrupts import Decider
    from hitl.policy.gates import ToolGate

ESCALATED_KEY = "hitl_escalated"
"""The run's `configurable` key the server sets: {tool_call_id: the group that must now decide the call},
for the calls of the approvals its watcher escalated (`server.records.threads`). None in-process."""
IN_PROCESS = Caller(identity="in-process", roles=frozenset({"supervisor", "reviewer"}))
"""Who decides when no server names anyone (scripts, tests): only the fixed arguments are checked."""


def refusal(call: ToolCall, decision: dict[str, Any], gate: ToolGate) -> ToolMessage | None:
    """The refusal of a decision its sender may not make on the call it would run, if so.

    An edit is judged on its edited arguments. Owners' own questions and rejections need no role here.
    An escalated call is decided by the group it was escalated to (an edit also needs whom its
    edited arguments need, as the server checks it). The sender is the person the decision's signed
    receipt names, when the server named one: the run may be someone else's (the owner answering a
    question the approved tool asks), or the server's own (a re-sent decision).
    """
    caller = current_caller()
    if caller is not None or in_server():
        caller = signed_decider(call, str(decision.get("type"))) or caller
    if decision.get("type") == "reject" or (caller is None and decision.get("type") != "edit"):
        return None
    if caller is None:  # in-process (no server): only the fixed arguments are checked
        caller = IN_PROCESS
    args = decision["edited_action"]["args"] if decision.get("type") == "edit" else call["args"]
    changed = sorted(a for a in gate.fixed_on_edit if args.get(a) != call["args"].get(a))
    escalated = escalated_to(call["id"] or "")
    needed = [] if escalated is None else [escalated]
    if escalated is None or decision.get("type") == "edit":
        needed.append(gate.required_role(args))
    missing = [n for n in needed if n != "owner" and n not in deciding(caller.roles)]
    owner = thread_owner()
    own = owner is not None and owner.identity == caller.identity and gate.four_eyes(call["args"])
    short = quorum_short(call, args, gate)
    if not changed and not own and not short and not missing:
        return None
    if changed:
        why = f"an edit may not change {', '.join(changed)}"
    elif own:
        why = "they asked for it, so someone else must decide it (separation of duties)"
    elif short:
        why = short
    else:
        why = f"it needs {who(missing[0])}"
    _on_the_trail(call, decision, caller, why)
    return ToolMessage(
        content=f"Not run: {caller.identity} ({caller.role}) may not decide this {call['name']}; {why}.",
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error",
    )


def escalated_to(call_id: str, config: Mapping[str, Any] | None = None) -> Decider | None:
    """The group an escalation gave this call to, as the server named it for this run; None if none."""
    if config is None:
        try:
            config = dict(get_config())
        except RuntimeError:  # outside a graph
            return None
    named = (config.get("configurable") or {}).get(ESCALATED_KEY)
    group = named.get(call_id) if isinstance(named, dict) else None
    return group if isinstance(group, str) and is_decider(group) else None


def _on_the_trail(call: ToolCall, decision: Mapping[str, Any], caller: Caller, why: str) -> None:
    """In a server run: record in the thread's trail that the gate did not run a decided call, and why."""
    try:
        config: dict[str, Any] = dict(get_config())
    except RuntimeError:  # outside a graph
        return
    if not in_server(config):
        return
    thread_id = str((config.get("configurable") or {}).get("thread_id") or "")
    agent = str((config.get("metadata") or {}).get("lc_agent_name") or "")
    message = f"{caller.identity}'s {decision.get('type')} was not applied: {why}"
    record = not_run_record(
        call,
        agent,
        thread_id,
        caller,
        message=message,
        refusal=f"the approval gate refused the decision: {why}",
    )
    store = get_store()
    if store is not None:  # a graph run without a store (a test's) keeps no trail
        audit_chain.put(store, thread_id, f"{time.time_ns():020d}-902", record)


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
