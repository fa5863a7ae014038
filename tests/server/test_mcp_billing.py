"""Billing's tools through the real `langgraph dev`, over streamable HTTP, under the support agent's gate.

The session's server starts beside billing (`tests.mcp_lab.beside`); billing keeps its invoices in the
server's business database, which these tests read to see what ran.
"""

from __future__ import annotations

import json

import httpx
import pytest

from agents.offline import phrases
from hitl.proof.signed_receipts import check, signed_claims
from tests.server.helpers import APPROVE, decisions, only_pending, refused, start
from tests.server.mcp_helpers import last_reply, new_invoice, trail

pytestmark = pytest.mark.server


async def test_a_read_only_mcp_tool_runs_at_once(requester, server_services):
    """lookup_invoice (readOnlyHint, no policy names it): answered in the same run, no interrupt."""
    invoice = new_invoice(server_services, 75)
    thread_id, thread = await start(requester, phrases.look_up_invoice(invoice))
    assert thread["status"] == "idle"
    assert thread["interrupts"] == {}
    assert f"Invoice {invoice} for order A1024: 75, open" in await last_reply(requester, thread_id)


async def test_a_destructive_mcp_call_waits_for_a_reviewer_and_runs_once(
    requester, reviewer, client_as, server, server_services
):
    """void_invoice: paused naming server, tool, schema digest; requester, anonymous refused; voided once."""
    invoice = new_invoice(server_services)
    thread_id, thread = await start(requester, phrases.void_invoice(invoice))
    pending = only_pending(thread)
    [action] = pending["value"]["action_requests"]
    assert action["name"] == "billing_void_invoice"
    assert action["mcp"]["server"] == "billing"
    assert action["mcp"]["tool"] == "void_invoice"
    assert len(action["mcp"]["input_schema_sha256"]) == 64
    assert pending["value"]["review_configs"][0]["allowed_decisions"] == ["approve", "reject"]
    assert server_services.invoices.get(invoice)["status"] == "open"

    with refused(403, "separation of duties|may not answer"):
        await requester.runs.wait(thread_id, "support", command=decisions(APPROVE))
    async with httpx.AsyncClient(base_url=server.url) as anonymous:
        answered = await anonymous.post(
            f"/threads/{thread_id}/runs/wait", json={"assistant_id": "support", "command": decisions(APPROVE)}
        )
    assert answered.status_code in {401, 403}
    assert server_services.invoices.get(invoice)["status"] == "open"

    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    voided = server_services.invoices.get(invoice)
    assert voided["status"] == "void"
    assert f"Invoice {invoice} is void." in await last_reply(requester, thread_id)
    with refused(409):
        await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert server_services.invoices.get(invoice)["status"] == "void"

    [receipt] = [r for r in await trail(reviewer, thread_id) if r["decision"] == "approve"]
    assert receipt["mcp"] == action["mcp"]
    jwks = await reviewer.http.get("/.well-known/jwks.json")
    assert check(receipt, jwks, thread_id) == []
    assert signed_claims(receipt["signed"], jwks)["mcp"] == action["mcp"]
    assert check({**receipt, "mcp": {**action["mcp"], "input_schema_sha256": "0" * 64}}, jwks, thread_id)
    report = await client_as("supervisor1").http.get(f"/audit/{thread_id}/verification")
    assert report["ok"], report


async def test_a_policy_named_read_only_tool_is_still_gated(requester, reviewer, server_services):
    """payment_method: read-only, but the support policy names it: it waits; a reject runs nothing."""
    invoice = new_invoice(server_services)
    thread_id, thread = await start(requester, phrases.invoice_payment(invoice))
    [action] = only_pending(thread)["value"]["action_requests"]
    assert (action["name"], action["description"]) == (
        "billing_payment_method",
        f"Show how invoice {invoice} was paid (billing)",
    )
    await reviewer.runs.wait(thread_id, "support", command=decisions({"type": "reject", "message": "No."}))
    reply = await last_reply(requester, thread_id)
    assert "card ending" not in reply
    assert "No." in reply


async def test_an_unannotated_tool_is_gated_and_its_card_names_the_server(requester, server_services):
    """issue_credit_note (no annotations): gated by default, approve or reject; its text names the server."""
    invoice = new_invoice(server_services)
    _, thread = await start(requester, phrases.credit_invoice(20, invoice))
    [action] = only_pending(thread)["value"]["action_requests"]
    assert "billing.issue_credit_note (MCP server billing)" in action["description"]
    assert json.loads(json.dumps(action["args"])) == {"invoice_id": invoice, "amount": 20}
    assert server_services.invoices.credit_notes(invoice) == []
