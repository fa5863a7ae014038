"""`ApprovalGate`: LangChain's HITL middleware, made safe to answer and explicit about who asks.

Both modes pause exactly where the stock middleware does. What we add: every interrupt
names the agent asking, each call's `tool_call_id` and who may decide; and the batched
answer is checked (count, order, allowed types, edit args) *before* LangGraph saves it,
so a bad answer can never wedge the thread. A run's policy override (`hitl.policy.overrides`,
recorded in state when the run starts) and the thread's allowances (`hitl.policy.allowances`)
change which calls pause; both are read from state, so a resume decides the same. A paused
call a policy hands to a first-line reviewer is put to it first (`hitl.model.first_line.review`):
it runs under the model's signed receipt, is rejected, or goes to people with its reason. The tools
of the agent's MCP servers (`hitl.mcp.toolbox`) are gated here too, as `hitl.mcp.gating` says. This
module says which calls pause and which may run: `batched` and `per_call` are the two flows,
`review_requests` builds what they send, `deciders` says who may decide, `run_start` checks a run.
One concept, however long: the gate's hooks around every model turn and tool call.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, cast

from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.config import get_config

from hitl.contracts import answers
from hitl.gate import batched, per_call
from hitl.gate.review_requests import ReviewRequests
from hitl.gate.tool_outcome import arun_checked, run_checked
from hitl.gate.trusted_state import (
    CLEARANCES_KEY,
    RUN_POLICY_KEY,
    ApprovalState,
    first_line_tokens,
    is_asked_where_it_runs,
    trusted_allowances,
    trusted_run_policy,
)
from hitl.model.first_line import review
from hitl.policy.allowances import STATE_KEY, covering
from hitl.policy.gates import BUILTIN_TOOLS, Policy, ToolGate, check_policy
from hitl.policy.overrides import effective_policy
from hitl.proof import receipt_check

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from langchain.agents.middleware.human_in_the_loop import Action
    from langchain.agents.middleware.types import AgentState, ToolCallRequest
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime
    from langgraph.types import Command

    from hitl.contracts.interrupts import FirstLineNote, InterruptMode, ToolApprovalRequest
    from hitl.mcp.toolbox import McpToolbox
    from hitl.model.first_line.review import Verdict
    from hitl.policy.deadlines import Deadline

DEFAULT_PREFIX = "Tool execution requires approval"


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
        toolbox: McpToolbox | None = None,
    ) -> None:
        """Gate `agent`'s `tools` by `policy`; `default_deadline` covers gates without their own.

        Every gate applies the run's recorded policy override; the top agent's `RunStartGate`
        records it. `toolbox` holds the agent's MCP servers: their tools pass this gate too, and
        `policy` may name them (by the name the model calls them).

        Raises:
            ValueError: if the policy names a tool the agent does not have.
        """
        mcp_named = [name for name in policy if toolbox is not None and toolbox.owner(name) is not None]
        check_policy(agent, policy, [*(t.name for t in tools), *mcp_named])
        super().__init__(
            {name: self._interrupt_on(name, gate) for name, gate in policy.items()},
            description_prefix=description_prefix,
            interrupt_mode=interrupt_mode,
        )
        self.agent = agent
        self.policy = dict(policy)
        self.tools_by_name = {t.name: t for t in tools}
        self.toolbox = toolbox
        if toolbox is not None:
            toolbox.named = {name: gate for name, gate in policy.items() if name in mcp_named}
        answers.register(agent, tools)
        self.reviews = ReviewRequests(
            agent, self.description_prefix, default_deadline, toolbox.provenance if toolbox else None
        )
        self.gateable = frozenset(self.tools_by_name) | BUILTIN_TOOLS | frozenset(mcp_named)

    def _interrupt_on(self, name: str, gate: ToolGate) -> InterruptOnConfig:
        return InterruptOnConfig(
            allowed_decisions=list(gate.allowed_decisions),
            description=lambda call, _state, _runtime: gate.describe(
                name, call["args"], self.description_prefix
            ),
            when=lambda request: self._pauses(
                request.tool_call, self.policy_for(request.state), request.state
            ),
        )

    def policy_for(self, state: Mapping[str, Any]) -> Mapping[str, ToolGate]:
        """This agent's policy as the run's recorded override changes it, its MCP tools' gates included."""
        override = trusted_run_policy(state.get(RUN_POLICY_KEY), current_thread_id())
        policy = effective_policy(self.policy, self.gateable, override)
        return policy if self.toolbox is None else self.toolbox.gates(policy)

    def _pauses(self, call: ToolCall, policy: Mapping[str, ToolGate], state: Mapping[str, Any]) -> bool:
        """Whether `call` waits for a person: gated, and not covered by a thread allowance."""
        gate = policy.get(call["name"])
        if gate is None or not gate.pauses(call["args"]):
            return False
        allowances = trusted_allowances(state.get(STATE_KEY))
        return not allowances or (
            covering(allowances, thread_id=current_thread_id(), agent=self.agent, gate=gate, call=call)
            is None
        )

    def after_model(
        self,
        state: AgentState[Any],
        runtime: Runtime[Any],  # noqa: ARG002  (the hook's signature; the gate reads state)
    ) -> dict[str, Any] | None:
        """Batched mode: one checked interrupt for every gated call of the last model turn."""
        if self.interrupt_mode == "per_call":
            return None
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        if last is None or not last.tool_calls:
            return None
        started = time.perf_counter()
        policy = self.policy_for(state)
        thread_id = current_thread_id()
        gated = [
            (index, call) for index, call in enumerate(last.tool_calls) if self._pauses(call, policy, state)
        ]
        if not gated:
            return batched.cleared_turn(last, self.agent, thread_id)
        if batched.mixes_deciders(gated, policy):
            return batched.asked_where_they_run(last, gated, self.agent, thread_id)
        verdicts = {
            index: verdict
            for index, call in gated
            if (verdict := self._first_line(call, policy[call["name"]], thread_id)) is not None
        }
        by_model = {index: verdict for index, verdict in verdicts.items() if verdict.decision != "refer"}
        notes = {
            call["id"] or "": verdicts[i].note() for i, call in gated if i in verdicts and i not in by_model
        }
        asking = [(index, call) for index, call in gated if index not in by_model]
        decisions = batched.ask(
            asking, policy, lambda asked: self.reviews.batched(asked, policy, notes), started
        )
        return batched.apply(
            last,
            decisions,
            policy,
            agent=self.agent,
            thread_id=thread_id,
            process=self._process_decision,
            by_model=by_model,
        )

    def _first_line(self, call: ToolCall, gate: ToolGate, thread_id: str | None) -> Verdict | None:
        """What the gate's first-line reviewer says of a paused call (None: a person decides; blocking)."""
        if not review.may_ask(gate):
            return None
        description = self.reviews.description(call, gate)
        return review.ask(call, gate, agent=self.agent, thread_id=thread_id, description=description)

    async def aafter_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """`after_model`; off the event loop when it asks, as a description may look something up."""
        if self.interrupt_mode == "per_call":
            return None
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        policy = self.policy_for(state)
        gated = [
            (i, c) for i, c in enumerate(last.tool_calls if last else []) if self._pauses(c, policy, state)
        ]
        if not gated or batched.mixes_deciders(gated, policy):
            return self.after_model(state, runtime)  # nothing is asked here
        return await asyncio.to_thread(self.after_model, state, runtime)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """The stock hook, behind the clearance check (batched); a failing tool is recorded."""
        if (blocked := self._uncleared(request)) is not None:
            return blocked
        decided = self._decided(request)
        thread_id = current_thread_id()

        def checked(to_run: ToolCallRequest, verdict: Verdict | None = None) -> ToolMessage | Command[Any]:
            delegated = self._delegated(to_run, verdict, thread_id) if decided else {}
            if decided and (refused := receipt_check.blocked(to_run, self.agent, thread_id, delegated)):
                return refused
            return cast(
                "ToolMessage | Command[Any]",
                run_checked(
                    to_run, lambda: handler(to_run), agent=self.agent, thread_id=thread_id, decided=decided
                ),
            )

        if self.interrupt_mode == "per_call" or self._asked_here(request):
            resolved = self._resolved(request)
            if not isinstance(resolved, tuple):
                return resolved
            to_run, executed, verdict = resolved
            result = self._annotate_edited_result(checked(to_run, verdict), to_run, executed)
            return per_call.with_first_line_receipt(result, verdict, thread_id)
        return super().wrap_tool_call(request, checked)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The stock async hook, checked as `wrap_tool_call`; a per-call review is built off the loop."""
        if (blocked := self._uncleared(request)) is not None:
            return blocked
        decided = self._decided(request)
        thread_id = current_thread_id()

        async def checked(
            to_run: ToolCallRequest, verdict: Verdict | None = None
        ) -> ToolMessage | Command[Any]:
            delegated = self._delegated(to_run, verdict, thread_id) if decided else {}
            if decided and (
                refused := await receipt_check.ablocked(to_run, self.agent, thread_id, delegated)
            ):
                return refused
            return cast(
                "ToolMessage | Command[Any]",
                await arun_checked(
                    to_run, lambda: handler(to_run), agent=self.agent, thread_id=thread_id, decided=decided
                ),
            )

        per_call_here = self.interrupt_mode == "per_call" or self._asked_here(request)
        if not per_call_here or not self._pauses(
            request.tool_call, self.policy_for(request.state), request.state
        ):
            return await super().awrap_tool_call(request, checked)
        resolved = await asyncio.to_thread(self._resolved, request)
        if not isinstance(resolved, tuple):
            return resolved
        to_run, executed, verdict = resolved
        result = self._annotate_edited_result(await checked(to_run, verdict), to_run, executed)
        return per_call.with_first_line_receipt(result, verdict, thread_id)

    def _delegated(
        self, request: ToolCallRequest, verdict: Verdict | None, thread_id: str | None
    ) -> dict[str, str]:
        """The first-line receipts this run may run calls under: this call's, and the turn's in state."""
        found = first_line_tokens(request.state.get("approval_receipts"), thread_id or "")
        return {**found, **per_call.first_line_token(verdict)}

    def _uncleared(self, request: ToolCallRequest) -> ToolMessage | None:
        """Batched mode: the refusal of a call this gate did not clear (planted by a state write)."""
        if self.interrupt_mode == "per_call":
            return None
        final = self._reviewer_edit(request) or request.tool_call
        clearances = request.state.get(CLEARANCES_KEY)
        return batched.uncleared(
            request.tool_call, final, clearances, agent=self.agent, thread_id=current_thread_id()
        )

    def _asked_here(self, request: ToolCallRequest) -> bool:
        """Batched mode: whether this call, of a turn of several deciders, is asked about where it runs."""
        if self.interrupt_mode == "per_call":
            return False
        call = request.tool_call
        clearances = request.state.get(CLEARANCES_KEY)
        return is_asked_where_it_runs(
            clearances, current_thread_id(), self.agent, call["id"] or "", call["name"], call["args"]
        )

    def _decided(self, request: ToolCallRequest) -> bool:
        """Whether a person (or the policy's pause) stood before this call: its failure is recorded."""
        return self._pauses(request.tool_call, self.policy_for(request.state), request.state) or bool(
            self._reviewer_edit(request)
        )

    def _resolved(
        self, request: ToolCallRequest
    ) -> tuple[ToolCallRequest, Action | None, Verdict | None] | ToolMessage | Command[Any]:
        """Per-call: what runs of a call, after its first-line reviewer (if any), then people (blocking)."""
        call = request.tool_call
        policy = self.policy_for(request.state)
        if not self._pauses(call, policy, request.state):
            return request, None, None
        verdict = self._first_line(call, policy[call["name"]], current_thread_id())
        if verdict is not None and verdict.decision == "approve":
            return request, None, verdict
        if verdict is not None and verdict.decision == "reject":
            return per_call.first_line_rejection(call, verdict, current_thread_id())
        resolved = self._resolve_per_call(request, verdict.note() if verdict else None)
        return resolved if isinstance(resolved, ToolMessage) else (*resolved, None)

    def _resolve_per_call(
        self, request: ToolCallRequest, note: FirstLineNote | None = None
    ) -> tuple[ToolCallRequest, Action | None] | ToolMessage:
        """Per-call mode: the stock flow, under the run's policy and the thread's allowances."""
        call = request.tool_call
        policy = self.policy_for(request.state)
        started = time.perf_counter()
        if not self._pauses(call, policy, request.state):
            return request, None
        gate = policy[call["name"]]
        return per_call.resolve(
            request,
            gate,
            ask=lambda asked: self._tool_approval_request(
                asked, self._interrupt_on(call["name"], gate), policy, note
            ),
            apply_edit=self._apply_edit,
            started=started,
        )

    def _tool_approval_request(
        self,
        request: ToolCallRequest,
        config: InterruptOnConfig,
        policy: Mapping[str, ToolGate] | None = None,
        note: FirstLineNote | None = None,
    ) -> ToolApprovalRequest:
        """Per-call mode: the stock value plus who asks and who may decide (and a first-line `note`)."""
        gate = (self.policy if policy is None else policy)[request.tool_call["name"]]
        stock = super()._tool_approval_request(request, config)
        return self.reviews.per_call(stock, request.tool_call, gate, config["allowed_decisions"], note)


def current_thread_id() -> str | None:
    """The thread this graph runs on (subagents run on their parent's)."""
    try:
        thread_id = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:  # outside a graph
        return None
    return None if thread_id is None else str(thread_id)
