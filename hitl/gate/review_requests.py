"""The interrupt values the gate sends: what a reviewer reads, who may decide, a quorum's count, until when.

Built from a call and its `ToolGate`: the review text (remembered per call, so a resumed node
shows the text the reviewer saw), the batched request and its review configs, the stamps of a
per-call request, the deadline, and the answer contract a value accepts. Not for deciding: the
gate's flows (`batched`, `per_call`) send these values and judge the answers (`deciders`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hitl.contracts import answers
from hitl.contracts.interrupts import (
    ActionRequest,
    BatchedApprovalRequest,
    ReviewConfig,
    ToolApprovalRequest,
)
from hitl.gate.caller import requested_by
from hitl.policy import quorum
from hitl.policy.deadlines import earliest
from hitl.recently_used import RecentlyUsed

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from langchain_core.messages import ToolCall

    from hitl.contracts.decisions import DecisionType
    from hitl.contracts.interrupts import FirstLineNote
    from hitl.policy.deadlines import Deadline
    from hitl.policy.gates import ToolGate

DESCRIPTIONS_KEPT = 2048
"""Review texts remembered per gate, for the re-run of a resumed node."""


class ReviewRequests:
    """The review requests of one agent's gate: who asks, how its review texts begin, its default deadline."""

    def __init__(
        self,
        agent: str,
        description_prefix: str,
        default_deadline: Deadline | None,
        provenance: Callable[[ToolCall], Mapping[str, str] | None] | None = None,
    ) -> None:
        """Requests on behalf of `agent`; `default_deadline` covers gates without their own.

        `provenance` names, for a call of an MCP server's tool, the server, the tool and its input
        schema's digest (`mcp` in the request); None for the agent's own tools.
        """
        self.agent = agent
        self.description_prefix = description_prefix
        self.default_deadline = default_deadline
        self.provenance = provenance
        self._descriptions: RecentlyUsed[str, str] = RecentlyUsed(DESCRIPTIONS_KEPT)

    def batched(
        self,
        gated: Sequence[tuple[int, ToolCall]],
        policy: Mapping[str, ToolGate],
        notes: Mapping[str, FirstLineNote] | None = None,
    ) -> BatchedApprovalRequest:
        """One round's interrupt value: the calls asked about, who may decide, who asked, until when.

        `notes` are what a first-line reviewer said of calls it left to people, by tool call id.
        """
        said = notes or {}
        return BatchedApprovalRequest(
            action_requests=[
                self.action_request(call, policy[call["name"]], said.get(call["id"] or ""))
                for _, call in gated
            ],
            review_configs=[review_config(call, policy[call["name"]]) for _, call in gated],
            agent=self.agent,
            **requested_by(),  # type: ignore[typeddict-item]
            **earliest([s for _, call in gated if (s := self.deadline_stamp(call, policy[call["name"]]))]),  # type: ignore[typeddict-item]
        )

    def per_call(
        self,
        stock: Mapping[str, Any],
        call: ToolCall,
        gate: ToolGate,
        allowed: Iterable[DecisionType],
        note: FirstLineNote | None = None,
    ) -> ToolApprovalRequest:
        """Per-call mode: LangChain's value (`stock`) plus who asks and who may decide (and `note`)."""
        args = call["args"]
        described = with_note(with_progress(stock["description"], call, gate), note)
        return ToolApprovalRequest(
            **{**stock, "description": described},  # type: ignore[typeddict-item]
            agent=self.agent,
            required_role=gate.required_role(args),
            allowed_decisions=list(allowed),
            **({"may_allow": True} if gate.allows_later(args) else {}),  # type: ignore[typeddict-item]
            **({"self_approval": True} if gate.self_approval else {}),  # type: ignore[typeddict-item]
            **quorum_stamp(call, gate),  # type: ignore[typeddict-item]
            **requested_by(),  # type: ignore[typeddict-item]
            **self.deadline_stamp(call, gate),  # type: ignore[typeddict-item]
            **({"first_line": note} if note else {}),  # type: ignore[typeddict-item]
            **self.mcp_stamp(call),  # type: ignore[typeddict-item]
        )

    def mcp_stamp(self, call: ToolCall) -> dict[str, Any]:
        """`{"mcp": McpProvenance}` for a call of an MCP server's tool, else nothing."""
        found = self.provenance(call) if self.provenance is not None else None
        return {"mcp": dict(found)} if found else {}

    def deadline_stamp(self, call: ToolCall, gate: ToolGate) -> dict[str, Any]:
        """When this call's approval expires and what then; owners' own questions never expire."""
        if gate.required_role(call["args"]) == "owner":
            return {}
        deadline = gate.deadline or self.default_deadline
        return deadline.stamp() if deadline else {}

    def action_request(
        self, call: ToolCall, gate: ToolGate, note: FirstLineNote | None = None
    ) -> ActionRequest:
        """One call of a batched request, with its review text (and what a first-line reviewer said)."""
        request = ActionRequest(
            name=call["name"],
            args=call["args"],
            description=with_note(with_progress(self.description(call, gate), call, gate), note),
            tool_call_id=call["id"] or "",
            agent=self.agent,
            **self.mcp_stamp(call),  # type: ignore[typeddict-item]
        )
        if note:
            request["first_line"] = note
        return request

    def description(self, call: ToolCall, gate: ToolGate) -> str:
        """What the reviewer reads, built once per tool call.

        A resumed node runs again from its top and would describe the same call again (a
        description may read the database); the first text is the one the reviewer saw.
        """
        key = f"{call['id']}:{quorum.digest(call['args'])}" if call["id"] else ""
        if (text := self._descriptions.get(key)) is None:
            text = gate.describe(call["name"], call["args"], self.description_prefix)
            if key:
                self._descriptions.put(key, text)
        return text


def review_config(call: ToolCall, gate: ToolGate) -> ReviewConfig:
    """What a reviewer may do with the call at the same position of a batched request."""
    config = ReviewConfig(
        action_name=call["name"],
        allowed_decisions=list(gate.allowed_decisions),
        required_role=gate.required_role(call["args"]),
    )
    if gate.allows_later(call["args"]):
        config["may_allow"] = True
    if gate.self_approval:
        config["self_approval"] = True
    config.update(quorum_stamp(call, gate))  # type: ignore[typeddict-item]
    return config


def quorum_stamp(call: ToolCall, gate: ToolGate) -> dict[str, Any]:
    """`approvals_required` and who approved so far, for a call that needs several approvers."""
    needed = gate.approvals_needed(call["args"])
    if needed <= 1:
        return {}
    return {
        "approvals_required": needed,
        "approved_by": quorum.approvers(call["id"] or "", call["args"]) or [],
    }


def with_progress(description: str, call: ToolCall, gate: ToolGate) -> str:
    """The review text, plus a quorum's progress where every client shows it (the description).

    A generic client (Agent Chat UI) shows only the description, so "1 of 2 approvals so far:
    supervisor1" goes there too, beside the structured `approved_by` of the review config.
    """
    needed = gate.approvals_needed(call["args"])
    if needed <= 1:
        return description
    people = quorum.approvers(call["id"] or "", call["args"]) or []
    if not people:
        return f"{description}\n\nNeeds {needed} different approvers; none so far."
    return (
        f"{description}\n\n{len(people)} of {needed} approvals so far: {', '.join(people)}; "
        f"{needed - len(people)} more from someone else."
    )


def with_note(description: str, note: FirstLineNote | None) -> str:
    """The review text, plus what the first-line reviewer said: every client shows the description."""
    if not note:
        return description
    return f"{description}\n\nFirst-line reviewer {note['reviewer']} left this to you: {note['reason']}"


def answer_contract(value: BatchedApprovalRequest | ToolApprovalRequest) -> type:
    """The answer `value` accepts (`hitl.contracts.answers`): what the server checks, by construction.

    Raises:
        RuntimeError: the gate built a value no contract is known for (a bug, never a pause unchecked).
    """
    found = answers.response_type(value)
    if found is None:
        msg = f"no answer contract is known for the interrupt {value!r}"
        raise RuntimeError(msg)
    return found
