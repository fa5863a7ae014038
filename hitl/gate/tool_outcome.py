"""A tool that fails after a person decided: the outcome is recorded and the thread goes on.

Without this, an exception from a tool (a bad path, a database error) fails the whole run:
the thread ends in `error` and the decision's outcome is nowhere. Here the failure becomes
the tool's error result for the model, a sealed `failed` receipt in the thread's state, and
an audit record in the Store. Interrupts raised inside tools (forms), and the refusal of a bad
answer to one (a pydantic `ValidationError`, which keeps it answerable), pass through untouched;
so does a lost connection to the business database, which is no outcome of the tool: the run
fails and is run again from its checkpoint (the tool is idempotent by its tool call id).
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError

from hitl.gate.caller import current_caller
from hitl.gate.trusted_state import seal_receipt
from hitl.policy.groups import SYSTEM_ACTOR
from hitl.proof import audit_chain

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from langchain.agents.middleware.types import ToolCallRequest

    from hitl.contracts.records import ApprovalReceipt

logger = logging.getLogger(__name__)
AUDIT_NAMESPACE = "audit"


def _failure(
    request: ToolCallRequest, error: Exception, agent: str, thread_id: str | None, *, decided: bool
) -> tuple[Command[Any], dict[str, Any] | None]:
    call = request.tool_call
    text = f"{call['name']} failed: {type(error).__name__}: {error}"
    message = ToolMessage(
        content=f"{text}. The thread goes on; nothing else was run for this call.",
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error",
    )
    if not decided:
        return Command(update={"messages": [message]}), None
    caller = current_caller()
    receipt: ApprovalReceipt = {
        "interrupt_id": "",
        "tool_call_id": call["id"] or "",
        "agent": agent,
        "tool": call["name"],
        "requested_args": dict(call["args"]),
        "decision": "failed",
        "final_args": dict(call["args"]),
        "message": text,
        "reviewer": caller.identity if caller else SYSTEM_ACTOR,
        "roles": sorted(caller.roles) if caller else [],
        "decided_at": datetime.now(UTC).isoformat(),
    }
    record = {**receipt, "thread_id": thread_id or "", "outcome": "failed"}
    update = {"messages": [message], "approval_receipts": [seal_receipt(receipt, thread_id or "")]}
    return Command(update=update), record


PASSED_THROUGH = (GraphBubbleUp, ValidationError)
"""Interrupts, and the refusal of a bad answer to a tool's own form: never a tool failure."""


def lost_connection(error: BaseException) -> bool:
    """Whether `error` is the business database's connection lost (it restarts), not the tool's outcome.

    A database error that invalidated its connection, or that a network driver reports as
    operational (PostgreSQL down). SQLite's own errors, and an outside service that cannot be
    reached (a `ConnectionError` from a payment provider), are the tool's outcome.
    """
    if not isinstance(error, DBAPIError):
        return False
    driver_error = type(error.orig)
    kinds = {kind.__name__ for kind in driver_error.__mro__}  # psycopg's AdminShutdown is an OperationalError
    return error.connection_invalidated or (
        bool(kinds & {"OperationalError", "InterfaceError"})
        and not driver_error.__module__.startswith("sqlite3")
    )


def run_checked(
    request: ToolCallRequest,
    handler: Callable[[], Any],
    *,
    agent: str,
    thread_id: str | None,
    decided: bool,
) -> Any:  # noqa: ANN401  (a ToolMessage or Command, as the tool node takes it)
    """Run `handler()`; a failure becomes an error result (and, when `decided`, a record)."""
    try:
        return handler()
    except PASSED_THROUGH:
        raise
    except Exception as error:
        if lost_connection(error):
            raise
        result, audit = _failed(request, error, agent, thread_id, decided=decided)
        if audit is not None:
            store, namespace, key, record = audit
            audit_chain.put(store, namespace[1], key, record)
        return result


async def arun_checked(
    request: ToolCallRequest,
    handler: Callable[[], Awaitable[Any]],
    *,
    agent: str,
    thread_id: str | None,
    decided: bool,
) -> Any:  # noqa: ANN401  (a ToolMessage or Command, as the tool node takes it)
    """`run_checked` for async tool nodes."""
    try:
        return await handler()
    except PASSED_THROUGH:
        raise
    except Exception as error:
        if lost_connection(error):
            raise
        result, audit = _failed(request, error, agent, thread_id, decided=decided)
        if audit is not None:
            store, namespace, key, record = audit
            await audit_chain.aput(store, namespace[1], key, record)
        return result


def _failed(
    request: ToolCallRequest, error: Exception, agent: str, thread_id: str | None, *, decided: bool
) -> tuple[Command[Any], tuple[Any, tuple[str, str], str, dict[str, Any]] | None]:
    """The tool node's result for a failure, and (store, namespace, key, record) to audit it."""
    logger.error("tool %s failed: %r", request.tool_call["name"], error)
    result, record = _failure(request, error, agent, thread_id, decided=decided)
    store = getattr(request.runtime, "store", None)
    if record is None or store is None:
        return result, None
    return result, (store, (AUDIT_NAMESPACE, str(record["thread_id"])), _key(), record)


def _key() -> str:
    return f"{time.time_ns():020d}-900"
