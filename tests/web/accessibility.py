"""axe-core in the page: the app's accessibility checked in real Chromium, offline.

axe-core comes from `web/node_modules` (a pinned dev dependency of the web app) and is injected
as a script; nothing is fetched from the network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.web.conftest import ROOT

if TYPE_CHECKING:
    from playwright.async_api import Page

AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = {"serious", "critical"}


async def axe_violations(page: Page, selector: str = "body") -> list[dict[str, Any]]:
    """axe's serious and critical violations inside `selector`, each with its rule, help and nodes."""
    if not await page.evaluate("typeof window.axe === 'object'"):
        await page.add_script_tag(content=AXE.read_text())
    result = await page.evaluate(
        """async (selector) => {
            const found = await axe.run(document.querySelector(selector), { resultTypes: ["violations"] });
            return found.violations.map((v) => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map((n) => n.html.slice(0, 200)),
            }));
        }""",
        selector,
    )
    return [v for v in result if v["impact"] in BLOCKING]


async def overflow(page: Page) -> dict[str, Any]:
    """How far the page and its buttons reach past the viewport's right edge (0: nothing does)."""
    return await page.evaluate(
        """() => {
            const width = document.documentElement.clientWidth;
            const buttons = [...document.querySelectorAll("button, a, input, select, textarea")]
              .filter((el) => el.offsetParent !== null)
              .map((el) => ({ html: el.outerHTML.slice(0, 120), right: el.getBoundingClientRect().right }))
              .filter((b) => b.right > width + 0.5);
            return { page: document.documentElement.scrollWidth - width, controls: buttons };
        }"""
    )
