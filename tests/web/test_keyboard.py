"""Keyboard use in the browser: `j`/`k`/`Enter` in the inbox, `a`/`r`/`e` on a card, never while typing."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from agents.offline import phrases
from tests.server.helpers import start

pytestmark = pytest.mark.server

SELECTED = '[data-testid="inbox-row"][data-selected="true"]'


async def test_j_and_k_move_through_the_inbox_and_enter_opens_the_row(web, requester, server_order):
    """inbox: j selects the first row and moves down, k moves up, Enter opens the selected row's thread.

    A j typed into a filter is text, not a move.
    """
    for amount in (300, 310):
        await start(requester, phrases.refund_in_full(server_order(amount)))
    tab = await web.sign_in("reviewer1")
    rows = tab.page.get_by_test_id("inbox-row")
    await expect(rows.nth(1)).to_be_visible()
    page = tab.page

    await page.keyboard.press("j")
    await expect(rows.nth(0)).to_have_attribute("data-selected", "true")
    await page.keyboard.press("j")
    await expect(rows.nth(1)).to_have_attribute("data-selected", "true")
    await expect(page.locator(SELECTED)).to_have_count(1)
    await page.keyboard.press("k")
    await expect(rows.nth(0)).to_have_attribute("data-selected", "true")

    await page.get_by_test_id("inbox-filter-tool").press("j")
    await expect(page.get_by_test_id("inbox-filter-tool")).to_have_value("j")
    await page.get_by_test_id("inbox-filter-tool").fill("")
    await page.locator("body").click(position={"x": 2, "y": 2})  # focus leaves the field
    await expect(rows.nth(0)).to_have_attribute("data-selected", "true")

    thread_id = await page.locator(SELECTED).get_attribute("data-thread-id")
    await page.keyboard.press("Enter")
    await expect(page.get_by_test_id("thread-page")).to_have_attribute("data-thread-id", thread_id or "")


async def test_e_edits_a_approves_and_r_rejects_with_a_reason(web, server_order, server_services):
    """card: e opens the edit form, a approves the refund, r opens the e-mail's reason box.

    Letters typed in the reason box are the reason; the batch is sent once with both decisions.
    """
    order_id = server_order(450)
    requester = await web.sign_in("requester1")
    thread_id = await requester.start(phrases.refund_and_email(order_id))
    await expect(requester.pending("batched").get_by_test_id("action-card")).to_have_count(2)
    reviewer = await web.sign_in("reviewer1")
    await reviewer.open(thread_id)
    refund, email = reviewer.action("issue_refund"), reviewer.action("send_email")
    await expect(refund.get_by_test_id("decision-approve")).to_be_enabled()
    page = reviewer.page

    await page.keyboard.press("e")
    await expect(refund.get_by_test_id("edit-save")).to_be_visible()
    await refund.get_by_role("button", name="Cancel").click()
    await expect(refund.get_by_test_id("decision-approve")).to_be_visible()
    await page.locator("body").click(position={"x": 2, "y": 2})

    await page.keyboard.press("a")
    await expect(refund).to_have_attribute("data-decided", "approve")
    assert server_services.payments.refunds_for(order_id) == []  # collected, not sent

    await page.keyboard.press("r")
    reason = email.get_by_test_id("reject-message")
    await expect(reason).to_be_focused()
    await page.keyboard.type("Not yet, await the carrier")
    await expect(reason).to_have_value("Not yet, await the carrier")
    await email.get_by_test_id("reject-confirm").click()

    await expect(reviewer.receipts("issue_refund")).to_have_attribute("data-decision", "approve")
    rejected = reviewer.receipts("send_email")
    await expect(rejected).to_have_attribute("data-decision", "reject")
    await expect(rejected.get_by_test_id("receipt-message")).to_contain_text("Not yet, await the carrier")
    await expect(reviewer.tool_result("issue_refund")).to_contain_text('"refunded": 450')
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [450.0]
