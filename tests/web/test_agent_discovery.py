"""The web app's agents are the server's: the picker offers what `/assistants/search` answers, no list.

Nothing here names an agent: the expected list is read from the server (and from the `langgraph.json`
it serves), so the test holds for any project's agents.
"""

from __future__ import annotations

import json

import pytest
from playwright.async_api import expect

from tests.web.conftest import ROOT
from tests.web.reviewer_app import THREAD_ID

pytestmark = pytest.mark.server


async def served_agents(client) -> list[str]:
    """The graph ids of the server's system assistants, once each, sorted: what the app must offer."""
    assistants = await client.assistants.search(metadata={"created_by": "system"}, limit=100)
    return sorted({a["graph_id"] for a in assistants})


async def test_the_picker_offers_what_the_server_serves_and_a_new_conversation_starts_on_the_first(
    web, supervisor
):
    """picker: exactly the served graphs (those of langgraph.json), in order; `#/threads/new` picks the first.

    A message sent from that page starts a thread of the first served agent (its metadata says so).
    """
    agents = await served_agents(supervisor)
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert agents == sorted(graphs)
    assert agents

    tab = await web.sign_in("supervisor1")
    await expect(tab.page.get_by_test_id("nav-new")).to_have_attribute("href", "#/threads/new")
    await tab.page.get_by_test_id("nav-new").click()
    picker = tab.page.get_by_test_id("assistant-select")
    await expect(picker.locator("option")).to_have_count(len(agents))
    assert await picker.locator("option").evaluate_all("options => options.map(o => o.value)") == agents
    await expect(picker).to_have_value(agents[0])

    await tab.page.get_by_test_id("message-input").fill("Hello")
    await tab.page.get_by_test_id("message-send").click()
    thread_id = tab.page.get_by_test_id("thread-id")
    await expect(thread_id).to_have_text(THREAD_ID)
    await expect(picker).to_be_disabled()
    await expect(tab.messages("ai").first).to_be_visible()  # the run went on: the thread is on the server
    thread = await supervisor.threads.get(await thread_id.inner_text())
    assert thread["metadata"]["graph_id"] == agents[0]


async def test_the_inbox_filter_suggests_the_served_agents_and_an_unserved_one_is_named(web, requester):
    """inbox: the agent filter's suggestions are the served graphs; `?agent=` of no served graph says so."""
    agents = await served_agents(requester)
    tab = await web.sign_in("requester1")
    options = tab.page.locator('[data-testid="inbox-filter-agent-options"] option')
    await expect(options).to_have_count(len(agents))
    assert await options.evaluate_all("options => options.map(o => o.value)") == agents
    await expect(tab.page.get_by_test_id("new-conversation")).to_have_attribute("href", "#/threads/new")

    await tab.page.goto(f"{tab.url}#/threads/new?agent=no-such-agent")
    await expect(tab.page.get_by_test_id("thread-error")).to_have_text(
        f'The server serves no agent "no-such-agent" (it serves: {", ".join(agents)}).'
    )
