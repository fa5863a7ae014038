"""An MCP server's question in the browser: billing asks the customer why and to confirm, in real Chromium.

The customer (the thread's owner) asks for a credit note; a reviewer approves the call (through the
API: the approval card is another test's); billing then asks its two questions, which the customer
answers on the question card, one after the other. The credit note is written once.
"""

from __future__ import annotations

import uuid

import pytest
from playwright.async_api import expect

from agents.offline import phrases
from tests.server.mcp_helpers import until

pytestmark = pytest.mark.server


async def approve_the_call(client_as, thread_id: str) -> None:
    """reviewer1 approves the credit note waiting on `thread_id` (one batched call) once the run paused."""
    reviewer = client_as("reviewer1")

    async def paused() -> bool:  # the card shows before the run has ended (a resume then is a 409)
        return (await reviewer.threads.get(thread_id))["status"] == "interrupted"

    await until(paused)
    await reviewer.runs.wait(
        thread_id, "support", command={"resume": {"decisions": [{"type": "approve"}]}}
    )


async def test_the_owner_answers_billings_questions_on_the_card(web, client_as, server_services):
    """question card: billing's words as text, a reason field, then a confirmation; one credit note."""
    invoice = f"INV-{uuid.uuid4().int % 10**9:09d}"
    server_services.invoices.add(invoice, order_id="A1024", amount=200, owner="requester1")
    tab = await web.sign_in("requester1")
    thread_id = await tab.start(phrases.credit_invoice(30, invoice))
    await expect(tab.action("billing_issue_credit_note")).to_be_visible()
    await approve_the_call(client_as, thread_id)

    await tab.reload()
    question = tab.pending("mcp_elicitation")
    await expect(question.get_by_role("heading")).to_have_text("billing.issue_credit_note asks")
    await expect(question.get_by_test_id("mcp-question")).to_have_text(f"Why should {invoice} be credited 30?")
    await question.get_by_label("Reason").fill("Arrived a week late")
    await question.get_by_test_id("mcp-accept").click()

    confirm = tab.pending("mcp_elicitation")
    await expect(confirm.get_by_test_id("mcp-question")).to_have_text(f"Credit 30 on {invoice} (invoice 200)?")
    await confirm.get_by_label("Confirm the amount").check()
    await confirm.get_by_test_id("mcp-accept").click()

    await expect(tab.pending()).to_have_count(0)
    await expect(tab.messages("ai").last).to_contain_text(f"of 30 on {invoice}: Arrived a week late")
    [note] = server_services.invoices.credit_notes(invoice)
    assert (note["amount"], note["reason"]) == (30, "Arrived a week late")


async def test_a_reviewer_sees_the_question_but_only_the_owner_answers(web, client_as, server_services):
    """question card for someone else: billing's words and who answers; no field, no button."""
    invoice = f"INV-{uuid.uuid4().int % 10**9:09d}"
    server_services.invoices.add(invoice, order_id="A1024", amount=200, owner="requester1")
    owner = await web.sign_in("requester1")
    thread_id = await owner.start(phrases.credit_invoice(10, invoice))
    await expect(owner.action("billing_issue_credit_note")).to_be_visible()
    await approve_the_call(client_as, thread_id)

    reviewer = await web.sign_in("reviewer1")
    await reviewer.open(thread_id)
    question = reviewer.pending("mcp_elicitation")
    await expect(question.get_by_test_id("mcp-question")).to_have_text(f"Why should {invoice} be credited 10?")
    await expect(question).to_contain_text("requester1, whose thread this is, answers this")
    await expect(question.get_by_test_id("mcp-accept")).to_have_count(0)
    await expect(question.get_by_test_id("mcp-decline")).to_have_count(0)
    assert server_services.invoices.credit_notes(invoice) == []
