"""The inbox page in the browser: a new pending approval appears without a reload and opens its thread."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from agents.offline import phrases
from tests.server.helpers import start

pytestmark = pytest.mark.server


async def test_the_inbox_lists_a_new_pending_approval_and_opens_its_thread(web, requester, server_order):
    """inbox: a refund asked after the page opened shows up as a row for the reviewer; a click opens it."""
    reviewer = await web.sign_in("reviewer1")
    await expect(reviewer.page.get_by_test_id("inbox-page")).to_be_visible()

    order_id = server_order(300)
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id))
    assert thread["status"] == "interrupted"

    row = reviewer.inbox_rows(thread_id)
    await expect(row).to_have_count(1)
    await expect(row).to_have_attribute("data-tool", "issue_refund")
    await expect(row).to_contain_text("requester1")
    await row.click()

    await expect(reviewer.page.get_by_test_id("thread-page")).to_have_attribute("data-thread-id", thread_id)
    card = reviewer.action("issue_refund")
    await expect(reviewer.arg(card, "order_id")).to_have_text(order_id)
    await expect(card.get_by_test_id("decision-approve")).to_be_enabled()


async def test_a_turn_of_two_deciders_shows_each_party_its_part_and_who_else_answers(
    web, requester, server_order
):
    """refund + question: the reviewer's row is the refund, saying the question waits for the owner.

    On the thread page the reviewer may approve the refund, and is told the owner answers the question.
    """
    order_id = server_order(300)
    thread_id, thread = await start(requester, phrases.refund_and_ask(order_id))
    assert thread["status"] == "interrupted"
    reviewer = await web.sign_in("reviewer1")
    row = reviewer.inbox_rows(thread_id)
    await expect(row).to_have_count(1)
    await expect(row).to_have_attribute("data-tool", "issue_refund")
    await expect(row.get_by_test_id("also-waiting")).to_have_text(
        "Also waiting on this thread: ask_user (the thread's owner)."
    )
    await row.click()
    card = reviewer.page.locator('[data-testid="interrupt-card"][data-kind="tool_approval"]')
    await expect(card.filter(has_text="issue_refund").get_by_test_id("decision-approve")).to_be_enabled()
    question = card.filter(has_text="ask_user")
    await expect(question.get_by_test_id("decider-note")).to_contain_text("requester1, whose thread this is")
    await expect(question.get_by_test_id("decision-respond")).to_have_count(0)
