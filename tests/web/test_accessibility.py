"""Accessibility and small screens in Chromium: axe-core, and a phone's 375 px.

axe-core finds no serious or critical violation on the inbox, a batched card and the booking form;
at 375 px nothing overflows and the buttons work.

The pictures the "Web app" section of docs/reviewing.md shows are taken here, after the page passed
its checks.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from agents.offline import phrases
from tests.server.helpers import APPROVE, decisions, start
from tests.web.accessibility import axe_violations, overflow
from tests.web.conftest import ROOT

pytestmark = pytest.mark.server
DOCS = ROOT / "docs"
PHONE = 375


async def picture(locator_or_page, name: str) -> None:
    """Save a picture the docs show, under docs/."""
    DOCS.mkdir(exist_ok=True)
    await locator_or_page.screenshot(path=str(DOCS / name))


async def test_the_inbox_has_no_serious_accessibility_violation(web, requester, client_as, server_order):
    """axe: the inbox with pending rows (deadlines, a quorum half done) has no serious violation."""
    batch, _ = await start(requester, phrases.refund_and_email(server_order(450)))
    dual, _ = await start(requester, phrases.refund_in_full(server_order(2400)))
    await client_as("supervisor2").runs.wait(dual, "support", command=decisions(APPROVE))
    tab = await web.sign_in("supervisor1")
    await expect(tab.inbox_rows(batch)).to_have_count(2)
    await expect(tab.inbox_rows(dual).get_by_test_id("quorum")).to_have_text(
        "1 of 2 approvals · approved by supervisor2"
    )
    await tab.page.keyboard.press("j")
    assert await axe_violations(tab.page) == []
    await picture(tab.page, "web-inbox.png")


async def test_a_batched_card_has_no_serious_accessibility_violation(web, server_order):
    """axe: a thread with a pending batch of two (args tables, deadlines, buttons) and an opened tool call."""
    requester = await web.sign_in("requester1")
    thread_id = await requester.start(phrases.refund_and_email(server_order(450)))
    await expect(requester.pending("batched").get_by_test_id("action-card")).to_have_count(2)
    tab = await web.sign_in("reviewer1")
    await tab.open(thread_id)
    card = tab.pending("batched")
    await expect(tab.action("send_email").get_by_test_id("decision-approve")).to_be_enabled()
    await tab.tool_call("get_order").locator("summary").click()
    assert await axe_violations(tab.page) == []
    await picture(card, "web-batched-card.png")


async def test_the_booking_form_has_no_serious_accessibility_violation(web):
    """axe: the flight card with its radio groups, before and after a choice; it fits 375 px too."""
    tab = await web.sign_in("requester1")
    await tab.start(phrases.FIND_AND_BOOK_CHEAPEST, agent="travel")
    form = tab.pending("form")
    await expect(form.get_by_role("radio", name="Book it")).to_be_enabled()
    assert await axe_violations(tab.page) == []
    await form.get_by_role("radio", name="Book it").check()
    await form.get_by_role("radio", name="Business").check()
    assert await axe_violations(tab.page) == []
    await picture(form, "web-booking-form.png")
    await tab.page.set_viewport_size({"width": PHONE, "height": 800})
    assert await overflow(tab.page) == {"page": 0, "controls": []}


async def test_at_375_px_nothing_overflows_and_the_buttons_work(
    web, requester, server_order, server_services
):
    """phone width: the inbox and a batched card fit 375 px, and the reviewer decides there.

    No sideways scroll and every control inside the viewport, before, during and after the decisions.
    """
    order_id = server_order(450)
    thread_id, _ = await start(requester, phrases.refund_and_email(order_id))
    tab = await web.sign_in("reviewer1", width=PHONE)
    await expect(tab.inbox_rows(thread_id).first).to_be_visible()
    assert await overflow(tab.page) == {"page": 0, "controls": []}

    await tab.inbox_rows(thread_id).first.click()
    refund, email = tab.action("issue_refund"), tab.action("send_email")
    await expect(email.get_by_test_id("decision-reject")).to_be_visible()
    assert await overflow(tab.page) == {"page": 0, "controls": []}
    assert await axe_violations(tab.page) == []

    await refund.get_by_test_id("decision-approve").click()
    await email.get_by_test_id("decision-reject").click()
    await email.get_by_test_id("reject-message").fill("Not before the refund clears")
    assert await overflow(tab.page) == {"page": 0, "controls": []}
    await email.get_by_test_id("reject-confirm").click()
    await expect(tab.receipts("send_email")).to_have_attribute("data-decision", "reject")
    await expect(tab.tool_result("issue_refund")).to_contain_text('"refunded": 450')
    assert await overflow(tab.page) == {"page": 0, "controls": []}
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [450.0]


async def test_a_per_call_approval_and_a_deploy_sign_off_have_no_serious_violation(web):
    """axe: the ops agent's per-call card (review text, args table, buttons) and the deployer's sign-off.

    reviewer1 asks for both; supervisor1 (not who asked: four eyes) reads them with their buttons.
    """
    asker = await web.sign_in("reviewer1")
    deletion = await asker.start(phrases.delete_files("tmp/old.log"), agent="ops")
    await expect(asker.pending("tool_approval").get_by_test_id("decider-note")).to_contain_text("four eyes")
    deploy = await asker.start(phrases.DEPLOY_TO_PRODUCTION, agent="ops")
    await expect(asker.pending("approval_request")).to_be_visible()
    tab = await web.sign_in("supervisor1")
    await tab.open(deletion, agent="ops")
    card = tab.pending("tool_approval")
    await expect(card.get_by_test_id("action-description")).to_be_visible()
    await expect(tab.arg(card, "path")).to_have_text("tmp/old.log")
    await expect(card.get_by_test_id("decision-approve")).to_be_enabled()
    assert await axe_violations(tab.page) == []

    await tab.open(deploy, agent="ops")
    sign_off = tab.pending("approval_request")
    await expect(sign_off.get_by_test_id("approval-approve")).to_be_enabled()
    assert await axe_violations(tab.page) == []
