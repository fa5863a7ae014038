"""The analytics dashboard in Chromium: reviewers open it from the nav and see the API's numbers."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from playwright.async_api import expect

from agents.offline import phrases
from server.http.outgoing import tls
from tests.server.helpers import APPROVE, decisions, only_pending, refused, start
from tests.web.conftest import ROOT

pytestmark = pytest.mark.server
SCREENSHOT = ROOT / "docs" / "analytics-dashboard.png"
"""The picture the "Metrics and analytics" section of docs/operating.md shows."""


async def test_the_dashboard_shows_the_numbers_of_the_api(
    web, server, requester, reviewer, supervisor, server_order
):
    """dashboard: after an approve, an edit, a reject and a refusal, its tiles match GET /analytics."""
    big, _ = await start(requester, phrases.refund_in_full(server_order(899)))
    edited, thread = await start(requester, phrases.refund_in_full(server_order(300)))
    rejected, _ = await start(requester, phrases.refund_in_full(server_order(200)))
    with refused(403, "may not answer"):
        await requester.runs.wait(big, "support", command=decisions(APPROVE))
    await supervisor.runs.wait(big, "support", command=decisions(APPROVE))
    action = only_pending(thread)["value"]["action_requests"][0]
    edit = {"name": "issue_refund", "args": {**action["args"], "amount": 250}}
    await reviewer.runs.wait(edited, "support", command=decisions({"type": "edit", "edited_action": edit}))
    no = {"type": "reject", "message": "Photos show no damage"}
    await reviewer.runs.wait(rejected, "support", command=decisions(no))

    tab = await web.sign_in("reviewer1")
    await tab.page.get_by_test_id("nav-analytics").click()
    await expect(tab.page.get_by_test_id("analytics-page")).to_be_visible()
    async with httpx.AsyncClient(base_url=server.url, timeout=60, verify=tls()) as http:
        api = (
            await http.get(
                "/analytics", params={"since": "7d"}, headers={"Authorization": "Bearer dev-reviewer1"}
            )
        ).json()
    totals = api["totals"]
    assert totals["decisions"] >= 3
    assert totals["refused"] >= 1
    await expect(tab.page.get_by_test_id("total-decisions")).to_have_text(f"{totals['decisions']} decisions")
    await expect(tab.page.get_by_test_id("total-refused")).to_have_text(f"{totals['refused']} refused")
    await expect(tab.page.get_by_test_id("total-approve")).to_have_text(
        f"{round(totals['rates']['approve'] * 100)}% approved"
    )
    refund = tab.page.locator('[data-testid="analytics-tool-row"][data-name="issue_refund"]')
    await expect(refund).to_contain_text("amount")
    await expect(
        tab.page.locator('[data-testid="analytics-reviewer-row"][data-name="supervisor1"]')
    ).to_be_visible()
    for chart in ("chart-by-tool", "chart-timings", "chart-by-day"):
        await expect(tab.page.get_by_test_id(chart).locator(".recharts-bar-rectangle").first).to_be_visible()

    await tab.page.get_by_test_id("period-24h").click()
    await expect(tab.page.get_by_test_id("period-24h")).to_have_attribute("aria-pressed", "true")
    await expect(tab.page.get_by_test_id("total-decisions")).to_contain_text("decisions")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    await tab.page.screenshot(path=str(SCREENSHOT), full_page=True)


async def test_a_requester_has_no_dashboard(web):
    """dashboard: a requester's navigation has no link, and the page shows the server's 403."""
    tab = await web.sign_in("requester1")
    await expect(tab.page.get_by_test_id("nav-new")).to_be_visible()
    await expect(tab.page.get_by_test_id("nav-analytics")).to_have_count(0)
    await tab.page.goto(f"{tab.url}#/analytics")
    await expect(tab.page.get_by_test_id("analytics-error")).to_contain_text("reviewers and supervisors")


async def test_a_decision_not_applied_is_listed_and_opens_its_thread(
    web, server, server_services, requester, server_order
):
    """dashboard: an approve given up (its assistant deleted) is listed; its thread's card answers again.

    The outcome of tests/security/test_not_applied.py, seen in Chromium by a supervisor: the tile
    counts it, the row says why, nothing was refunded; the row's link opens the thread, whose card
    offers the approval again (the trail's accepted approve no longer answers it).
    """
    order_id = server_order(300)
    async with httpx.AsyncClient(
        base_url=server.url, timeout=60, verify=tls(), headers={"Authorization": "Bearer dev-supervisor1"}
    ) as http:
        made = await http.post("/assistants", json={"graph_id": "support", "name": f"custom-{order_id}"})
        assistant = made.json()["assistant_id"]
        thread_id, thread = await start(requester, phrases.refund_in_full(order_id), assistant)
        later = {
            "assistant_id": assistant,
            "command": {"resume": {only_pending(thread)["id"]: {"decisions": [{"type": "approve"}]}}},
            "after_seconds": 3600,
        }
        run = (await http.post(f"/threads/{thread_id}/runs", json=later)).json()
        await requester.runs.cancel(thread_id, run["run_id"])
        assert (await http.delete(f"/assistants/{assistant}")).status_code == 204

        deadline = time.monotonic() + 90
        while not [
            r for r in (await http.get("/analytics")).json()["not_applied"] if r["thread_id"] == thread_id
        ]:
            assert time.monotonic() < deadline, "the reconciler never gave the decision up"
            await asyncio.sleep(0.5)
        total = (await http.get("/analytics")).json()["totals"]["not_applied"]

    tab = await web.sign_in("supervisor1")
    await tab.page.get_by_test_id("nav-analytics").click()
    await expect(tab.page.get_by_test_id("total-not-applied")).to_have_text(f"{total} not applied")
    row = tab.page.get_by_test_id("not-applied-row").filter(has_text=thread_id[:8])
    await expect(row).to_contain_text("no longer exists")
    assert server_services.payments.refunds_for(order_id) == []
    await row.get_by_role("link").click()
    # the approval waits again: the trail's accepted approve, given up since, no longer answers it
    await expect(tab.page.get_by_test_id("decision-approve")).to_be_enabled()
