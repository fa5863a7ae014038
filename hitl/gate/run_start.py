"""A run's start at the top agent's gate: who may run the agent, and the run's policy override, recorded.

The server refuses both earlier (`server.admission`); this is the graph's own wall. The override
a run passes as `context["policy"]` is checked against the agent's catalog and recorded in state
(`RUN_POLICY_KEY`), sealed and bound to the thread, so every gate of the run and of its resumes
applies the same one. The top gate does it in the model call that answers new input
(`starts_run`), not in a step of its own. Not for applying it to a call: the gate does that (`policy_for`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from hitl.gate.caller import current_caller
from hitl.gate.gate import ApprovalGate, current_thread_id
from hitl.gate.trusted_state import RUN_POLICY_KEY, seal_run_policy, trusted_run_policy
from hitl.policy.overrides import parse

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from langchain.agents.middleware.types import ModelRequest, ModelResponse
    from langchain_core.messages import AnyMessage

    from hitl.model.malformed_calls import MalformedCallRetry
    from hitl.policy.overrides import PolicyCatalog


def starts_run(messages: Sequence[AnyMessage]) -> bool:
    """Whether a model call with these messages in state answers a run's new input.

    Within a run, and in a resumed one, the model is called again only after the tools answered
    its calls (or the gate answered for them), so the last message is a tool's. Anything else is
    new input: a person's message (the only kind the server admits; a supervisor's may also be
    the agent's or the system's), or an ended thread run again. A caller in the same process
    who starts a run with a tool message as its input is taken as continuing the last run.
    """
    return not (messages and isinstance(messages[-1], ToolMessage))


def start(  # noqa: PLR0913  (the agent, who may run it, and what the run brings)
    agent: str,
    *,
    run_by: frozenset[str] | None,
    catalog: PolicyCatalog,
    context: object,
    recorded: object,
    thread_id: str | None,
) -> dict[str, Any] | None:
    """The state update a run starts with: its override recorded, cleared or (None) left as it is.

    Raises:
        PermissionError: the caller's role may not run this agent (the server refuses it earlier).
        OverrideError: the override does not fit this agent (the server refuses it earlier).
    """
    caller = current_caller()
    if caller is not None and run_by is not None and not (run_by & caller.roles):
        msg = (
            f"{caller.identity} ({caller.role}) may not run {agent}: it is for {' or '.join(sorted(run_by))}."
        )
        raise PermissionError(msg)
    raw = context.get("policy") if isinstance(context, Mapping) else None
    override = None if raw is None else parse(raw, catalog)
    if (override is None and not recorded) or (
        override is not None and trusted_run_policy(recorded, thread_id) == override
    ):
        return None
    return {RUN_POLICY_KEY: seal_run_policy(override, thread_id)}


class RunStartGate(ApprovalGate):
    """The top agent's gate: it also checks who runs the agent and records the run's policy override.

    Both at a run's start, in the top agent's model call (`wrap_model_call`): no step of its own,
    which would be one more node run at every start. Only the top agent has one. It also runs the
    top agent's `MalformedCallRetry` inside that hook: LangChain wraps each middleware's model-call
    hook in a span of its own on every call, so one hook for both is one wrapper less per model call.
    """

    def __init__(
        self,
        *args: Any,  # noqa: ANN401  (`ApprovalGate`'s)
        run_policy_catalog: PolicyCatalog,
        run_by: frozenset[str] | None = None,
        retry: MalformedCallRetry | None = None,
        **kwargs: Any,  # noqa: ANN401  (`ApprovalGate`'s)
    ) -> None:
        """An `ApprovalGate` that also checks who runs the agent and the run's policy override.

        A run's `context["policy"]` is checked against `run_policy_catalog` and recorded in state
        when the run starts; callers whose roles are not in `run_by` (None: everyone) are refused.
        `retry` runs inside this gate's model-call hook, between it and the model.
        """
        super().__init__(*args, **kwargs)
        self.run_policy_catalog = run_policy_catalog
        self.run_by = run_by
        self.retry = retry

    @property
    def name(self) -> str:
        """It keeps the gate's name: its graph node is `ApprovalGate.after_model`, as a subagent's."""
        return ApprovalGate.__name__

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """At a run's start, check who runs the agent and record its override before the model answers.

        Raises:
            PermissionError: the caller's role may not run this agent (the server refuses it earlier).
            OverrideError: the override does not fit this agent (the server refuses it earlier).
        """
        started = self._run_start(request)
        response = self.retry.wrap_model_call(request, handler) if self.retry else handler(request)
        return _with_update(response, started)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """`wrap_model_call` for async runs (the server's)."""
        started = self._run_start(request)
        response = await (self.retry.awrap_model_call(request, handler) if self.retry else handler(request))
        return _with_update(response, started)

    def _run_start(self, request: ModelRequest[Any]) -> dict[str, Any] | None:
        """The run start's state update (`start`), or None when this model call starts no run."""
        if not starts_run(request.state.get("messages") or ()):
            return None
        return start(
            self.agent,
            run_by=self.run_by,
            catalog=self.run_policy_catalog,
            context=request.runtime.context,
            recorded=request.state.get(RUN_POLICY_KEY),
            thread_id=current_thread_id(),
        )


def _with_update(
    response: ModelResponse[Any], update: dict[str, Any] | None
) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
    """The model's response, with the run start's state update applied beside it when there is one."""
    if update is None:
        return response
    return ExtendedModelResponse(model_response=response, command=Command(update=update))
