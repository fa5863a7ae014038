"""Signing in to the web app: a dev user in one click, a typed token, and a token the server refuses."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.devserver import DEV_TOKENS

pytestmark = pytest.mark.server

ROLES = {
    "requester1": "requester",
    "requester2": "requester",
    "reviewer1": "reviewer",
    "supervisor1": "supervisor",
    "supervisor2": "supervisor",
}


async def test_a_dev_user_signs_in_with_one_click_and_signs_out(web):
    """dev mode: the picker lists /app-config's users; a click signs in with that token; sign-out forgets it.

    The session's server is not in dev mode, so the page is given a dev-mode /app-config answer
    (the server side of dev mode is checked in test_app_serving.py); the inbox it then reads is real.
    """
    users = [{"name": name, "role": ROLES[name], "token": token} for name, token in DEV_TOKENS.items()]
    tab = await web.open_signed_out()
    await tab.page.route("**/app-config", lambda route: route.fulfill(json={"dev_users": users}))
    await tab.page.reload()
    picker = tab.page.get_by_test_id("dev-users")
    await expect(picker.get_by_role("button")).to_have_count(len(users))
    await picker.get_by_test_id("dev-user-supervisor1").click()

    await expect(tab.page.get_by_test_id("inbox-page")).to_be_visible()
    await expect(
        tab.page.get_by_test_id("inbox-empty").or_(tab.page.get_by_test_id("inbox-row").first)
    ).to_be_visible()
    await expect(tab.page.get_by_test_id("inbox-error")).to_have_count(0)
    assert await tab.page.evaluate("sessionStorage.getItem('hitl.token')") == "dev-supervisor1"
    header = tab.page.get_by_role("banner")
    await expect(header.get_by_test_id("signed-in-user")).to_have_text("supervisor1")
    await expect(header.get_by_test_id("signed-in-role")).to_have_text("supervisor")
    await expect(header.get_by_role("button", name="Sign out")).to_be_visible()

    await tab.page.get_by_test_id("signout").click()
    await expect(tab.page.get_by_test_id("signin-page")).to_be_visible()
    assert await tab.page.evaluate("sessionStorage.getItem('hitl.token')") is None


async def test_an_unknown_token_gets_the_servers_401_on_the_inbox(web):
    """a typed token the server does not know: the inbox shows the server's 401 message, no rows.

    The agents cannot be read either: the inbox's filter and a new conversation say the token was refused.
    """
    tab = await web.open_signed_out()
    await tab.page.get_by_test_id("signin-token").fill("not-a-known-token")
    await tab.page.get_by_test_id("signin-submit").click()
    await expect(tab.page.get_by_test_id("inbox-error")).to_contain_text("401")
    await expect(tab.page.get_by_test_id("inbox-row")).to_have_count(0)
    refused = "The server refused your token (401"
    await expect(tab.page.get_by_test_id("agents-error")).to_contain_text(refused)
    await tab.page.get_by_test_id("nav-new").click()
    await expect(tab.page.get_by_test_id("thread-error")).to_contain_text(refused)
    await expect(tab.page.get_by_test_id("agents-retry")).to_be_visible()
    await expect(tab.page.get_by_test_id("message-input")).to_have_count(0)
