"""`ApprovalGate`: LangChain's HITL middleware, made safe to answer and explicit about who asks.

Both modes pause exactly where the stock middleware does. What we add: every interrupt
names the agent asking, each call's `tool_call_id` and who may decide; and the batched
answer is checked (count, order, allowed types, edit args) *before* LangGraph saves it,
so a bad answer can never wedge the thread.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, cast

from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig
from langchain.agents.middleware.human_in_the_loop import (
    _as_sent,  # the stock per-call checker: validate, then pass the answer on as sent
    _decision_schema,  # the stock per-decision schema (edit args follow the tool's schema)
    _HumanInTheLoopState,  # the stock state: keeps reviewer edits between after_model and the tool
)
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.types import interrupt
from pydantic import WrapValidator, create_model

from hitl.contracts import (
    ActionRequest,
    ApprovalReceipt,
    BatchedApprovalRequest,
    InterruptMode,
    ReviewConfig,
    ToolApprovalRequest,
)
from hitl.deadlines import Deadline, earliest
from hitl.policy import Policy, ToolGate, check_policy

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langchain.agents.middleware.types import AgentState, ToolCallRequest
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime

DEFAULT_PREFIX = "Tool execution requires approval"


class ApprovalState(_HumanInTheLoopState[Any]):
    """The stock HITL state plus the receipts of accepted decisions (written by the server)."""

    approval_receipts: NotRequired[Annotated[list[ApprovalReceipt], operator.add]]


class ApprovalGate(HumanInTheLoopMiddleware):  # type: ignore[type-arg]
    """Pauses the gated tool calls of one agent or subagent, as its `Policy` says."""

    state_schema = ApprovalState  # type: ignore[assignment]

    def __init__(  # noqa: PLR0913  (the gate's parts, named)
        self,
        agent: str,
        policy: Policy,
        tools: Sequence[BaseTool],
        *,
        interrupt_mode: InterruptMode = "batched",
        description_prefix: str = DEFAULT_PREFIX,
        default_deadline: Deadline | None = None,
    ) -> None:
        """Gate `agent`'s `tools` by `policy`; `default_deadline` covers gates without their own.

        Raises:
            ValueError: if the policy names a tool the agent does not have.
        """
        check_policy(agent, policy, (t.name for t in tools))
        super().__init__(
            {name: self._interrupt_on(name, gate) for name, gate in policy.items()},
            description_prefix=description_prefix,
            interrupt_mode=interrupt_mode,
        )
        self.agent = agent
        self.policy = dict(policy)
        self.tools_by_name = {t.name: t for t in tools}
        self.default_deadline = default_deadline

    def _interrupt_on(self, name: str, gate: ToolGate) -> InterruptOnConfig:
        config = InterruptOnConfig(
            allowed_decisions=list(gate.allowed_decisions),
            description=lambda call, _state, _runtime: gate.describe(
                name, call["args"], self.description_prefix
            ),
        )
        if gate.when is not None:
            config["when"] = lambda request: gate.pauses(request.tool_call["args"])
        return config

    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Batched mode: one checked interrupt for every gated call of the last model turn."""
        if self.interrupt_mode == "per_call":
            return None
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        if last is None or not last.tool_calls:
            return None
        gated = [
            (index, call)
            for index, call in enumerate(last.tool_calls)
            if (config := self.interrupt_on.get(call["name"])) is not None
            and self._should_interrupt(call, config, state, runtime)
        ]
        if not gated:
            return {"hitl_edited_tool_calls": {}} if state.get("hitl_edited_tool_calls") else None

        request = BatchedApprovalRequest(
            action_requests=[self._action_request(call) for _, call in gated],
            review_configs=[self._review_config(call) for _, call in gated],
            agent=self.agent,
            **earliest([s for _, call in gated if (s := self._deadline_stamp(call))]),  # type: ignore[typeddict-item]
        )
        answer = interrupt(request, response_schema=self._batched_response_type([c for _, c in gated]))
        decisions = dict(zip((i for i, _ in gated), answer["decisions"], strict=True))

        kept: list[ToolCall] = []
        answered: list[ToolMessage] = []
        edited: dict[str, Any] = {}
        for index, call in enumerate(last.tool_calls):
            if index not in decisions:
                kept.append(call)
                continue
            decision = decisions[index]
            revised, message = self._process_decision(decision, call, self.interrupt_on[call["name"]])
            if revised is not None:
                kept.append(revised)
                if decision["type"] == "edit":
                    edited[call["id"] or ""] = decision["edited_action"]
            if message is not None:
                answered.append(message)
        last.tool_calls = kept
        return {"messages": [last, *answered], "hitl_edited_tool_calls": edited}

    def _tool_approval_request(
        self, request: ToolCallRequest, config: InterruptOnConfig
    ) -> ToolApprovalRequest:
        """Per-call mode: the stock value plus who asks and who may decide."""
        value = super()._tool_approval_request(request, config)
        args = request.tool_call["args"]
        return ToolApprovalRequest(
            **value,
            agent=self.agent,
            required_role=self.policy[request.tool_call["name"]].required_role(args),
            allowed_decisions=list(config["allowed_decisions"]),
            **self._deadline_stamp(request.tool_call),  # type: ignore[typeddict-item]
        )

    def _deadline_stamp(self, call: ToolCall) -> dict[str, Any]:
        """When this call's approval expires and what then; owners' own questions never expire."""
        gate = self.policy[call["name"]]
        if gate.required_role(call["args"]) == "owner":
            return {}
        deadline = gate.deadline or self.default_deadline
        return deadline.stamp() if deadline else {}

    def _action_request(self, call: ToolCall) -> ActionRequest:
        gate = self.policy[call["name"]]
        return ActionRequest(
            name=call["name"],
            args=call["args"],
            description=gate.describe(call["name"], call["args"], self.description_prefix),
            tool_call_id=call["id"] or "",
            agent=self.agent,
        )

    def _review_config(self, call: ToolCall) -> ReviewConfig:
        gate = self.policy[call["name"]]
        return ReviewConfig(
            action_name=call["name"],
            allowed_decisions=list(gate.allowed_decisions),
            required_role=gate.required_role(call["args"]),
        )

    def _batched_response_type(self, calls: list[ToolCall]) -> type:
        """`{"decisions": [...]}` with exactly one allowed decision per call, in order."""
        per_call = tuple(
            _decision_schema(
                list(self.policy[c["name"]].allowed_decisions), c["name"], self.tools_by_name.get(c["name"])
            )
            for c in calls
        )
        response = create_model("BatchedResponse", decisions=(tuple[per_call], ...))  # type: ignore[valid-type]
        return cast("type", Annotated[response, WrapValidator(_as_sent)])
