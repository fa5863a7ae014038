"""Which input schema a person approved an MCP call under, read from the signed receipt the server named.

In a server run, the receipt of the call's latest decision (`hitl.proof.receipt_check`, verified
against the server's keys) names the tool's input-schema digest as the pause showed it; the toolbox
runs the call only while the server lists that same schema. Without a server (scripts, tests) the
digest the gate asked with in this process stands in. Not for whether a receipt covers the call at
all: the gate checks that first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph.config import get_config

from hitl.gate.caller import current_caller
from hitl.proof.receipt_check import RECEIPTS_KEY, not_run_record
from hitl.proof.receipt_keys import keyring
from hitl.proof.signed_receipts import ReceiptInvalidError, signed_claims

if TYPE_CHECKING:
    from langchain_core.messages import ToolCall


def approved_schema(call: ToolCall, asked_here: str | None) -> str | None:
    """The input-schema digest `call` was approved under; None when no person decided it.

    A server run reads it from the call's signed receipt ('' when the receipt names none: no schema
    matches it, so the call is refused); a run without a server, from what this process asked with.
    """
    if current_caller() is None:
        return asked_here
    named = (get_config().get("configurable") or {}).get(RECEIPTS_KEY)
    token = named.get(call["id"] or "") if isinstance(named, dict) else None
    if not isinstance(token, str):
        return None
    try:
        claims = signed_claims(token, keyring().jwks)
    except ReceiptInvalidError:
        return ""  # the gate refused such a call already; never run on it
    mcp = claims.get("mcp")
    digest = mcp.get("input_schema_sha256") if isinstance(mcp, dict) else None
    return digest if isinstance(digest, str) else ""


def refusal_record(call: ToolCall, agent: str, why: str) -> dict[str, Any] | None:
    """The audit record of an approved MCP call not run (its schema changed); None outside a server run."""
    caller = current_caller()
    if caller is None:
        return None
    thread_id = str((get_config().get("configurable") or {}).get("thread_id") or "")
    return not_run_record(call, agent, thread_id, caller, message=why, refusal=why)
