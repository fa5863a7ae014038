"""How a thread reads in the browser.

Markdown AI text, one-line tool calls, subagent work grouped, deadlines as countdowns, the audit panel.
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from agents.offline import phrases
from tests.server.helpers import APPROVE, decisions, refused, start

pytestmark = pytest.mark.server

DAY_LEFT = re.compile(r"^due in (23 h \d+ min|1 d)$")
"""A refund waits REFUND_DEADLINE_SECONDS (a day by default) before it goes to a supervisor."""


async def test_tool_calls_are_one_line_and_open_to_their_args_and_result(web, requester, server_order):
    """conversation: AI text is rendered Markdown; each tool call is one closed line with its result.

    Opened, a call shows an args table and the formatted result.
    """
    order_id = server_order(450)
    tab = await web.sign_in("reviewer1")
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    await tab.open(thread_id)
    await tab.action("issue_refund").get_by_test_id("decision-approve").click()
    await expect(tab.receipts("issue_refund")).to_have_attribute("data-decision", "approve")

    call = tab.tool_call("issue_refund")
    await expect(call).to_have_count(1)
    await expect(call).not_to_have_attribute("open", "")
    summary = call.locator("summary")
    await expect(summary).to_contain_text(f"issue_refund order_id {order_id}, amount 450")
    await expect(summary.get_by_test_id("tool-call-outcome")).to_contain_text("refunded 450")
    await expect(call.get_by_test_id("tool-call-args")).to_be_hidden()
    await summary.click()
    await expect(tab.arg(call.get_by_test_id("tool-call-args"), "amount")).to_have_text("450")
    await expect(call.get_by_test_id("tool-result")).to_contain_text('"refunded": 450')
    await expect(tab.tool_call("get_order")).to_have_count(1)
    await expect(tab.messages("tool")).to_have_count(0)  # every result sits with its call
    await expect(tab.messages("ai").last.locator(".markdown p")).to_contain_text("Refunded 450")


async def test_a_subagents_work_is_grouped_under_it(web, server_order):
    """subagent: refund_specialist's task, the decision on its refund and its report sit under its name.

    The task shows the request and waits for the decision; then it says who decided, and its report.
    """
    order_id = server_order(120)
    requester = await web.sign_in("requester1")
    thread_id = await requester.start(phrases.via_specialist(phrases.refund_amount(59, order_id)))
    group = requester.subagent("refund_specialist")
    await expect(group).to_have_attribute("data-status", "waiting")
    await expect(group).to_contain_text(f"refund 59 on order {order_id}")

    reviewer = await web.sign_in("reviewer1")
    await reviewer.open(thread_id)
    await reviewer.action("issue_refund").get_by_test_id("decision-approve").click()
    group = reviewer.subagent("refund_specialist")
    await expect(group).to_have_attribute("data-status", "done")
    await expect(group.get_by_test_id("subagent-decision")).to_have_text("issue_refund: approve by reviewer1")
    await expect(group.get_by_test_id("tool-result")).to_contain_text("Refunded 59")


async def test_deadlines_count_down_on_the_card_and_the_inbox_row(web, requester, server_order):
    """deadline: a refund's card and its inbox row both say "due in 23 h … min", with what happens then."""
    thread_id, _ = await start(requester, phrases.refund_in_full(server_order(300)))
    tab = await web.sign_in("reviewer1")
    row = tab.inbox_rows(thread_id)
    await expect(row.get_by_test_id("deadline")).to_have_text(DAY_LEFT)
    await expect(row.get_by_test_id("deadline")).to_have_attribute("data-overdue", "false")
    await expect(row.get_by_test_id("escalated")).to_have_count(0)
    await row.click()
    card = tab.pending("batched")
    await expect(card.get_by_test_id("deadline")).to_have_text(DAY_LEFT)
    await expect(card).to_contain_text("then it goes to a supervisor")
    call = tab.tool_call("issue_refund")
    await expect(call).to_have_attribute("data-waiting", "true")
    await expect(call.locator("summary")).to_contain_text("waiting for a decision")


async def test_the_audit_panel_shows_who_decided_what_and_the_refused_attempts(
    web, requester, supervisor, server_order
):
    """audit: the requester's refused approve and the supervisor's edit to 699, with who, when and args."""
    thread_id, _ = await start(requester, phrases.refund_in_full(server_order(899)))
    with refused(403, "supervisor"):
        await requester.runs.wait(thread_id, "support", command=decisions(APPROVE))
    tab = await web.sign_in("supervisor1")
    await tab.open(thread_id)
    card = tab.action("issue_refund")
    await card.get_by_test_id("decision-edit").click()
    await card.get_by_label("Amount").fill("699")
    await card.get_by_test_id("edit-save").click()
    await expect(tab.receipts("issue_refund")).to_have_attribute("data-decision", "edit")

    panel = tab.page.get_by_test_id("audit-panel")
    await expect(tab.audit()).to_have_count(2)
    no = tab.audit("refused")
    await expect(no).to_contain_text("requester1 tried to answer issue_refund")
    await expect(no).to_contain_text("as requester")
    yes = tab.audit("accepted")
    await expect(yes).to_have_attribute("data-decision", "edit")
    await expect(yes).to_contain_text("supervisor1 edit issue_refund")
    await expect(yes.locator("time")).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT"))
    await yes.locator("summary").click()
    await expect(tab.arg(yes.get_by_test_id("audit-args"), "amount")).to_have_text("699")
    await expect(panel.get_by_role("heading", name="Audit trail")).to_be_visible()
