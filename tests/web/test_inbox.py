"""The inbox page in the browser: a new pending approval appears without a reload and opens its thread.

Its group filter, "Waiting for me" and counts per group show what `GET /inbox` answers.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from agents.offline import phrases
from tests.server.helpers import APPROVE, decisions, start

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


GROUP_NAMES = {"owner": "your own questions"}
"""How the page names a group (web/src/present/inboxGroups.ts); any other group by its name."""


async def test_a_supervisor_filters_by_group_and_by_what_waits_for_them(
    web, requester, supervisor, server_order
):
    """group + "Waiting for me": supervisor1 (a reviewer and a supervisor) sees each refund once.

    The header and the group filter count supervisor1's whole inbox as GET /inbox does; choosing
    "supervisor" leaves the 899 and the 2,400 refunds (not the 300 one, a reviewer's); "Waiting for me"
    then leaves the 899 only (supervisor1 approved the 2,400 one, which waits for another supervisor);
    "All" with it the 300 and the 899; unticked, all three again. The counts never change with the filters.
    """
    small, _ = await start(requester, phrases.refund_in_full(server_order(300)))
    big, _ = await start(requester, phrases.refund_in_full(server_order(899)))
    dual, _ = await start(requester, phrases.refund_in_full(server_order(2400)))
    await supervisor.runs.wait(dual, "support", command=decisions(APPROVE))

    tab = await web.sign_in("supervisor1")
    for thread_id, group in ((small, "reviewer"), (big, "supervisor"), (dual, "supervisor")):
        await expect(tab.inbox_rows(thread_id)).to_have_count(1)
        await expect(tab.inbox_rows(thread_id)).to_have_attribute("data-group", group)

    counts = (await supervisor.http.get("/inbox", params={"limit": 1}))["counts"]
    assert counts["reviewer"] >= 1, counts
    assert counts["supervisor"] >= 2, counts  # the 899 and the 2,400 refunds
    header = [f"{GROUP_NAMES.get(group, group)}: {count}" for group, count in counts.items()]
    options = [f"All ({sum(counts.values())})"]
    options += [f"{GROUP_NAMES.get(group, group)} ({count})" for group, count in counts.items()]
    group_filter = tab.page.get_by_test_id("inbox-filter-group")
    await expect(tab.page.get_by_test_id("inbox-counts-group")).to_have_text(header)
    await expect(group_filter.locator("option")).to_have_text(options)

    await group_filter.select_option("supervisor")
    await expect(tab.inbox_rows(small)).to_have_count(0)
    await expect(tab.inbox_rows(big)).to_have_count(1)
    await expect(tab.inbox_rows(dual)).to_have_count(1)
    others = tab.page.locator('[data-testid="inbox-row"]:not([data-group="supervisor"])')
    await expect(others).to_have_count(0)
    await expect(tab.page.get_by_test_id("inbox-position")).to_contain_text(
        f"{counts['supervisor']} matching"
    )

    await tab.page.get_by_test_id("inbox-filter-mine").check()
    await expect(tab.inbox_rows(dual)).to_have_count(0)
    await expect(tab.inbox_rows(big)).to_have_count(1)
    await expect(tab.inbox_rows(small)).to_have_count(0)

    await group_filter.select_option("")
    await expect(tab.inbox_rows(small)).to_have_count(1)
    await expect(tab.inbox_rows(big)).to_have_count(1)
    await expect(tab.inbox_rows(dual)).to_have_count(0)
    await expect(tab.page.get_by_test_id("inbox-counts-group")).to_have_text(header)
    await expect(group_filter.locator("option")).to_have_text(options)

    await tab.page.get_by_test_id("inbox-filter-mine").uncheck()
    await expect(tab.inbox_rows(dual)).to_have_count(1)
    await expect(tab.inbox_rows(small)).to_have_count(1)
