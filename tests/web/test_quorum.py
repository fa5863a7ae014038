"""Quorums in the browser: a refund over REFUND_DUAL_CONTROL_LIMIT (2000) needs two different supervisors.

Each page says how far the quorum got: the card, the partial receipt, the other supervisor's inbox row.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from agents.offline import phrases
from tests.server.helpers import start

pytestmark = pytest.mark.server


async def test_two_supervisors_approve_and_every_page_shows_the_progress(
    web, requester, server_order, server_services
):
    """quorum: two supervisors approve a 2,400 refund, and every page shows how far the quorum got.

    "0 of 2" before; after supervisor1, a partial receipt and a pending card say "1 of 2 · approved by
    supervisor1", so does supervisor2's inbox row; supervisor2 completes it and the refund is made once.
    """
    order_id = server_order(2400)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    first = await web.sign_in("supervisor1")
    await first.open(thread_id)
    refund = first.action("issue_refund")
    await expect(refund.get_by_test_id("quorum")).to_have_text("0 of 2 approvals")
    await refund.get_by_test_id("decision-approve").click()

    partial = first.receipts("issue_refund")
    await expect(partial).to_have_attribute("data-partial", "true")
    await expect(partial.get_by_test_id("quorum")).to_have_text("1 of 2 approvals · approved by supervisor1")
    await expect(first.action("issue_refund").get_by_test_id("quorum")).to_have_text(
        "1 of 2 approvals · approved by supervisor1"
    )
    assert server_services.payments.refunds_for(order_id) == []

    second = await web.sign_in("supervisor2")
    row = second.inbox_rows(thread_id)
    await expect(row.get_by_test_id("quorum")).to_have_text("1 of 2 approvals · approved by supervisor1")
    await row.click()
    await second.action("issue_refund").get_by_test_id("decision-approve").click()
    done = second.receipts("issue_refund").filter(has_text="2 of 2 approvals")
    await expect(done).to_have_attribute("data-partial", "false")
    await expect(second.pending()).to_have_count(0)
    await expect(second.tool_result("issue_refund")).to_contain_text('"refunded": 2400')
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [2400.0]
