"""The last wall before a decided tool call runs: a signed receipt must cover exactly this call.

The server names, in every run it admits, the signed receipt of the latest decision on each
tool call of the thread (`RECEIPTS_KEY`); a first-line reviewer's, signed during the run, the gate
passes itself (`delegated`). Just before a call a person (or that model) decided runs, the gate
asks `refusal`: the receipt must verify against the server's keys and bind this thread, agent,
tool, call id and the SHA-256 of these args, with an approve or edit. Every run the server
starts is checked, a client's and its own; runs without a server (scripts, tests) have no
receipts and are not checked here; calls no person had to decide
(ungated, auto-approved, covered by a thread allowance) need none.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from langgraph.config import get_config

from hitl.gate.caller import Caller, current_caller, in_server
from hitl.policy.quorum import digest
from hitl.proof import audit_chain
from hitl.proof.receipt_keys import keyring
from hitl.proof.signed_receipts import SIGNED_FIELD, ReceiptInvalidError, signed_claims

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from langchain.agents.middleware.types import ToolCallRequest
    from langchain_core.messages import ToolCall

RECEIPTS_KEY = "hitl_receipts"
"""The run's `configurable` key the server sets: {tool_call_id: the signed JWS of its latest decision}."""
RUNS = frozenset({"approve", "edit"})
ANSWERS = frozenset({"answered", "declined", "cancelled"})
"""What a person answers a tool's own question (a form, an MCP server's): never a decision on the call."""


def latest_signed(receipts: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each tool call's latest signed receipt (its JWS) of a decision on the call, from receipts oldest first.

    Answers to the tool's own questions (`ANSWERS`) are left out: the call an MCP server asks about
    mid-call still runs under the approval it had.
    """
    found: dict[str, str] = {}
    for receipt in receipts:
        call_id, token = receipt.get("tool_call_id"), receipt.get(SIGNED_FIELD)
        if receipt.get("decision") in ANSWERS:
            continue
        if isinstance(call_id, str) and call_id and isinstance(token, str):
            found[call_id] = token
    return found


def refusal(  # noqa: PLR0913, PLR0917  (the call, where it runs, and the receipts that may cover it)
    call: ToolCall,
    agent: str,
    thread_id: str | None,
    config: Mapping[str, Any] | None = None,
    jwks: Mapping[str, Any] | None = None,
    delegated: Mapping[str, str] | None = None,
) -> str | None:
    """Why `call` may not run under the receipts the server named for this run; None when one covers it.

    `delegated` are the receipts a first-line reviewer signed in this run, by tool call: the server
    could not name them when it admitted the run. They are checked exactly as the server's.
    """
    if config is None:
        config = dict(get_config())
    named = (config.get("configurable") or {}).get(RECEIPTS_KEY)
    token = named.get(call["id"] or "") if isinstance(named, dict) else None
    if not isinstance(token, str):
        token = (delegated or {}).get(call["id"] or "")
    if not isinstance(token, str):
        return "no signed receipt of a person's decision is on record for this call"
    try:
        claims = signed_claims(token, jwks if jwks is not None else keyring().jwks)
    except ReceiptInvalidError as invalid:
        return f"its receipt does not verify: {invalid}"
    if claims.get("decision") not in RUNS:
        return f"the last decision on this call was {claims.get('decision')}, not an approval"
    bound = {"thread": thread_id or "", "agent": agent, "tool": call["name"], "tool call": call["id"]}
    signed = {
        "thread": claims.get("thread_id"),
        "agent": claims.get("agent"),
        "tool": claims.get("tool"),
        "tool call": claims.get("tool_call_id"),
    }
    wrong = [f"{what} {signed[what]!r}, not {bound[what]!r}" for what in bound if signed[what] != bound[what]]
    if wrong:
        return f"the approval was for another call ({'; '.join(wrong)})"
    approved, given = claims.get("final_args_sha256"), digest(call["args"])
    if approved != given:
        return (
            f"its arguments differ from the approved ones (approved args sha256 {str(approved)[:12]}…, "
            f"these {given[:12]}…)"
        )
    return None


def signed_decider(call: ToolCall, decision: str, config: Mapping[str, Any] | None = None) -> Caller | None:
    """Who made `decision` (approve or edit) on `call`, as its signed receipt names them; None without one.

    A run may resume for someone else than the decider: a call approved by a reviewer runs again
    when its owner answers a question the tool asks mid-call, in a run the owner started. The person
    a decision is judged by is the one its verified receipt names, never the run's caller.
    """
    if config is None:
        config = dict(get_config())
    named = (config.get("configurable") or {}).get(RECEIPTS_KEY)
    token = named.get(call["id"] or "") if isinstance(named, dict) else None
    if not isinstance(token, str) or decision not in RUNS:
        return None
    try:
        claims = signed_claims(token, keyring().jwks)
    except ReceiptInvalidError:
        return None
    approver = claims.get("approver")
    if claims.get("decision") != decision or claims.get("tool_call_id") != call["id"]:
        return None
    if not isinstance(approver, dict):
        return None
    identity, roles = approver.get("identity"), approver.get("roles")
    if not isinstance(identity, str) or not isinstance(roles, list):
        return None
    return Caller(identity=identity, roles=frozenset(str(r) for r in roles))


SERVER = Caller(identity="server", roles=frozenset())
"""Who ran a call in a run the server started itself (no person's request): named in the record."""


def _refused(
    request: ToolCallRequest, agent: str, thread_id: str | None, delegated: Mapping[str, str] | None
) -> tuple[ToolMessage, Any] | None:
    """Server runs (a client's, the server's own): the "Not run" answer for an uncovered call, and the record.

    In-process runs (no server) are not checked here (`hitl.gate.caller.in_server`).
    """
    if not in_server():
        return None
    caller = current_caller() or SERVER
    call = request.tool_call
    if (why := refusal(call, agent, thread_id, delegated=delegated)) is None:
        return None
    message = ToolMessage(
        content=f"Not run: this {call['name']} call has no approval that covers it; {why}.",
        tool_call_id=call["id"] or "",
        name=call["name"],
        status="error",
    )
    store = getattr(request.runtime, "store", None)
    if store is None:
        return message, None
    covers = f"no approval covers this call: {why}"
    return message, (
        store,
        not_run_record(call, agent, thread_id or "", caller, message=why, refusal=covers),
    )


def not_run_record(  # noqa: PLR0913  (every field of the record is one argument)
    call: ToolCall, agent: str, thread_id: str, caller: Caller, *, message: str, refusal: str
) -> dict[str, Any]:
    """The trail's record of a decided call the layer did not run: `message` what happened, `refusal` why.

    The one shape of a `not_run` record, whichever wall refused the call (no receipt covers it, the
    decider may not decide it, an MCP tool's schema changed since its approval).
    """
    return {
        "interrupt_id": "",
        "tool_call_id": call["id"] or "",
        "agent": agent,
        "tool": call["name"],
        "requested_args": dict(call["args"]),
        "decision": "not_run",
        "final_args": None,
        "message": message,
        "reviewer": caller.identity,
        "roles": sorted(caller.roles),
        "decided_at": datetime.now(UTC).isoformat(),
        "thread_id": thread_id,
        "outcome": "refused",
        "refusal": refusal,
    }


def _key() -> str:
    return f"{time.time_ns():020d}-901"


def blocked(
    request: ToolCallRequest, agent: str, thread_id: str | None, delegated: Mapping[str, str] | None = None
) -> ToolMessage | None:
    """In a server run, the refusal of a decided call no receipt covers (audited), else None."""
    refused = _refused(request, agent, thread_id, delegated)
    if refused is None:
        return None
    message, audit = refused
    if audit is not None:
        audit_chain.put(audit[0], thread_id or "", _key(), audit[1])
    return message


async def ablocked(
    request: ToolCallRequest, agent: str, thread_id: str | None, delegated: Mapping[str, str] | None = None
) -> ToolMessage | None:
    """`blocked` for async tool nodes."""
    refused = _refused(request, agent, thread_id, delegated)
    if refused is None:
        return None
    message, audit = refused
    if audit is not None:
        await audit_chain.aput(audit[0], thread_id or "", _key(), audit[1])
    return message
