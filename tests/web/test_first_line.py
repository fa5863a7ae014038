"""The first-line reviewer in the browser: who decided (a model, marked apart), its note, its samples.

A server of this module's own runs the demo with the first-line reviewer on (every approval of it
sampled); the app is driven in real headless Chromium. What the page shows is checked against the
business database and the thread's trail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.async_api import expect

from agents.offline import phrases
from tests.conftest import add_order
from tests.devserver import serving, user_clients
from tests.web.conftest import reviewer_app

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from tests.devserver import DevServer
    from tests.web.reviewer_app import ReviewerApp

pytestmark = pytest.mark.server

MODEL = "model:support-triage"


@pytest.fixture(scope="module")
def first_line_web(tmp_path_factory) -> Iterator[DevServer]:
    env = {"SUPPORT_FIRST_LINE": "true", "REFUND_AUTO_APPROVE_LIMIT": "20", "FIRST_LINE_SAMPLE_RATE": "1"}
    with serving(tmp_path_factory.mktemp("first-line-web"), env) as running:
        yield running


@pytest.fixture
async def app(request, chromium, first_line_web) -> AsyncIterator[ReviewerApp]:
    async with reviewer_app(request, chromium, first_line_web.url) as opened:
        yield opened


async def test_the_models_decision_is_marked_as_a_models_in_the_receipt_and_the_trail(app, first_line_web):
    """who decided: the receipt and the audit entry say model:support-triage, marked "a model", and verify."""
    shop = first_line_web.services
    order_id = add_order(shop, 60)
    requester = await app.sign_in("requester1")
    await requester.start(phrases.email_customer(order_id))
    receipt = requester.receipts("send_email")
    await expect(receipt.get_by_test_id("receipt-reviewer")).to_contain_text(f"by {MODEL}")
    await expect(receipt.get_by_test_id("receipt-model")).to_have_text("a model (scripted:support-triage)")
    await expect(receipt.get_by_test_id("receipt-verified")).to_have_attribute("data-verified", "true")
    entry = requester.audit("accepted")
    await expect(entry).to_have_count(1)
    await expect(entry.get_by_test_id("audit-model")).to_have_text("a model (scripted:support-triage)")
    await expect(requester.pending()).to_have_count(0)
    assert len(shop.outbox.sent_to(f"{order_id.lower()}@example.com")) == 1


async def test_a_referred_call_shows_the_models_reason_and_a_person_decides(app, first_line_web):
    """referral: the card shows what the first-line reviewer said; reviewer1's approve sends it once."""
    shop = first_line_web.services
    order_id = add_order(shop, 60)
    requester = await app.sign_in("requester1")
    thread_id = await requester.start(f"Email the customer of {order_id} that we promise a voucher by Friday")
    reviewer = await app.sign_in("reviewer1")
    await reviewer.open(thread_id)
    card = reviewer.action("send_email")
    note = card.get_by_test_id("first-line-note")
    await expect(note).to_contain_text(f"First-line reviewer {MODEL}")
    await expect(note).to_contain_text("it promises the customer something")
    await expect(note).to_have_attribute("data-cause", "not_allowed")
    await expect(card.get_by_test_id("action-description")).not_to_contain_text("left this to you")
    assert shop.outbox.sent_to(f"{order_id.lower()}@example.com") == []
    await card.get_by_test_id("decision-approve").click()
    await expect(reviewer.receipts("send_email").get_by_test_id("receipt-reviewer")).to_contain_text(
        "by reviewer1"
    )
    await expect(reviewer.messages("ai").last).to_contain_text("E-mailed")  # the run went on: sent
    assert len(shop.outbox.sent_to(f"{order_id.lower()}@example.com")) == 1


async def test_a_reviewer_checks_a_sample_in_the_inbox_and_says_should_not_have(app, first_line_web):
    """samples: the model's approval is in the inbox to check; "Should not have" records it, once."""
    order_id = add_order(first_line_web.services, 60)
    async with user_clients(first_line_web.url) as make:
        requester = make("requester1")
        thread = await requester.threads.create()
        said = {"messages": [{"role": "user", "content": phrases.email_customer(order_id)}]}
        await requester.runs.wait(thread["thread_id"], "support", input=said)
        (receipt,) = (await requester.threads.get_state(thread["thread_id"]))["values"]["approval_receipts"]
    reviewer = await app.sign_in("reviewer1")
    await reviewer.open_inbox()
    sample = reviewer.page.locator(
        f'[data-testid="first-line-sample"][data-tool-call-id="{receipt["tool_call_id"]}"]'
    )
    await expect(sample).to_contain_text(MODEL)
    await expect(sample.get_by_test_id("first-line-sample-reason")).to_have_text(
        "a customer e-mail that informs and promises nothing"
    )
    await sample.get_by_label(f"Note on send_email {receipt['tool_call_id']}").fill(
        "not without the order number"
    )
    await sample.get_by_test_id("first-line-overturn").click()
    await expect(sample).to_have_count(0)
    async with user_clients(first_line_web.url) as make:
        records = (await make("supervisor1").http.get(f"/audit/{thread['thread_id']}"))["records"]
    assert [(r["decision"], r["reviewer"]) for r in records] == [
        ("approve", MODEL),
        ("overturned", "reviewer1"),
    ]
    assert "not without the order number" in records[-1]["message"]
