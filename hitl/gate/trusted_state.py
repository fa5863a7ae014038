"""The state the gate trusts, and how it tells it from what a client planted.

Four keys steer the gate: each tool call's clearance (`hitl_cleared_calls`, written by the
gate when the call passed it, or marking a call of a mixed turn to be asked about where it
runs), the server's receipts and allowances, and the run's checked policy. Each value carries
a seal (`hitl.proof.seal`); the reducers here drop unsealed writes, and the gate checks seals
again where it reads them, so a value that reaches state by any other path (an update, a
`Send`, a fork) changes nothing. `ApprovalState` declares them, with their reducers.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, cast

from langchain.agents.middleware.types import PrivateStateAttr

from hitl.contracts.records import (  # noqa: TC001  (LangGraph reads the state's annotations at runtime)
    Allowance,
    ApprovalReceipt,
)
from hitl.gate.langchain_hitl import HumanInTheLoopState
from hitl.policy.first_line import is_model_actor
from hitl.proof.seal import is_sealed, seal, sealed, verify
from hitl.proof.signed_receipts import SIGNED_FIELD

if TYPE_CHECKING:
    from collections.abc import Mapping

logger = logging.getLogger(__name__)

CLEARANCES_KEY = "hitl_cleared_calls"
RUN_POLICY_KEY = "run_policy"
"""The state key of the run's checked policy override (`seal_run_policy`), recorded at its start."""
RECEIPT = "receipt"
ALLOWANCE = "allowance"
RUN_POLICY = "run_policy"
CLEARANCE = "clearance"
ASK_HERE = "ask_where_it_runs"


def clearance(thread_id: str | None, agent: str, call_id: str, name: str, args: Mapping[str, Any]) -> str:
    """The seal that lets `agent`'s tool node run exactly this call (name and args) on this thread."""
    return seal(CLEARANCE, thread_id, [agent, call_id, name, dict(args)])


def asked_where_it_runs(
    thread_id: str | None, agent: str, call_id: str, name: str, args: Mapping[str, Any]
) -> str:
    """The seal that sends exactly this call to be asked about where it runs, on its own (a mixed turn)."""
    return seal(ASK_HERE, thread_id, [agent, call_id, name, dict(args)])


def is_asked_where_it_runs(  # noqa: PLR0913, PLR0917  (what the mark binds, named)
    clearances: object, thread_id: str | None, agent: str, call_id: str, name: str, args: Mapping[str, Any]
) -> bool:
    """Whether `clearances` hold the gate's mark that this exact call is asked about where it runs."""
    return _marked(ASK_HERE, clearances, thread_id, [agent, call_id, name, dict(args)])


def is_cleared(  # noqa: PLR0913, PLR0917  (what a clearance binds, named)
    clearances: object, thread_id: str | None, agent: str, call_id: str, name: str, args: Mapping[str, Any]
) -> bool:
    """Whether `clearances` hold a valid clearance for exactly this call."""
    return _marked(CLEARANCE, clearances, thread_id, [agent, call_id, name, dict(args)])


def _marked(purpose: str, clearances: object, thread_id: str | None, bound: list[Any]) -> bool:
    """Whether `clearances` hold a seal of `purpose` for the call `bound` names (agent, id, name, args)."""
    call_id = bound[1]
    if not isinstance(clearances, dict) or not call_id:
        return False
    return verify(purpose, thread_id, bound, clearances.get(call_id))


def keep_clearances(current: dict[str, str] | None, update: dict[str, str] | None) -> dict[str, str]:
    """Reducer: the latest model turn's clearances replace the last ones (a turn clears its own calls)."""
    if update is None:
        return current or {}
    return dict(update) if isinstance(update, dict) else (current or {})


def seal_receipt(receipt: ApprovalReceipt, thread_id: str) -> dict[str, Any]:
    """A receipt as the server stores it in state: with its thread and a seal."""
    return sealed(RECEIPT, None, {**receipt, "thread_id": thread_id})


def sealed_receipts(current: list[Any] | None, update: list[Any] | None) -> list[Any]:
    """Reducer: append the server's sealed receipts; anything else is dropped (and logged)."""
    kept = [r for r in update or [] if is_sealed(RECEIPT, None, r)]
    if len(kept) != len(update or []):
        logger.warning("dropped %d unsealed approval receipt(s)", len(update or []) - len(kept))
    return [*(current or []), *kept]


def trusted_receipts(receipts: object, thread_id: str) -> list[ApprovalReceipt]:
    """The sealed receipts of `thread_id` in a state value, in order (a planted one never counts)."""
    if not isinstance(receipts, list):
        return []
    return [
        cast("ApprovalReceipt", r)
        for r in receipts
        if is_sealed(RECEIPT, None, r) and isinstance(r, dict) and r.get("thread_id") == thread_id
    ]


def first_line_tokens(receipts: object, thread_id: str) -> dict[str, str]:
    """The signed receipts a first-line reviewer (`model:<name>`) gave on this thread, by tool call.

    Only sealed ones count: a model's receipt reaches state by the gate's own update, in the run
    that asked it, before any server names it to a run (`hitl.proof.receipt_check`).
    """
    return {
        str(r.get("tool_call_id")): str(r.get(SIGNED_FIELD))
        for r in trusted_receipts(receipts, thread_id)
        if is_model_actor(r.get("reviewer")) and isinstance(r.get(SIGNED_FIELD), str)
    }


def seal_allowance(allowance: Allowance) -> dict[str, Any]:
    """An allowance as the server writes it (its thread is inside it)."""
    return sealed(ALLOWANCE, None, dict(allowance))


def sealed_allowances(current: Mapping[str, Any] | None, update: Mapping[str, Any] | None) -> dict[str, Any]:
    """Reducer: allowances by id; only sealed ones are written (a revocation is a sealed rewrite)."""
    kept = {k: v for k, v in (update or {}).items() if is_sealed(ALLOWANCE, None, v) and v.get("id") == k}
    if len(kept) != len(update or {}):
        logger.warning("dropped %d unsealed allowance(s)", len(update or {}) - len(kept))
    return {**(current or {}), **kept}


def trusted_allowances(allowances: object) -> dict[str, Any]:
    """The sealed allowances of a state value (a planted one never counts)."""
    if not isinstance(allowances, dict):
        return {}
    return {k: v for k, v in allowances.items() if is_sealed(ALLOWANCE, None, v) and v.get("id") == k}


def seal_run_policy(override: dict[str, Any] | None, thread_id: str | None) -> dict[str, Any] | None:
    """The run's checked override as the gate records it, bound to its thread."""
    if override is None:
        return None
    return sealed(RUN_POLICY, None, {"override": override, "thread_id": thread_id or ""})


def sealed_run_policy(current: Any, update: Any) -> Any:  # noqa: ANN401  (a state value)
    """Reducer: only the gate's sealed record (or None, which clears it) replaces the current one.

    The channel's type is a plain dict, so that LangGraph starts it empty and calls this
    reducer for the first write too (a channel it cannot construct takes its first write as is).
    """
    if update is None or update == {} or is_sealed(RUN_POLICY, None, update):
        return update
    logger.warning("dropped an unsealed run_policy write")
    return current


def trusted_run_policy(recorded: object, thread_id: str | None) -> dict[str, Any] | None:
    """The override a sealed record of this thread holds; None for no record or a planted one."""
    if not isinstance(recorded, dict) or not is_sealed(RUN_POLICY, None, recorded):
        return None
    if recorded.get("thread_id") != (thread_id or ""):
        return None
    override = recorded.get("override")
    return override if isinstance(override, dict) else None


class ApprovalState(HumanInTheLoopState[Any]):
    """The stock HITL state plus what the server and the run start record for the gate.

    `approval_receipts` and `approval_allowances` are written by the server; `run_policy` is
    the run's checked policy override, recorded by the agent's gate when the run starts;
    `hitl_cleared_calls` holds the gate's clearance of each call of the last model turn.
    Every one is sealed: an unsealed write is dropped by its reducer (above).
    """

    approval_receipts: NotRequired[Annotated[list[ApprovalReceipt], sealed_receipts]]
    approval_allowances: NotRequired[Annotated[dict[str, Allowance], sealed_allowances]]
    run_policy: NotRequired[Annotated[dict[str, Any], sealed_run_policy]]
    hitl_cleared_calls: NotRequired[Annotated[dict[str, str], keep_clearances, PrivateStateAttr]]
