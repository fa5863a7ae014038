"""Inbox at scale: how long a reviewer waits for the first page, and for the whole queue.

`time_first_page` and `time_whole_queue` take any page-fetching callable, so each way of
listing pending approvals is one small function: `ours_inbox` (`GET /inbox`, when the server
has it) and the bare reference, `threads.search(status="interrupted")` paged by offset.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from langgraph_sdk.errors import NotFoundError

from bench import refused_writes
from bench.footprint import absolute_footprint
from bench.pending import fill_to, pending_count
from bench.probes import cpu_seconds
from bench.report import Row, Section
from bench.served import OURS
from bench.stats import median

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient
    from rich.progress import Progress

    from bench.sizes import BenchSizes
    from services.registry import Services
    from tests.devserver import DevServer

Cursor = Any
FetchPage = Callable[[Cursor | None], Awaitable[tuple[Sequence[Any], Cursor | None]]]
"""Given the cursor of a page (None for the first), return its items and the next cursor (None at the end)."""

DESIGN_SCALE = 10_000
"""The inbox target is set at this many pending approvals."""
SETTLE_TIMEOUT = 300.0
SETTLE_POLL = 0.1
QUIET_WINDOW = 2.0
QUIET_SHARE = 0.2

LIMIT = (
    "reference: the in-memory runtime filters and sorts every thread on each search; ours: `/inbox` "
    "serves from the layer's table by its indexes (a page costs its size; the page reads no thread "
    "again); the counts are kept with the rows in each write's transaction (`hitl_inbox_counts`), "
    "read per group"
)


@dataclass(frozen=True)
class QueueListing:
    """The whole queue, page after page: how long it took and what came back."""

    seconds: float
    pages: int
    items: int


async def time_first_page(fetch_page: FetchPage) -> float:
    """Seconds until `fetch_page` serves the first page: what a reviewer waits for."""
    started = time.perf_counter()
    await fetch_page(None)
    return time.perf_counter() - started


async def time_whole_queue(fetch_page: FetchPage) -> QueueListing:
    """Every page `fetch_page` serves, to the end of the queue."""
    started = time.perf_counter()
    items, cursor = await fetch_page(None)
    total, pages = len(items), 1
    while cursor is not None:
        items, cursor = await fetch_page(cursor)
        total, pages = total + len(items), pages + 1
    return QueueListing(time.perf_counter() - started, pages, total)


def bare_search(client: LangGraphClient, page_size: int) -> FetchPage:
    """The reference: `threads.search(status="interrupted")`, paged by offset."""

    async def fetch(offset: int | None) -> tuple[Sequence[Any], int | None]:
        start = offset or 0
        page = await client.threads.search(status="interrupted", limit=page_size, offset=start)
        return page, (start + len(page) if len(page) == page_size else None)

    return fetch


def ours_inbox(client: LangGraphClient, page_size: int) -> FetchPage:
    """Ours: `GET /inbox`, paged by its own cursor (`{"items", "next_cursor", "total"}`)."""

    async def fetch(cursor: str | None) -> tuple[Sequence[Any], str | None]:
        params: dict[str, str | int] = {"limit": page_size}
        if cursor:
            params["cursor"] = cursor
        page = await client.http.get("/inbox", params=params)
        return page["items"], page.get("next_cursor")

    return fetch


async def settle(client: LangGraphClient, server: DevServer, pending: int) -> float:
    """Seconds until `GET /inbox` lists all `pending` approvals and the server has gone quiet.

    Listed: the table holds a row for every new pause. Quiet: the server used under `QUIET_SHARE` of a
    core over `QUIET_WINDOW` seconds, so the last runs of the fill, the runtime's catching up
    (its flush of every thread to disk) and the watcher's re-read are not timed with the reads.

    Raises:
        RuntimeError: when that does not happen within `SETTLE_TIMEOUT`.
    """
    started = time.perf_counter()
    listed = False
    while True:
        if time.perf_counter() - started > SETTLE_TIMEOUT:
            msg = f"/inbox did not list the {pending} pending approvals quietly within {SETTLE_TIMEOUT:.0f} s"
            raise RuntimeError(msg)
        if not listed:
            listed = (await client.http.get("/inbox", params={"limit": 1}))["total"] == pending
            if not listed:
                await asyncio.sleep(SETTLE_POLL)
                continue
        used = cpu_seconds(server.process.pid)
        await asyncio.sleep(QUIET_WINDOW)
        if cpu_seconds(server.process.pid) - used < QUIET_SHARE * QUIET_WINDOW:
            return time.perf_counter() - started


async def has_inbox(client: LangGraphClient) -> bool:
    """Whether the server serves `GET /inbox` (the "ours" column stays empty until it does)."""
    try:
        await client.http.get("/inbox", params={"limit": 1})
    except NotFoundError:
        return False
    return True


async def measure(
    server: DevServer, client: LangGraphClient, services: Services, sizes: BenchSizes, progress: Progress
) -> Section:
    """Fill the server to each size in `sizes.inbox_sizes` and time every listing there."""
    section = Section(
        name="inbox",
        title="3. Inbox at scale",
        reference='a bare `threads.search(status="interrupted")` loop, paged by offset, as the bench user.',
    )
    readers: dict[str, Callable[[int], FetchPage]] = {"reference": lambda size: bare_search(client, size)}
    if await has_inbox(client):
        readers = {"ours": lambda size: ours_inbox(client, size), **readers}
    for size in sorted(sizes.inbox_sizes):
        rate = await fill_to(client, services, OURS, size, window=sizes.fill_window, progress=progress)
        pending = await pending_count(client)
        settled = await settle(client, server, pending) if "ours" in readers else None
        task = progress.add_task(f"inbox listings at {pending} pending", total=(sizes.inbox_repeats + 1) * 2)
        first: dict[str, list[float]] = {name: [] for name in readers}
        for _ in range(sizes.inbox_repeats):
            for name, reader in readers.items():
                first[name].append(await time_first_page(reader(sizes.inbox_page)))
                progress.advance(task)
        whole: dict[str, QueueListing] = {}
        for name, reader in readers.items():
            whole[name] = await time_whole_queue(reader(sizes.inbox_queue_page))
            progress.advance(task)
        first_ms = {name: median(samples) * 1000 for name, samples in first.items()}
        target = "≤ 20 ms and ≤ 0.5x" if size >= DESIGN_SCALE else ""
        section.rows += [
            Row(
                "inbox",
                f"inbox first page ({sizes.inbox_page}) with {pending} pending",
                "ms",
                first_ms.get("ours"),
                first_ms["reference"],
                LIMIT,
                target,
            ),
            Row(
                "inbox",
                f"inbox whole queue (pages of {sizes.inbox_queue_page}) with {pending} pending",
                "s",
                whole["ours"].seconds if "ours" in whole else None,
                whole["reference"].seconds,
                LIMIT,
            ),
        ]
        section.details[f"pending_{pending}"] = {
            "first_page_s": first,
            "whole_queue": {name: asdict(listing) for name, listing in whole.items()},
            "fill_pending_per_s": rate,
            "inbox_settle_s": settled,
            "server": absolute_footprint(server, pending),
        }
    if "ours" in readers and sizes.refused_writes:
        row, figures = await refused_writes.measure(
            server,
            client,
            pending,
            writes=sizes.refused_writes,
            page=sizes.inbox_page,
            repeats=sizes.inbox_repeats,
        )
        section.rows.append(row)
        section.details["refused_writes"] = figures
        section.notes.append(
            f"After the listings at the last size: the first page timed {sizes.inbox_repeats} times, then "
            f"{sizes.refused_writes:,} refused writes sent ({refused_writes.AT_ONCE} at a time: DELETEs of "
            "paused threads, 409, and another requester's PATCHes of them, 404), then the page timed again "
            "at once (`bench.refused_writes`; the answers' statuses in results.json)."
        )
    section.notes += [
        (
            "Pending approvals are real: the footprint batches (ours and stock), then ours until each "
            "size is reached, as fast as the server makes them (`bench.pending`; the rates are in "
            "results.json). The throughput rounds' threads are idle and also in the server."
        ),
        (
            f"First page: median of {sizes.inbox_repeats}, the two readers taking turns, once settled: "
            "from the end of the fill until `/inbox` lists every pending approval (the table's rows written "
            f"for the threads the runs marked) and the server then used under {QUIET_SHARE:g} of a core "
            f"over {QUIET_WINDOW:g} s (the fill's last runs and the runtime's flush to disk done); "
            "`inbox_settle_s` in results.json. "
            "Whole queue: one listing, page after page "
            "until the last; the item count is checked against the pending count in results.json."
        ),
        (
            "Ours: `GET /inbox` as the bench user (a supervisor, who may decide every pending "
            "approval); empty when the server has no `/inbox`."
        ),
    ]
    return section


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000
