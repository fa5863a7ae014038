"""`ApprovalGate`: LangChain's HITL middleware, made safe to answer and explicit about who asks.

Both modes pause exactly where the stock middleware does. What we add: every interrupt
names the agent asking, each call's `tool_call_id` and who may decide; and the batched
answer is checked (count, order, allowed types, edit args) *before* LangGraph saves it,
so a bad answer can never wedge the thread. A run's policy override (`hitl.policy.overrides`,
recorded in state when the run starts) and the thread's allowances (`hitl.policy.allowances`)
change which calls pause; both are read from state, so a resume decides the same.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, cast

from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.config import get_config
from langgraph.types import interrupt

from hitl.contracts import answers
from hitl.contracts.interrupts import (
    ActionRequest,
    BatchedApprovalRequest,
    InterruptMode,
    ReviewConfig,
    ToolApprovalRequest,
)
from hitl.contracts.records import (  # noqa: TC001  (LangGraph reads the state's annotations at runtime)
    Allowance,
    ApprovalReceipt,
)
from hitl.gate import timing
from hitl.gate.caller import Caller, current_caller, requested_by, thread_owner
from hitl.gate.langchain_hitl import HumanInTheLoopState, answer_message
from hitl.gate.tool_outcome import arun_checked, run_checked
from hitl.gate.trusted_state import (
    CLEARANCES_KEY,
    clearance,
    is_cleared,
    keep_clearances,
    seal_run_policy,
    sealed_allowances,
    sealed_receipts,
    sealed_run_policy,
    trusted_allowances,
    trusted_run_policy,
)
from hitl.policy import quorum
from hitl.policy.allowances import STATE_KEY, covering
from hitl.policy.deadlines import Deadline, earliest
from hitl.policy.gates import BUILTIN_TOOLS, Policy, ToolGate, check_policy
from hitl.policy.overrides import PolicyCatalog, effective_policy, parse
from hitl.proof import receipt_check

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from langchain.agents.middleware.human_in_the_loop import (
        Action,
        Decision,
        RejectDecision,
        RespondDecision,
    )
    from langchain.agents.middleware.types import AgentState, ToolCallRequest
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime
    from langgraph.types import Command

DESCRIPTIONS_KEPT = 2048
"""Review texts remembered per gate, for the re-run of a resumed node."""
DEFAULT_PREFIX = "Tool execution requires approval"
RUN_POLICY_KEY = "run_policy"


class ApprovalState(HumanInTheLoopState[Any]):
    """The stock HITL state plus what the server and the run start record for the gate.

    `approval_receipts` and `approval_allowances` are written by the server; `run_policy` is
    the run's checked policy override, recorded by the agent's gate when the run starts;
    `hitl_cleared_calls` holds the gate's clearance of each call of the last model turn.
    Every one is sealed (`hitl.gate.trusted_state`): an unsealed write is dropped by its reducer.
    """

    approval_receipts: NotRequired[Annotated[list[ApprovalReceipt], sealed_receipts]]
    approval_allowances: NotRequired[Annotated[dict[str, Allowance], sealed_allowances]]
    run_policy: NotRequired[Annotated[dict[str, Any], sealed_run_policy]]
    hitl_cleared_calls: NotRequired[Annotated[dict[str, str], keep_clearances, PrivateStateAttr]]


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
        run_policy_catalog: PolicyCatalog | None = None,
        run_by: frozenset[str] | None = None,
    ) -> None:
        """Gate `agent`'s `tools` by `policy`; `default_deadline` covers gates without their own.

        The top agent's gate gets `run_policy_catalog`: it checks the run's `context["policy"]`
        against it and records it in state when a run starts; every gate then applies it. It
        also gets `run_by`, the roles that may run the agent (None: everyone), and refuses others.

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
        answers.register(agent, tools)
        self.default_deadline = default_deadline
        self._descriptions: OrderedDict[str, str] = OrderedDict()
        self.run_policy_catalog = run_policy_catalog
        self.run_by = run_by
        self.gateable = frozenset(self.tools_by_name) | BUILTIN_TOOLS

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

    def policy_for(self, state: Mapping[str, Any]) -> dict[str, ToolGate]:
        """This agent's policy as the run's recorded override changes it."""
        override = trusted_run_policy(state.get(RUN_POLICY_KEY), _thread_id())
        return effective_policy(self.policy, self.gateable, override)

    def _pauses(self, call: ToolCall, policy: Mapping[str, ToolGate], state: Mapping[str, Any]) -> bool:
        """Whether `call` waits for a person: gated, and not covered by a thread allowance."""
        gate = policy.get(call["name"])
        if gate is None or not gate.pauses(call["args"]):
            return False
        allowances = trusted_allowances(state.get(STATE_KEY))
        return not allowances or (
            covering(allowances, thread_id=_thread_id(), agent=self.agent, gate=gate, call=call) is None
        )

    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """The top agent checks who runs it, and records the run's checked `context["policy"]`.

        Raises:
            PermissionError: the caller's role may not run this agent (the server refuses it earlier).
            OverrideError: the override does not fit this agent (the server refuses it earlier).
        """
        if self.run_policy_catalog is None:
            return None
        caller = current_caller()
        if caller is not None and self.run_by is not None and not (self.run_by & caller.roles):
            msg = (
                f"{caller.identity} ({caller.role}) may not run {self.agent}: "
                f"it is for {' or '.join(sorted(self.run_by))}."
            )
            raise PermissionError(msg)
        context = runtime.context if isinstance(runtime.context, Mapping) else {}
        raw = context.get("policy")
        override = None if raw is None else parse(raw, self.run_policy_catalog)
        recorded = state.get(RUN_POLICY_KEY)
        if (override is None and not recorded) or (
            override is not None and trusted_run_policy(recorded, _thread_id()) == override
        ):
            return None
        return {RUN_POLICY_KEY: seal_run_policy(override, _thread_id())}

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
        thread_id = _thread_id()
        gated = [
            (index, call) for index, call in enumerate(last.tool_calls) if self._pauses(call, policy, state)
        ]
        if not gated:
            return {
                "hitl_edited_tool_calls": {},
                CLEARANCES_KEY: {
                    c["id"]: clearance(thread_id, self.agent, c["id"], c["name"], c["args"])
                    for c in last.tool_calls
                    if c["id"]
                },
            }

        progress: dict[int, quorum.Progress] = {}
        asking = gated
        while asking:
            request = self._batched_request(asking, policy)
            with timing.pausing(started):
                answer = interrupt(request, response_schema=_contract(request))
            for (index, call), decision in zip(asking, answer["decisions"], strict=True):
                held = progress.get(index)
                progress[index] = held.fold(decision) if held else quorum.start(call["args"], decision)
            asking = [  # calls that need more approvers ask again, with their current args
                (index, {**call, "args": progress[index].args})
                for index, call in gated
                if progress[index].waiting(policy[call["name"]].approvals_needed(progress[index].args))
            ]
            started = time.perf_counter()
        decisions = {index: p.decision for index, p in progress.items()}
        return self._apply_decisions(last, decisions, policy, thread_id)

    def _batched_request(
        self, gated: Sequence[tuple[int, ToolCall]], policy: Mapping[str, ToolGate]
    ) -> BatchedApprovalRequest:
        """One round's interrupt value: the calls asked about, who may decide, who asked, until when."""
        return BatchedApprovalRequest(
            action_requests=[self._action_request(call, policy) for _, call in gated],
            review_configs=[self._review_config(call, policy) for _, call in gated],
            agent=self.agent,
            **requested_by(),  # type: ignore[typeddict-item]
            **earliest([s for _, call in gated if (s := self._deadline_stamp(call, policy))]),  # type: ignore[typeddict-item]
        )

    def _apply_decisions(
        self,
        last: AIMessage,
        decisions: dict[int, dict[str, Any]],
        policy: Mapping[str, ToolGate],
        thread_id: str | None,
    ) -> dict[str, Any]:
        """The model turn as the answers leave it: kept calls, answers for the model, clearances."""
        kept: list[ToolCall] = []
        answered: list[ToolMessage] = []
        edited: dict[str, Any] = {}
        cleared: dict[str, str] = {}
        for index, call in enumerate(last.tool_calls):
            call_id = call["id"] or ""
            if index not in decisions:
                kept.append(call)
                cleared[call_id] = clearance(thread_id, self.agent, call_id, call["name"], call["args"])
                continue
            decision = decisions[index]
            if (refusal := self._unauthorised(call, decision, policy[call["name"]])) is not None:
                kept.append(call)
                answered.append(refusal)
                continue
            revised, message = self._process_decision(
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
                    cleared[call_id] = clearance(thread_id, self.agent, call_id, final["name"], final["args"])
            if message is not None:
                answered.append(message)
        last.tool_calls = kept
        return {
            "messages": [last, *answered],
            "hitl_edited_tool_calls": edited,
            CLEARANCES_KEY: cleared,
        }

    def _unauthorised(self, call: ToolCall, decision: dict[str, Any], gate: ToolGate) -> ToolMessage | None:
        """The refusal of a decision its sender may not make on the call it would run, if so.

        The server refuses such answers first; this is the graph's own wall. An edit is judged
        on its edited arguments. Owners' own questions and rejections need no role here.
        """
        caller = current_caller()
        if decision.get("type") == "reject" or (caller is None and decision.get("type") != "edit"):
            return None
        if caller is None:  # in-process (no server): only the fixed arguments are checked
            caller = Caller(identity="in-process", roles=frozenset({"supervisor", "reviewer"}))
        args = decision["edited_action"]["args"] if decision.get("type") == "edit" else call["args"]
        changed = sorted(a for a in gate.fixed_on_edit if args.get(a) != call["args"].get(a))
        needed = gate.required_role(args)
        owner = thread_owner()
        own = owner is not None and owner.identity == caller.identity and gate.four_eyes(call["args"])
        short = _quorum_short(call, args, gate)
        if not changed and not own and not short and (needed == "owner" or needed in caller.roles):
            return None
        if changed:
            why = f"an edit may not change {', '.join(changed)}"
        elif own:
            why = "they asked for it, so someone else must decide it (separation of duties)"
        elif short:
            why = short
        else:
            why = f"it needs a {needed}"
        return ToolMessage(
            content=f"Not run: {caller.identity} ({caller.role}) may not decide this {call['name']}; {why}.",
            tool_call_id=call["id"] or "",
            name=call["name"],
            status="error",
        )

    async def aafter_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """`after_model`; off the event loop when it asks, as a description may look something up."""
        if self.interrupt_mode == "per_call":
            return None
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        policy = self.policy_for(state)
        if last is None or not any(self._pauses(call, policy, state) for call in last.tool_calls):
            return self.after_model(state, runtime)
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

        def checked(to_run: ToolCallRequest) -> ToolMessage | Command[Any]:
            if decided and (refused := receipt_check.blocked(to_run, self.agent, _thread_id())) is not None:
                return refused
            return cast(
                "ToolMessage | Command[Any]",
                run_checked(
                    to_run, lambda: handler(to_run), agent=self.agent, thread_id=_thread_id(), decided=decided
                ),
            )

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

        async def checked(to_run: ToolCallRequest) -> ToolMessage | Command[Any]:
            thread_id = _thread_id()
            if (
                decided
                and (refused := await receipt_check.ablocked(to_run, self.agent, thread_id)) is not None
            ):
                return refused
            return cast(
                "ToolMessage | Command[Any]",
                await arun_checked(
                    to_run, lambda: handler(to_run), agent=self.agent, thread_id=_thread_id(), decided=decided
                ),
            )

        if self.interrupt_mode != "per_call" or not self._pauses(
            request.tool_call, self.policy_for(request.state), request.state
        ):
            return await super().awrap_tool_call(request, checked)
        resolved = await asyncio.to_thread(self._resolve_per_call, request)
        if isinstance(resolved, ToolMessage):
            return resolved
        to_run, executed = resolved
        return self._annotate_edited_result(await checked(to_run), to_run, executed)

    def _uncleared(self, request: ToolCallRequest) -> ToolMessage | None:
        """Batched mode: the refusal of a call this gate did not clear (planted by a state write)."""
        if self.interrupt_mode == "per_call":
            return None
        call = request.tool_call
        final = self._reviewer_edit(request) or call
        if is_cleared(
            request.state.get(CLEARANCES_KEY),
            _thread_id(),
            self.agent,
            call["id"] or "",
            final["name"],
            final["args"],
        ):
            return None
        return ToolMessage(
            content=(
                f"Not run: this {call['name']} call did not pass {self.agent}'s approval gate "
                "(it was not proposed by the model and reviewed as policy requires)."
            ),
            tool_call_id=call["id"] or "",
            name=call["name"],
            status="error",
        )

    def _decided(self, request: ToolCallRequest) -> bool:
        """Whether a person (or the policy's pause) stood before this call: its failure is recorded."""
        return self._pauses(request.tool_call, self.policy_for(request.state), request.state) or bool(
            self._reviewer_edit(request)
        )

    def _resolve_per_call(
        self, request: ToolCallRequest
    ) -> tuple[ToolCallRequest, Action | None] | ToolMessage:
        """Per-call mode: the stock flow, under the run's policy and the thread's allowances."""
        call = request.tool_call
        policy = self.policy_for(request.state)
        started = time.perf_counter()
        if not self._pauses(call, policy, request.state):
            return request, None
        gate = policy[call["name"]]
        asked, progress = request, None
        while progress is None or progress.waiting(gate.approvals_needed(progress.args)):
            if progress is not None:  # another approver is needed: ask again about the current args
                asked = request.override(tool_call={**call, "args": progress.args})
            value = self._tool_approval_request(asked, self._interrupt_on(call["name"], gate), policy)
            with timing.pausing(started):
                answer = interrupt(value, response_schema=_contract(value))
            progress = progress.fold(answer) if progress else quorum.start(call["args"], answer)
            started = time.perf_counter()
        decision = progress.decision
        if (refusal := self._unauthorised(call, decision, gate)) is not None:
            return refusal
        if decision["type"] == "approve":
            return request, None
        if decision["type"] == "edit":
            executed = decision["edited_action"]
            return self._apply_edit(request, executed), executed
        return answer_message(call, cast("RejectDecision | RespondDecision", decision))

    def _tool_approval_request(
        self,
        request: ToolCallRequest,
        config: InterruptOnConfig,
        policy: Mapping[str, ToolGate] | None = None,
    ) -> ToolApprovalRequest:
        """Per-call mode: the stock value plus who asks and who may decide."""
        policy = self.policy if policy is None else policy
        value = super()._tool_approval_request(request, config)
        args = request.tool_call["args"]
        gate = policy[request.tool_call["name"]]
        value["description"] = _with_progress(value["description"], request.tool_call, gate)
        return ToolApprovalRequest(
            **value,
            agent=self.agent,
            required_role=gate.required_role(args),
            allowed_decisions=list(config["allowed_decisions"]),
            **({"may_allow": True} if gate.may_allow(args) else {}),  # type: ignore[typeddict-item]
            **({"self_approval": True} if gate.self_approval else {}),  # type: ignore[typeddict-item]
            **_quorum_stamp(request.tool_call, gate),  # type: ignore[typeddict-item]
            **requested_by(),  # type: ignore[typeddict-item]
            **self._deadline_stamp(request.tool_call, policy),  # type: ignore[typeddict-item]
        )

    def _deadline_stamp(self, call: ToolCall, policy: Mapping[str, ToolGate] | None = None) -> dict[str, Any]:
        """When this call's approval expires and what then; owners' own questions never expire."""
        gate = (self.policy if policy is None else policy)[call["name"]]
        if gate.required_role(call["args"]) == "owner":
            return {}
        deadline = gate.deadline or self.default_deadline
        return deadline.stamp() if deadline else {}

    def _action_request(self, call: ToolCall, policy: Mapping[str, ToolGate]) -> ActionRequest:
        gate = policy[call["name"]]
        return ActionRequest(
            name=call["name"],
            args=call["args"],
            description=_with_progress(self._description(call, gate), call, gate),
            tool_call_id=call["id"] or "",
            agent=self.agent,
        )

    def _description(self, call: ToolCall, gate: ToolGate) -> str:
        """What the reviewer reads, built once per tool call.

        A resumed node runs again from its top and would describe the same call again (a
        description may read the database); the first text is the one the reviewer saw.
        """
        key = f"{call['id']}:{quorum.digest(call['args'])}" if call["id"] else ""
        if (text := self._descriptions.get(key)) is None:
            text = gate.describe(call["name"], call["args"], self.description_prefix)
            if key:
                self._descriptions[key] = text
                while len(self._descriptions) > DESCRIPTIONS_KEPT:
                    self._descriptions.popitem(last=False)
        return text

    def _review_config(self, call: ToolCall, policy: Mapping[str, ToolGate]) -> ReviewConfig:
        gate = policy[call["name"]]
        config = ReviewConfig(
            action_name=call["name"],
            allowed_decisions=list(gate.allowed_decisions),
            required_role=gate.required_role(call["args"]),
        )
        if gate.may_allow(call["args"]):
            config["may_allow"] = True
        if gate.self_approval:
            config["self_approval"] = True
        config.update(_quorum_stamp(call, gate))  # type: ignore[typeddict-item]
        return config


def _quorum_stamp(call: ToolCall, gate: ToolGate) -> dict[str, Any]:
    """`approvals_required` and who approved so far, for a call that needs several approvers."""
    needed = gate.approvals_needed(call["args"])
    if needed <= 1:
        return {}
    return {
        "approvals_required": needed,
        "approved_by": quorum.approvers(call["id"] or "", call["args"]) or [],
    }


def _with_progress(description: str, call: ToolCall, gate: ToolGate) -> str:
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


def _quorum_short(call: ToolCall, args: Mapping[str, Any], gate: ToolGate) -> str | None:
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


def _contract(value: BatchedApprovalRequest | ToolApprovalRequest) -> type:
    """The answer `value` accepts (`hitl.contracts.answers`): what the server checks, by construction.

    Raises:
        RuntimeError: the gate built a value no contract is known for (a bug, never a pause unchecked).
    """
    found = answers.response_type(value)
    if found is None:
        msg = f"no answer contract is known for the interrupt {value!r}"
        raise RuntimeError(msg)
    return found


def _thread_id() -> str | None:
    """The thread this graph runs on (subagents run on their parent's)."""
    try:
        thread_id = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:  # outside a graph
        return None
    return None if thread_id is None else str(thread_id)
