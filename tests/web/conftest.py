"""The reviewer web app in real headless Chromium (Debian's `/usr/bin/chromium`) against the real server.

The server is a `langgraph dev` of the web tests' own (this module's `server`, which replaces the
session's for them), serving the built app at `/app/`: its inbox holds only what these tests left
pending, so a new row is on the inbox's first page (50 rows, oldest first). Each signed-in user
gets a browser context of their own (the token lives in the tab's sessionStorage); when a test
fails, every page it opened is saved as a screenshot under `test-artifacts/web/` (only then: the
full-page screenshots of every passing test were ~15 % of this folder's CPU).
"""

from __future__ import annotations

import re
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.async_api import async_playwright, expect

from tests.devserver import DevServer, dev_users, serving
from tests.mcp_lab.beside import mcp_beside
from tests.web.reviewer_app import ReviewerApp

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Generator, Iterator

    from playwright.async_api import Browser, BrowserContext

    from services.registry import Services

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 60_000
"""How long Playwright waits for something to appear: a run needs a worker, a model turn, a reply."""
CHROMIUM = Path("/usr/bin/chromium")
TOKENS = {name: token for name, _role, token in (e.split(":", 2) for e in dev_users().split(","))}
"""Every dev user of `.env.example` (the test servers' HITL_USERS) and the token that signs them in."""
ARTIFACTS = ROOT / "test-artifacts" / "web"
FAILED = pytest.StashKey[bool]()
"""Set on a test whose setup or call failed: its pages are saved when its `web` fixture ends."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Mark the test failed (`FAILED`) when its setup or call fails, before its fixtures end."""
    report = yield
    if report.failed:
        item.stash[FAILED] = True
    return report


@pytest.fixture(scope="session")
async def chromium() -> AsyncIterator[Browser]:
    """Debian's Chromium, headless; `make test` installs it when it is missing."""
    if not CHROMIUM.exists():  # noqa: ASYNC240  (one stat before the session's browser starts)
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs it (apt-get install chromium)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        expect.set_options(timeout=WAIT_MS)
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def reviewer_app(
    request, chromium: Browser, server_url: str, tokens: dict[str, str] | None = None
) -> AsyncIterator[ReviewerApp]:
    """The reviewer app served by `server_url`; every tab it opened is saved if the test failed.

    `tokens` signs people in by name (the dev users' by default; a server with more people adds theirs).
    """
    if not (ROOT / "web" / "dist" / "index.html").is_file():
        pytest.fail("web/dist is not built: `make test` builds it (or: cd web && npm ci && npm run build)")
    contexts: list[BrowserContext] = []
    app = ReviewerApp(chromium, f"{server_url}/app/", tokens or TOKENS, contexts, WAIT_MS)
    try:
        yield app
    finally:
        if request.node.stash.get(FAILED, False):
            await save_pages(request.node.name, app)
        for context in contexts:
            await context.close()


async def save_pages(test_name: str, app: ReviewerApp) -> None:
    """Each open tab as `<test>-<user>.png`, the last one opened (the final screen) as `<test>.png`."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^\w.-]+", "_", test_name)
    for index, tab in enumerate(app.tabs):
        last = index == len(app.tabs) - 1
        path = ARTIFACTS / (f"{name}.png" if last else f"{name}-{tab.user}.png")
        if not tab.page.is_closed():
            await tab.page.screenshot(path=str(path), full_page=True)


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> Iterator[DevServer]:
    """The web tests' own `langgraph dev` (it replaces the session's for every test in this folder).

    Beside it, the demo's billing MCP server (`tests.mcp_lab.beside`); it serves `langgraph.json`'s graphs only.
    """
    workdir = tmp_path_factory.mktemp("langgraph-dev-web")
    with mcp_beside(workdir, lab_agent=False) as beside, serving(workdir, beside.env, beside.config) as running:
        yield running


@pytest.fixture(scope="session")
def server_services(server) -> Services:
    """The business services behind the web tests' server."""
    return server.services


@pytest.fixture
async def web(request, chromium, server) -> AsyncIterator[ReviewerApp]:
    """The reviewer app at `<server>/app/`; `await web.sign_in("reviewer1")` opens a signed-in `Tab`.

    If the test failed, every tab is saved: the last one opened as `<test>.png` (the final screen),
    the others as `<test>-<user>.png`.
    """
    async with reviewer_app(request, chromium, server.url) as app:
        yield app
