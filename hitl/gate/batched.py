"""The batched flow: one interrupt for every gated call of a model turn, and the turn as the answers leave it.

`ask` sends round after round until each call has the approvers its arguments need (a quorum
asks again, with who approved so far); `apply` turns the decisions into the turn the tools node
runs: the calls kept, the model's answers for rejected and refused ones, the reviewers' edits,
and the gate's clearance of each call it lets run, which `uncleared` checks where the call would
run; calls a first-line reviewer decided join the answers with their receipts. Which calls pause,
and which a first-line reviewer decides, is the gate's (`gate`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

from langchain.agents.middleware import InterruptOnConfig
from langchain_core.messages import ToolMessage
from langgraph.types import interrupt

from hitl.gate import deciders, timing
from hitl.gate.per_call import sealed_verdict
from hitl.gate.review_requests import answer_contract
from hitl.gate.trusted_state import (
    CLEARANCES_KEY,
    asked_where_it_runs,
    clearance,
    is_asked_where_it_runs,
    is_cleared,
)
from hitl.policy import quorum

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from langchain.agents.middleware.human_in_the_loop import Action, Decision
    from langchain_core.messages import AIMessage, ToolCall

    from hitl.contracts.interrupts import BatchedApprovalRequest
    from hitl.model.first_line.review import Verdict
    from hitl.policy.gates import ToolGate

    Process = Callable[[Decision, ToolCall, InterruptOnConfig], tuple[ToolCall | None, ToolMessage | None]]


def ask(
    gated: Sequence[tuple[int, ToolCall]],
    policy: Mapping[str, ToolGate],
    request_of: Callable[[Sequence[tuple[int, ToolCall]]], BatchedApprovalRequest],
    started: float,
) -> dict[int, dict[str, Any]]:
    """The decision that stands for each gated call (by its index in the turn), once none waits.

    `started` is when the gate first looked at the calls: its work until the interrupt is timed.
    """
    progress: dict[int, quorum.Progress] = {}
    asking = list(gated)
    while asking:
        request = request_of(asking)
        with timing.pausing(started):
            answer = interrupt(request, response_schema=answer_contract(request))
        for (index, call), decision in zip(asking, answer["decisions"], strict=True):
            held = progress.get(index)
            progress[index] = held.fold(decision) if held else quorum.start(call["args"], decision)
        asking = [  # calls that need more approvers ask again, with their current args
            (index, {**call, "args": progress[index].args})
            for index, call in gated
            if progress[index].waiting(policy[call["name"]].approvals_needed(progress[index].args))
        ]
        started = time.perf_counter()
    return {index: p.decision for index, p in progress.items()}


def mixes_deciders(gated: Sequence[tuple[int, ToolCall]], policy: Mapping[str, ToolGate]) -> bool:
    """Whether the gated calls of a turn are for different deciders (an owner's question beside a review)."""
    return len({policy[call["name"]].required_role(call["args"]) for _, call in gated}) > 1


def asked_where_they_run(
    last: AIMessage, gated: Sequence[tuple[int, ToolCall]], agent: str, thread_id: str | None
) -> dict[str, Any]:
    """A turn whose calls are for different deciders: never one batch, each gated call asked on its own.

    One interrupt could then be answered by nobody (its reviewer may not answer the owner's
    question, nor the owner the refund). Each gated call is marked to be asked about where it
    runs, as in per-call mode: an interrupt of its own for its own decider, all at once, answered
    in any order; the turn goes on when every call has its answer. The rest are cleared to run.
    """
    asked = {index for index, _ in gated}
    marks = {}
    for index, call in enumerate(last.tool_calls):
        if not call["id"]:
            continue
        seal = asked_where_it_runs if index in asked else clearance
        marks[call["id"]] = seal(thread_id, agent, call["id"], call["name"], call["args"])
    return {"hitl_edited_tool_calls": {}, CLEARANCES_KEY: marks}


def cleared_turn(last: AIMessage, agent: str, thread_id: str | None) -> dict[str, Any]:
    """A turn with nothing to ask: every call with an id is cleared to run as the model made it."""
    return {
        "hitl_edited_tool_calls": {},
        CLEARANCES_KEY: {
            c["id"]: clearance(thread_id, agent, c["id"], c["name"], c["args"])
            for c in last.tool_calls
            if c["id"]
        },
    }


def apply(  # noqa: PLR0913  (the turn, its answers, and what judges and clears them)
    last: AIMessage,
    decisions: dict[int, dict[str, Any]],
    policy: Mapping[str, ToolGate],
    *,
    agent: str,
    thread_id: str | None,
    process: Process,
    by_model: Mapping[int, Verdict] | None = None,
) -> dict[str, Any]:
    """The model turn as the answers leave it: kept calls, answers for the model, clearances.

    `process` is LangChain's own reading of one decision (the kept call, the model's answer).
    `by_model` are the calls a first-line reviewer decided, by index: the server checked its
    authority when it signed them, so they are applied as they are and their receipts kept in state.
    """
    delegated = by_model or {}
    decisions = {**decisions, **{index: verdict.decision_value() for index, verdict in delegated.items()}}
    kept: list[ToolCall] = []
    answered: list[ToolMessage] = []
    edited: dict[str, Any] = {}
    cleared: dict[str, str] = {}
    for index, call in enumerate(last.tool_calls):
        call_id = call["id"] or ""
        if index not in decisions:
            kept.append(call)
            cleared[call_id] = clearance(thread_id, agent, call_id, call["name"], call["args"])
            continue
        decision = decisions[index]
        refusal = None if index in delegated else deciders.refusal(call, decision, policy[call["name"]])
        if refusal is not None:
            kept.append(call)
            answered.append(refusal)
            continue
        revised, message = process(
            cast("Decision", decision),
            call,
            InterruptOnConfig(allowed_decisions=list(policy[call["name"]].allowed_decisions)),
        )
        if revised is not None:
            kept.append(revised)
            final = decision["edited_action"] if decision["type"] == "edit" else call
            if decision["type"] == "edit":
                edited[call_id] = decision["edited_action"]
            if decision["type"] in {"approve", "edit"}:
                cleared[call_id] = clearance(thread_id, agent, call_id, final["name"], final["args"])
        if message is not None:
            answered.append(message)
    last.tool_calls = kept
    applied = {
        "messages": [last, *answered],
        "hitl_edited_tool_calls": edited,
        CLEARANCES_KEY: cleared,
    }
    if receipts := [r for verdict in delegated.values() for r in sealed_verdict(verdict, thread_id)]:
        applied["approval_receipts"] = receipts
    return applied


def uncleared(
    call: ToolCall, final: Action | ToolCall, clearances: object, *, agent: str, thread_id: str | None
) -> ToolMessage | None:
    """The refusal of a call (`final`: as a reviewer edited it) that `agent`'s gate did not clear.

    A call of a mixed turn marked to be asked about where it runs passes here: it is asked there.
    """
    if is_cleared(clearances, thread_id, agent, call["id"] or "", final["name"], final["args"]):
        return None
    if is_asked_where_it_runs(clearances, thread_id, agent, call["id"] or "", call["name"], call["args"]):
        return None
    return ToolMessage(
        content=(
            f"Not run: this {call['name']} call did not pass {agent}'s approval gate "
            "(it was not proposed by the model and reviewed as policy requires)."
        ),
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error",
    )
