"""An MCP server's questions mid-call, answered by the thread's owner through the real `langgraph dev`.

Billing's `issue_credit_note` asks the customer why, then to confirm the amount, each as an
`InputRequiredResult` under a new key on every round; the layer asks each as an `mcp_elicitation`
interrupt, checks the answer against the server's own schema before saving it, passes accept,
decline and cancel on as MCP says, and signs a receipt naming the server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.offline import phrases
from tests.server.helpers import APPROVE, decisions, refused, start
from tests.server.mcp_helpers import last_reply, new_invoice, only_question, trail, until_idle

pytestmark = pytest.mark.server

HITL = Path(sys.executable).parent / "hitl"


async def asked_why(requester, reviewer, server_services, amount: float = 20) -> tuple[str, str, dict]:
    """A credit note approved by a reviewer, billing now asking the owner why: (thread, invoice, question)."""
    invoice = new_invoice(server_services, 300)
    thread_id, _ = await start(requester, phrases.credit_invoice(amount, invoice))
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    return thread_id, invoice, only_question(await requester.threads.get(thread_id))


async def test_the_owner_answers_both_questions_and_the_credit_note_is_written_once(
    requester, reviewer, server_services
):
    """form elicitation: fields from billing's schema; answered by the owner; one credit note; both signed."""
    thread_id, invoice, why = await asked_why(requester, reviewer, server_services)
    value = why["value"]
    assert (value["mode"], value["required_role"], value["agent"]) == ("form", "owner", "support")
    assert value["mcp"]["server"] == "billing"
    assert value["mcp"]["tool"] == "issue_credit_note"
    assert value["requested_schema"]["properties"]["reason"]["minLength"] == 3
    assert value["message"] == f"Why should {invoice} be credited 20?"
    assert server_services.invoices.credit_notes(invoice) == []

    accept = {"action": "accept", "content": {"reason": "Arrived late"}}
    await requester.runs.wait(thread_id, "support", command={"resume": {why["id"]: accept}})
    confirm = only_question(await requester.threads.get(thread_id))
    assert confirm["id"] != why["id"]
    assert confirm["value"]["message"] == f"Credit 20 on {invoice} (invoice 300)?"
    assert server_services.invoices.credit_notes(invoice) == []

    answer = {"action": "accept", "content": {"confirm": True}}
    await requester.runs.wait(thread_id, "support", command={"resume": {confirm["id"]: answer}})
    [note] = server_services.invoices.credit_notes(invoice)
    assert (note["amount"], note["reason"]) == (20, "Arrived late")
    assert f"Credit note {note['credit_note_id']} of 20 on {invoice}: Arrived late" in await last_reply(
        requester, thread_id
    )
    answered = [r for r in await trail(requester, thread_id) if r["decision"] == "answered"]
    assert [r["final_args"] for r in answered] == [{"reason": "Arrived late"}, {"confirm": True}]
    assert {r["mcp"]["server"] for r in answered} == {"billing"}
    report = await requester.http.get(f"/audit/{thread_id}/verification")
    assert report["ok"], report


async def test_a_reviewer_may_not_answer_the_owners_question_and_bad_answers_are_refused(
    requester, client_as, reviewer, server_services
):
    """wrong person 403, a field against the schema 422 naming it, an unknown interrupt 422; nothing saved."""
    thread_id, invoice, why = await asked_why(requester, reviewer, server_services)
    good = {"action": "accept", "content": {"reason": "Arrived late"}}
    with refused(403, "thread's owner"):
        await reviewer.runs.wait(thread_id, "support", command={"resume": {why["id"]: good}})
    with refused(404):
        await client_as("requester2").runs.wait(thread_id, "support", command={"resume": {why["id"]: good}})
    with refused(422, "content/reason"):
        bad = {"action": "accept", "content": {"reason": "no"}}
        await requester.runs.wait(thread_id, "support", command={"resume": {why["id"]: bad}})
    with refused(422, "content"):
        extra = {"action": "accept", "content": {"reason": "Late", "amount": 900}}
        await requester.runs.wait(thread_id, "support", command={"resume": {why["id"]: extra}})
    with refused(422, "Unknown interrupt"):
        await requester.runs.wait(thread_id, "support", command={"resume": {"0" * 32: good}})
    with refused(422, "another question"):
        other = {**good, "question": "f" * 64}
        await requester.runs.wait(thread_id, "support", command={"resume": {why["id"]: other}})
    still = only_question(await requester.threads.get(thread_id))
    assert still["id"] == why["id"]
    assert server_services.invoices.credit_notes(invoice) == []
    refusals = [r for r in await trail(requester, thread_id) if r["outcome"] == "refused"]
    assert len(refusals) >= 4


@pytest.mark.parametrize(("action", "said"), [("decline", "declined"), ("cancel", "cancelled")])
async def test_decline_and_cancel_reach_the_server_and_are_recorded_as_such(
    requester, reviewer, server_services, action, said
):
    """decline / cancel: billing writes no credit note and says so; the receipt says declined / cancelled."""
    thread_id, invoice, why = await asked_why(requester, reviewer, server_services)
    await requester.runs.wait(thread_id, "support", command={"resume": {why["id"]: {"action": action}}})
    assert (await requester.threads.get(thread_id))["status"] == "idle"
    assert server_services.invoices.credit_notes(invoice) == []
    assert f"the customer {said} the reason question" in await last_reply(requester, thread_id)
    [receipt] = [r for r in await trail(requester, thread_id) if r["decision"] == said]
    assert (receipt["final_args"], receipt["mcp"]["server"]) == (None, "billing")


async def test_the_owner_answers_from_the_cli_after_hitl_show_lists_the_fields(
    server, requester, reviewer, server_services
):
    """hitl show: billing's question and its fields, as text; hitl answer: the answer goes on, checked."""
    thread_id, _, why = await asked_why(requester, reviewer, server_services)
    env = {"HITL_URL": server.url, "HITL_TOKEN": "dev-requester1", "PATH": "/usr/bin:/bin", "COLUMNS": "200"}

    def hitl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(HITL), *args], capture_output=True, text=True, env=env, timeout=120, check=False
        )

    shown = hitl("show", thread_id)
    assert shown.returncode == 0, shown.stderr
    assert "wants billing.issue_credit_note" in shown.stdout
    assert "decided by: the thread's owner" in shown.stdout
    assert "Why should" in shown.stdout
    assert "reason  text, required, 3 to 500 characters" in shown.stdout
    assert '"action": "decline"' in shown.stdout
    bad = hitl("answer", thread_id, why["id"], "--json", json.dumps({"action": "accept", "content": {}}))
    assert bad.returncode != 0
    assert "reason" in bad.stderr
    late = json.dumps({"action": "accept", "content": {"reason": "Late"}})
    done = hitl("answer", thread_id, why["id"], "--json", late)
    assert done.returncode == 0, done.stderr
    assert "waits again" in done.stdout
    assert only_question(await requester.threads.get(thread_id))["value"]["message"].startswith("Credit 20")


async def test_a_withdrawal_cancels_a_pending_question(requester, reviewer, server_services):
    """POST /withdraw by the owner: the question is answered cancel, recorded withdrawn; nothing is written.

    The withdrawal's run names nobody it acts for (an open issue of the layer, docs/security.md), so
    billing refuses the retried call outright, as it must: its answer is the tool's error.
    """
    thread_id, invoice, _ = await asked_why(requester, reviewer, server_services)
    withdrawn = await requester.http.post(f"/threads/{thread_id}/withdraw", json={"reason": "Never mind"})
    assert [r["decision"] for r in withdrawn["withdrawn"]] == ["withdrawn"]
    await until_idle(requester, thread_id)
    assert server_services.invoices.credit_notes(invoice) == []
    assert f"No credit note on {invoice}" in await last_reply(requester, thread_id)
