"""An inbox page under a flood of refused writes (issue 54.3): it costs its own size whatever others send.

Times the first page of `GET /inbox` as the bench user, then sends refused writes through the
server (DELETEs of paused threads, 409: they hold a pending approval; PATCHes of those threads by
another requester, 404), then times the same page again at once, within the time a mark of
the old design kept a refused thread re-read on every page (120 s). Part of section 3.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from bench.report import Row
from bench.served import BENCH_USER
from bench.stats import median
from server.http.outgoing import tls
from tests.devserver import DEV_TOKENS

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

    from tests.devserver import DevServer

OTHER_REQUESTER = "requester2"
"""Who PATCHes the bench user's threads (the engine answers 404: they are not theirs)."""
AT_ONCE = 8
TARGETS = 50
"""Paused threads the writes are spread over (each a thread the old design kept marked)."""
LIMIT = (
    "ours after the flood: the table's page query only (a refused write marks nothing, and a page "
    "re-reads no thread); reference: the same page just before the flood"
)


@dataclass(frozen=True)
class Flood:
    """What the refused writes were answered, and how long sending them took."""

    statuses: dict[int, int]
    seconds: float


async def first_page_ms(client: LangGraphClient, page: int, repeats: int) -> list[float]:
    """`repeats` timings of the inbox's first page of `page` items, in ms."""
    found = []
    for _ in range(repeats):
        started = time.perf_counter()
        await client.http.get("/inbox", params={"limit": page})
        found.append((time.perf_counter() - started) * 1000)
    return found


async def flood(server: DevServer, client: LangGraphClient, writes: int) -> Flood:
    """`writes` refused writes on the bench user's paused threads, half DELETEs and half others' PATCHes."""
    page = await client.threads.search(status="interrupted", limit=TARGETS)
    targets = [str(thread["thread_id"]) for thread in page]
    if not targets:
        msg = "no paused thread to send refused writes to"
        raise RuntimeError(msg)
    slots = asyncio.Semaphore(AT_ONCE)
    statuses: dict[int, int] = {}
    started = time.perf_counter()
    async with (
        client_as(server, BENCH_USER) as owner,
        client_as(server, OTHER_REQUESTER) as other,
    ):

        async def write(n: int) -> None:
            thread_id = targets[n % len(targets)]
            async with slots:
                if n % 2:
                    answer = await other.patch(f"/threads/{thread_id}", json={"metadata": {"topic": f"{n}"}})
                else:
                    answer = await owner.delete(f"/threads/{thread_id}")
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1

        await asyncio.gather(*(write(n) for n in range(writes)))
    return Flood(dict(sorted(statuses.items())), time.perf_counter() - started)


def client_as(server: DevServer, user: str) -> httpx.AsyncClient:
    """A plain HTTP client acting as the dev user `user` (the refusals are answers, not errors)."""
    token = {"Authorization": f"Bearer {DEV_TOKENS[user]}"}
    return httpx.AsyncClient(base_url=server.url, headers=token, timeout=120, verify=tls())


async def measure(  # noqa: PLR0913  (one measurement, fully described)
    server: DevServer, client: LangGraphClient, pending: int, *, writes: int, page: int, repeats: int
) -> tuple[Row, dict[str, object]]:
    """The row "inbox first page after N refused writes" (ours: after; reference: before) and its figures.

    Raises:
        RuntimeError: when a write was not refused (the flood would have changed the queue).
    """
    before = await first_page_ms(client, page, repeats)
    sent = await flood(server, client, writes)
    after = await first_page_ms(client, page, repeats)
    if set(sent.statuses) - {404, 409}:
        msg = f"refused writes were answered {sent.statuses}, not only 404 and 409"
        raise RuntimeError(msg)
    row = Row(
        "inbox",
        f"inbox first page ({page}) after {writes:,} refused writes, {pending} pending",
        "ms",
        median(after),
        median(before),
        LIMIT,
        "≤ 1.2x",
    )
    return row, {"before_ms": before, "after_ms": after, "statuses": sent.statuses, "flood_s": sent.seconds}
