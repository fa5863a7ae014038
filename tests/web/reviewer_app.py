"""The reviewer web app as the browser tests drive it: sign in, open pages, find cards by their test ids.

Selectors live here once (the app's `data-testid`s), so a test reads like what a person does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote

from playwright.async_api import expect

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Locator, Page

THREAD_ID = re.compile(r"^[0-9a-f-]{36}$")
TOKEN_KEY = "hitl.token"  # noqa: S105  (where the token is kept, not a token)
"""Where the app keeps a tab's bearer token (sessionStorage; web/src/auth/session.ts)."""


@dataclass
class Tab:
    """One signed-in user's browser tab on the app."""

    user: str
    page: Page
    url: str

    async def start(self, text: str, agent: str = "support") -> str:
        """Start a conversation with `agent` by sending `text`; returns the new thread's id."""
        await self.page.goto(f"{self.url}#/threads/new?agent={agent}")
        await self.page.get_by_test_id("message-input").fill(text)
        await self.page.get_by_test_id("message-send").click()
        thread_id = self.page.get_by_test_id("thread-id")
        await expect(thread_id).to_have_text(THREAD_ID)
        return await thread_id.inner_text()

    async def open(self, thread_id: str, agent: str = "support") -> None:
        """Open a thread's page."""
        await self.page.goto(f"{self.url}#/threads/{quote(thread_id)}?agent={agent}")
        await expect(self.page.get_by_test_id("thread-page")).to_have_attribute("data-thread-id", thread_id)

    async def open_inbox(self) -> None:
        """Open the inbox page."""
        await self.page.goto(f"{self.url}#/inbox")
        await self.page.get_by_test_id("inbox-page").wait_for()

    async def reload(self) -> None:
        """Reload the page (the session, in sessionStorage, survives)."""
        await self.page.reload()
        await self.page.get_by_test_id("thread-page").or_(self.page.get_by_test_id("inbox-page")).wait_for()

    def pending(self, kind: str | None = None) -> Locator:
        """Pending-interrupt cards (of one shape: batched, tool_approval, form, approval_request)."""
        suffix = f'[data-kind="{kind}"]' if kind else ""
        return self.page.locator(f'[data-testid="interrupt-card"]{suffix}')

    def action(self, tool: str) -> Locator:
        """The card of one action of a pending batched request."""
        return self.page.locator(f'[data-testid="action-card"][data-tool="{tool}"]')

    def receipts(self, tool: str | None = None) -> Locator:
        """Resolved (read-only) cards, one per decided action."""
        suffix = f'[data-tool="{tool}"]' if tool else ""
        return self.page.locator(f'[data-testid="receipt-card"]{suffix}')

    def messages(self, role: str) -> Locator:
        """The conversation's messages of one role (human, ai, tool)."""
        return self.page.locator(f'[data-testid="message"][data-role="{role}"]')

    def tool_result(self, tool: str) -> Locator:
        """What `tool` returned (or the refusal it got), inside its collapsed call or its subagent's task."""
        return self.page.locator(f'[data-testid="tool-result"][data-tool="{tool}"]')

    def tool_call(self, tool: str) -> Locator:
        """The conversation's one-line (collapsed) calls of `tool`."""
        return self.page.locator(f'[data-testid="tool-call"][data-tool="{tool}"]')

    def subagent(self, name: str) -> Locator:
        """A subagent's work in the conversation: its task, the decisions on its calls, its report."""
        return self.page.locator(f'[data-testid="subagent-task"][data-subagent="{name}"]')

    @staticmethod
    def arg(card: Locator, name: str) -> Locator:
        """The value cell of one argument in a card's args table."""
        return card.locator(f'[data-testid="arg"][data-name="{name}"] td')

    def audit(self, outcome: str | None = None) -> Locator:
        """Entries of the thread's audit panel (accepted, refused, failed)."""
        suffix = f'[data-outcome="{outcome}"]' if outcome else ""
        return self.page.locator(f'[data-testid="audit-record"]{suffix}')

    def inbox_rows(self, thread_id: str) -> Locator:
        """Inbox rows of one thread."""
        return self.page.locator(f'[data-testid="inbox-row"][data-thread-id="{thread_id}"]')


@dataclass
class ReviewerApp:
    """The app at `url`: each signed-in user gets a browser context (and sessionStorage) of their own."""

    browser: Browser
    url: str
    tokens: dict[str, str]
    contexts: list[BrowserContext]
    wait_ms: float
    tabs: list[Tab] = field(default_factory=list)

    async def open_signed_out(self, user: str = "nobody", width: int = 1280) -> Tab:
        """A new tab (browser context of its own, `width` pixels wide) on the app's sign-in page."""
        context = await self.browser.new_context(viewport={"width": width, "height": 900})
        context.set_default_timeout(self.wait_ms)
        self.contexts.append(context)
        page = await context.new_page()
        tab = Tab(user=user, page=page, url=self.url)
        self.tabs.append(tab)
        await page.goto(self.url)
        await page.get_by_test_id("signin-page").wait_for()
        return tab

    async def signed_in(self, user: str) -> Tab:
        """A new tab (browser context of its own) already holding `user`'s token, on no page yet.

        For tests that open many threads as many people: the sign-in page itself is `sign_in`'s.
        """
        context = await self.browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(self.wait_ms)
        self.contexts.append(context)
        token = json.dumps(self.tokens[user])
        await context.add_init_script(f"window.sessionStorage.setItem({json.dumps(TOKEN_KEY)}, {token});")
        tab = Tab(user=user, page=await context.new_page(), url=self.url)
        self.tabs.append(tab)
        return tab

    async def sign_in(self, user: str, width: int = 1280) -> Tab:
        """A new tab where `user` signed in by typing their token; it shows the inbox."""
        tab = await self.open_signed_out(user, width)
        await tab.page.get_by_test_id("signin-token").fill(self.tokens[user])
        await tab.page.get_by_test_id("signin-submit").click()
        await tab.page.get_by_test_id("inbox-page").wait_for()
        return tab
