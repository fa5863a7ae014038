"""The last wall before a decided tool call runs: a signed receipt must cover exactly this call.

The server names, in every run it admits, the signed receipt of the latest decision on each
tool call of the thread (`RECEIPTS_KEY`). Just before a call a person decided runs, the gate
asks `refusal`: the receipt must verify against the server's keys and bind this thread, agent,
tool, call id and the SHA-256 of these args, with an approve or edit. Runs without a server
(scripts, tests) have no receipts and are not checked here; calls no person had to decide
(ungated, auto-approved, covered by a thread allowance) need none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph.config import get_config

from hitl.quorum import digest
from hitl.receipt_keys import keyring
from hitl.signed_receipts import SIGNED_FIELD, ReceiptInvalidError, signed_claims

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from langchain_core.messages import ToolCall

RECEIPTS_KEY = "hitl_receipts"
"""The run's `configurable` key the server sets: {tool_call_id: the signed JWS of its latest decision}."""
RUNS = frozenset({"approve", "edit"})


def latest_signed(receipts: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each tool call's latest signed receipt (its JWS), from receipts oldest first."""
    found: dict[str, str] = {}
    for receipt in receipts:
        call_id, token = receipt.get("tool_call_id"), receipt.get(SIGNED_FIELD)
        if isinstance(call_id, str) and call_id and isinstance(token, str):
            found[call_id] = token
    return found


def refusal(
    call: ToolCall,
    agent: str,
    thread_id: str | None,
    config: Mapping[str, Any] | None = None,
    jwks: Mapping[str, Any] | None = None,
) -> str | None:
    """Why `call` may not run under the receipts the server named for this run; None when one covers it."""
    if config is None:
        config = dict(get_config())
    named = (config.get("configurable") or {}).get(RECEIPTS_KEY)
    token = named.get(call["id"] or "") if isinstance(named, dict) else None
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
