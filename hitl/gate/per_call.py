"""The per-call flow: one gated call, asked about where it would run, until a quorum, then judged.

LangChain's stock flow asks once in `wrap_tool_call`; ours asks again while the call needs more
approvers (with who approved so far), refuses a decision its sender may not make (`deciders`),
and returns what runs: the call (maybe as edited) or the model's answer instead. A call a
first-line reviewer decided is not asked: its reject becomes the tool's error, its approve runs
and keeps the signed receipt in state (`first_line_rejection`, `with_first_line_receipt`). Whether
the call pauses at all, and the value asked, are the gate's (`gate`, `review_requests`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import ToolMessage
from langgraph.types import Command, interrupt

from hitl.gate import deciders, timing
from hitl.gate.langchain_hitl import answer_message
from hitl.gate.review_requests import answer_contract
from hitl.gate.trusted_state import seal_receipt
from hitl.policy import quorum
from hitl.proof.signed_receipts import SIGNED_FIELD

if TYPE_CHECKING:
    from collections.abc import Callable

    from langchain.agents.middleware.human_in_the_loop import Action, RejectDecision, RespondDecision
    from langchain.agents.middleware.types import ToolCallRequest
    from langchain_core.messages import ToolCall

    from hitl.contracts.interrupts import ToolApprovalRequest
    from hitl.model.first_line.review import Verdict
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


def sealed_verdict(verdict: Verdict | None, thread_id: str | None) -> list[dict[str, Any]]:
    """A first-line verdict's signed receipt as the thread's state keeps it (sealed); none for a referral."""
    if verdict is None or verdict.receipt is None:
        return []
    return [seal_receipt(cast("Any", dict(verdict.receipt)), thread_id or "")]


def first_line_token(verdict: Verdict | None) -> dict[str, str]:
    """A first-line approve's signed receipt by tool call, for the check just before the call runs."""
    receipt = verdict.receipt if verdict is not None else None
    if receipt is None or not isinstance(receipt.get(SIGNED_FIELD), str):
        return {}
    return {str(receipt.get("tool_call_id")): str(receipt[SIGNED_FIELD])}


def first_line_rejection(call: ToolCall, verdict: Verdict, thread_id: str | None) -> Command[Any]:
    """A call a first-line reviewer rejected: its reason as the tool's error, its receipt into state."""
    message = ToolMessage(
        content=str(verdict.decision_value()["message"]),
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error",
    )
    return Command(update={"messages": [message], "approval_receipts": sealed_verdict(verdict, thread_id)})


def with_first_line_receipt(
    result: ToolMessage | Command[Any], verdict: Verdict | None, thread_id: str | None
) -> ToolMessage | Command[Any]:
    """The result of a call a first-line reviewer approved, with its signed receipt kept in state."""
    receipts = sealed_verdict(verdict, thread_id)
    if not receipts:
        return result
    if isinstance(result, ToolMessage):
        return Command(update={"messages": [result], "approval_receipts": receipts})
    update = result.update if isinstance(result.update, dict) else None
    if update is None:  # a command of the tool's own shape: the receipt is in the trail, not in state
        return result
    kept = [*update.get("approval_receipts", []), *receipts]
    return Command(
        graph=result.graph,
        update={**update, "approval_receipts": kept},
        resume=result.resume,
        goto=result.goto,
    )
