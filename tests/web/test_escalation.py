"""Escalations in the browser, on a server of this module's own whose refunds escalate after 3 seconds.

The escalated approval waits ten more minutes, so the page can be read while it stays escalated.
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from agents.offline import phrases
from tests.conftest import add_order
from tests.devserver import start_dev_server, stop, user_clients
from tests.server.helpers import start
from tests.web.conftest import reviewer_app

pytestmark = pytest.mark.server

QUICK_ESCALATION = {
    "REFUND_DEADLINE_SECONDS": "3",
    "ESCALATION_DEADLINE_SECONDS": "600",
    "HITL_WATCH_INTERVAL": "0.3",
}
TEN_MINUTES_LEFT = re.compile(r"^due in (9|10) min$")


@pytest.fixture(scope="module")
def escalating_server(tmp_path_factory):
    running = start_dev_server(tmp_path_factory.mktemp("web-escalation"), QUICK_ESCALATION)
    yield running
    stop(running.process)


@pytest.fixture
async def escalating_web(request, chromium, escalating_server):
    async with reviewer_app(request, chromium, escalating_server.url) as app:
        yield app


async def test_an_escalated_refund_says_so_in_the_inbox_on_its_card_and_in_the_audit(
    escalating_web, escalating_server
):
    """escalation: the inbox row, the card and the audit panel say the refund was escalated.

    Row and card count down the escalation's own deadline; the card needs a supervisor now.
    """
    async with user_clients(escalating_server.url) as client_as:
        thread_id, _ = await start(
            client_as("requester1"), phrases.refund_in_full(add_order(escalating_server.services, 300))
        )
    tab = await escalating_web.sign_in("supervisor1")
    row = tab.inbox_rows(thread_id)
    await expect(row.get_by_test_id("escalated")).to_have_text("Escalated")
    await expect(row).to_have_attribute("data-escalated", "true")
    await expect(row.get_by_test_id("deadline")).to_have_text(TEN_MINUTES_LEFT)
    await expect(row).to_contain_text("supervisor")

    await row.click()
    card = tab.pending("batched")
    await expect(card.get_by_test_id("escalated")).to_be_visible()
    await expect(card.get_by_test_id("deadline")).to_have_text(TEN_MINUTES_LEFT)
    await expect(card).to_contain_text("escalated to a supervisor")
    await expect(tab.action("issue_refund")).to_contain_text("needs supervisor")
    escalation = tab.audit().filter(has_text="system")
    await expect(escalation).to_have_attribute("data-decision", "escalated")
