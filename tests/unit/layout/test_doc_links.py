"""The documentation holds together: every relative link in README.md and docs/ reaches a file and a heading.

README.md is the landing page and docs/ is split by reader, so a section moved from one page to
another breaks the links that named it; this finds them. Anchors are GitHub's: the heading in
lowercase, punctuation but `-` and `_` dropped, spaces as `-`. Links to the web are not followed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / "web" / "README.md"])
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of `page` (code blocks left out)."""
    text = FENCE.sub("", page.read_text())
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in HEADING.findall(text)}


def links(page: Path) -> list[str]:
    """The relative links of `page`, outside code blocks."""
    return [
        link
        for link in LINK.findall(FENCE.sub("", page.read_text()))
        if not link.startswith(("http://", "https://", "mailto:"))
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_its_heading(page):
    """each `[text](path#anchor)` names a file that exists and, with an anchor, a heading of that file."""
    broken = []
    for link in links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{link}: no heading #{anchor} in {target.relative_to(ROOT)}")
    assert broken == []


def test_the_readme_is_a_landing_page():
    """README.md stays about 200 lines and sends each reader to their page of docs/."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 220
    for page in ("agents", "reviewing", "operating", "security", "benchmarks"):
        assert f"(docs/{page}.md)" in readme, page
