"""The per-call flow: one gated call, asked about where it would run, until a quorum, then judged.

LangChain's stock flow asks once in `wrap_tool_call`; ours asks again while the call needs more
approvers (with who approved so far), refuses a decision its sender may not make (`deciders`),
and returns what runs: the call (maybe as edited) or the model's answer instead. Whether the
call pauses at all, and the value asked, are the gate's (`gate`, `review_requests`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, cast

from langgraph.types import interrupt

from hitl.gate import deciders, timing
from hitl.gate.langchain_hitl import answer_message
from hitl.gate.review_requests import answer_contract
from hitl.policy import quorum

if TYPE_CHECKING:
    from collections.abc import Callable

    from langchain.agents.middleware.human_in_the_loop import Action, RejectDecision, RespondDecision
    from langchain.agents.middleware.types import ToolCallRequest
    from langchain_core.messages import ToolMessage

    from hitl.contracts.interrupts import ToolApprovalRequest
    from hitl.policy.gates import ToolGate


def resolve(
    request: ToolCallRequest,
    gate: ToolGate,
    *,
    ask: Callable[[ToolCallRequest], ToolApprovalRequest],
    apply_edit: Callable[[ToolCallRequest, Action], ToolCallRequest],
    started: float,
) -> tuple[ToolCallRequest, Action | None] | ToolMessage:
    """What runs of a gated call: the request (edited, with the reviewer's call), or the model's answer.

    `ask` builds the value for the call with its current args; `apply_edit` is LangChain's own
    substitution of an edit; `started` is when the gate first looked at the call (the pause timer).
    """
    call = request.tool_call
    asked, progress = request, None
    while progress is None or progress.waiting(gate.approvals_needed(progress.args)):
        if progress is not None:  # another approver is needed: ask again about the current args
            asked = request.override(tool_call={**call, "args": progress.args})
        value = ask(asked)
        with timing.pausing(started):
            answer = interrupt(value, response_schema=answer_contract(value))
        progress = progress.fold(answer) if progress else quorum.start(call["args"], answer)
        started = time.perf_counter()
    decision = progress.decision
    if (refusal := deciders.refusal(call, decision, gate)) is not None:
        return refusal
    if decision["type"] == "approve":
        return request, None
    if decision["type"] == "edit":
        executed = decision["edited_action"]
        return apply_edit(request, executed), executed
    return answer_message(call, cast("RejectDecision | RespondDecision", decision))
