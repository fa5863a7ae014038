"""An inbox that holds a million (issue 50): the inbox, start-up, memory and watcher at 100,000 pending.

On the replica set (`server.runtime.replicas.ReplicaSet`, the bench's own configuration serving
`bench.paused_graph` beside the agents), everything is measured twice the same way: on an empty
set, and on a set filled with real pending approvals (`bench.paused_fill`). The 1,000,000-row
query is `bench.inbox_table_scale`'s. `python -m bench --only org_scale` runs this section alone.
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg

from bench import inbox_table_scale
from bench.org_replicas import (
    REQUESTER,
    REVIEWER,
    WATCH_INTERVAL,
    Started,
    client_as,
    page_samples,
    replica_set,
    settle,
    start_one,
    watcher_passes,
)
from bench.paused_fill import fill_paused, interrupted
from bench.report import Row, Section
from bench.stats import median, tail_summary

if TYPE_CHECKING:
    from rich.progress import Progress

    from bench.sizes import BenchSizes
    from server.runtime.replicas import ReplicaSet

DATABASES = "bench_org"
"""Prefix of the sets' databases (`bench_org_<random>_runtime`, ...), dropped after unless kept."""
REDIS_DB = 12
"""A Redis database of this section's own (the replica section uses 13, the tests 0)."""
FILL_REPLICAS = 2
FILL_WINDOW = 200
FILL_ENV = {"HITL_WATCH_INTERVAL": "3600", "PG_POOL_SIZE": "4", "PG_MAX_OVERFLOW": "4"}
"""The fill's replicas pass rarely (the fill makes approvals, it does not measure the watcher) and keep
small pools (PostgreSQL's 100 connections are shared with whatever else runs on the machine)."""
KEPT_NAME = "name"
"""The file in a kept set's folder holding its databases' prefix."""

PAGE_TARGET = "p95 ≤ 20 ms"
RATIO_TARGET = "≤ 1.2x"
WATCHER_TARGET = "≤ 50 ms CPU"
PAGE_LIMIT = (
    "ours: the layer's inbox query for the reviewer's groups plus the page's JSON; reference: the "
    "runtime's thread search, filtered by the auth handler, sorting the interrupted threads"
)
START_LIMIT = "the replica's imports and pools, then whatever its first inbox page must read first"
RSS_LIMIT = (
    "a Python process with langgraph-api and the layer, plus what the inbox keeps in memory per pending"
)
WATCHER_LIMIT = (
    "what a pass reads when nothing changed: the runtime's changes since the last pass, its leases"
)


def kept_name(folder: Path) -> str:
    """The databases' prefix of the set kept in `folder` (a new one, written there, the first time)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / KEPT_NAME
    if not path.exists():
        path.write_text(f"{DATABASES}_{secrets.token_hex(3)}")
    return path.read_text().strip()


async def at_size(
    replicas: ReplicaSet, pending: int, sizes: BenchSizes, progress: Progress
) -> dict[str, Any]:
    """Start-ups, memory, first pages and watcher passes of one replica, on a set holding `pending`."""
    starts: list[Started] = []
    task = progress.add_task(f"replica starts at {pending} pending", total=sizes.org_startup_runs)
    for _ in range(sizes.org_startup_runs):
        replicas.stop()
        starts.append(await start_one(replicas))
        progress.advance(task)
    url, pid = replicas.urls[-1], replicas.processes[-1].pid
    reviewer = client_as(url, REVIEWER)
    try:
        settled = await settle(reviewer, pending)
    finally:
        await reviewer.aclose()
    await watcher_passes(url, pid, 2)  # the passes that read what the start found: not "nothing changed"
    passes = await watcher_passes(url, pid, sizes.org_watcher_passes)
    unanalyzed = await page_samples(url, sizes.org_page_repeats)
    await asyncio.to_thread(analyze, replicas)
    pages = await page_samples(url, sizes.org_page_repeats)
    replicas.stop()
    return {
        "pending": pending,
        "autovacuum": await asyncio.to_thread(autovacuum, replicas),
        "first_page_before_analyze_s": {name: tail_summary(samples) for name, samples in unanalyzed.items()},
        "starts": [vars(s) for s in starts],
        "settle_s": settled,
        "watcher": passes,
        "first_page_s": {name: tail_summary(samples) for name, samples in pages.items()},
    }


def analyze(replicas: ReplicaSet) -> None:
    """`ANALYZE` the runtime's and the layer's databases: the statistics autovacuum would have made."""
    runtime, _, layer = replicas.databases()
    for database in (runtime, layer):
        with psycopg.connect(f"{replicas.postgres}/{database}", autocommit=True) as conn:
            conn.execute("ANALYZE")


def autovacuum(replicas: ReplicaSet) -> str:
    """PostgreSQL's `autovacuum` setting (`on` or `off`)."""
    with psycopg.connect(f"{replicas.postgres}/postgres", autocommit=True) as conn:
        return str(conn.execute("SHOW autovacuum").fetchone()[0])  # type: ignore[index]


async def empty_set(workdir: Path, sizes: BenchSizes, progress: Progress) -> dict[str, Any]:
    """The measurements on a fresh, empty set (its schema made by an untimed first start)."""
    replicas = replica_set(f"{DATABASES}_{secrets.token_hex(3)}", workdir, REDIS_DB)
    replicas.create_databases(fresh=True)
    try:
        replicas.start(1)
        return await at_size(replicas, 0, sizes, progress)
    finally:
        replicas.stop()
        replicas.drop_databases()


async def filled_set(workdir: Path, name: str, sizes: BenchSizes, progress: Progress) -> dict[str, Any]:
    """Fill a set to `sizes.org_pending` (what it lacks, if kept) and measure it there."""
    replicas = replica_set(name, workdir, REDIS_DB)
    measuring = replicas.env
    replicas.env = {**measuring, **FILL_ENV}
    replicas.create_databases()
    try:
        replicas.start(FILL_REPLICAS)
        clients = [client_as(url, REQUESTER) for url in replicas.urls]
        try:
            fill = await fill_paused(
                clients,
                sizes.org_pending,
                window=FILL_WINDOW,
                progress=progress,
                minutes=sizes.org_fill_minutes,
            )
            pending = await interrupted(clients[0])
        finally:
            for client in clients:
                await client.aclose()
        replicas.stop()
        replicas.env = measuring
        found = await at_size(replicas, pending, sizes, progress)
    finally:
        replicas.stop()
    return {**found, "fill": {**vars(fill), "per_s": fill.per_second}}


def measure(sizes: BenchSizes, progress: Progress) -> Section:
    """Every row of issue 50: the replica set empty and filled, and the inbox table at a million rows."""
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-org-")))
        kept = sizes.org_keep
        name = kept_name(kept) if kept else f"{DATABASES}_{secrets.token_hex(3)}"
        empty = asyncio.run(empty_set(tmp / "empty", sizes, progress))
        try:
            filled = asyncio.run(filled_set(kept or tmp / "filled", name, sizes, progress))
        finally:
            if kept is None:
                replica_set(name, tmp / "filled", REDIS_DB).drop_databases()
    table = inbox_table_scale.measure(sizes.org_table_rows, sizes.org_page_repeats, sizes.out_dir, progress)
    return section_of(empty, filled, table, sizes)


def section_of(
    empty: dict[str, Any], filled: dict[str, Any], table: dict[str, Any], sizes: BenchSizes
) -> Section:
    """The rows, details and notes of what was measured."""
    pending = filled["pending"]
    at = f"{pending:,}"
    pages = filled["first_page_s"]
    section = Section(
        name="org_scale",
        title="7. An inbox that holds a million",
        reference=(
            'inbox pages: a bare `threads.search(status="interrupted", limit=50, sort_by="created_at")` '
            "on the same replica as the same reviewer; start-up, memory and watcher: the same replica "
            "on an empty set."
        ),
        details={"empty": empty, "filled": filled, "table": table},
    )
    start_0 = median([s["seconds"] for s in empty["starts"]])
    start_n = median([s["seconds"] for s in filled["starts"]])
    rss_0 = median([s["rss_bytes"] for s in empty["starts"]]) / 2**20
    rss_n = median([s["rss_bytes"] for s in filled["starts"]]) / 2**20
    section.rows += [
        Row(
            "org_scale",
            f"inbox first page at {at} pending",
            "ms",
            pages["ours"]["p95"] * 1000,
            pages["reference"]["p95"] * 1000,
            PAGE_LIMIT,
            PAGE_TARGET,
        ),
        Row(
            "org_scale",
            f"inbox first page at {at} pending, p50",
            "ms",
            pages["ours"]["p50"] * 1000,
            pages["reference"]["p50"] * 1000,
            PAGE_LIMIT,
        ),
        *inbox_table_scale.rows(table, PAGE_TARGET),
        Row(
            "org_scale",
            f"replica start-up at {at} pending / at 0",
            "s",
            start_n,
            start_0,
            START_LIMIT,
            RATIO_TARGET,
        ),
        Row("org_scale", f"replica RSS at {at} pending / at 0", "MB", rss_n, rss_0, RSS_LIMIT, RATIO_TARGET),
        Row(
            "org_scale",
            f"watcher pass at {at} pending (CPU, nothing changed)",
            "ms",
            filled["watcher"]["cpu_per_pass_s"] * 1000,
            empty["watcher"]["cpu_per_pass_s"] * 1000,
            WATCHER_LIMIT,
            WATCHER_TARGET,
        ),
    ]
    fill = filled["fill"]
    before = filled["first_page_before_analyze_s"]
    section.notes += [
        (
            f"Pending approvals: {pending:,} real runs of the bench-only graph `bench_pause` "
            "(`bench.paused_graph`: one node that interrupts with the gate's per-call approval value, a "
            "reviewer to decide), served only by the bench's copy of `langgraph.replicas.json`; made on "
            f"{FILL_REPLICAS} replicas, {FILL_WINDOW} runs in flight, their watchers idle: {fill['added']:,} "
            f"added in this run in {fill['seconds'] / 60:.1f} min ({fill['per_s']:.1f}/s)"
            + (
                "."
                if fill["added"] >= pending
                else f", the other {pending - fill['added']:,} kept from earlier fills (`--org-keep`)."
            )
            + (
                ""
                if pending >= sizes.org_pending
                else f" Fewer than the {sizes.org_pending:,} asked for: the fill stops after "
                f"{sizes.org_fill_minutes or 0:g} min (`--org-fill-minutes`)."
            )
        ),
        (
            "Start-up: from starting one replica process (`ReplicaSet.start`, which polls `/ok` every "
            f"0.3 s) to its first `GET /inbox?limit=50` answered, as {REVIEWER}; median of "
            f"{sizes.org_startup_runs} starts, the other replicas stopped; RSS: the replica's process "
            "tree (VmRSS) just after that page. The empty set's schema was made by an untimed start first."
        ),
        (
            f"First page: {sizes.org_page_repeats} each, taking turns, once the replica's inbox listed "
            f"every pending approval ({filled['settle_s']:.0f} s after its start), after `ANALYZE` of the "
            f"runtime's and the layer's databases: this PostgreSQL runs with autovacuum "
            f"{filled['autovacuum']}, and a table never analyzed is planned as nearly empty (before it: "
            f"ours p50 {before['ours']['p50'] * 1000:.1f} ms, p95 {before['ours']['p95'] * 1000:.1f} ms; "
            f"the search p50 {before['reference']['p50'] * 1000:.1f} ms, p95 "
            f"{before['reference']['p95'] * 1000:.1f} ms)."
        ),
        (
            f'Watcher: the server\'s `hitl_watcher_pass_seconds{{clock="cpu"}}` (process CPU during a '
            f"pass, every thread's) over {sizes.org_watcher_passes} passes {WATCH_INTERVAL:g} s apart, "
            "after two passes that read what the start found, with nothing asked of the replica but "
            "`/hitl/metrics`; the whole process's CPU per pass over the same window is "
            f"{filled['watcher']['process_cpu_per_pass_s'] * 1000:.0f} ms (empty set: "
            f"{empty['watcher']['process_cpu_per_pass_s'] * 1000:.0f} ms)."
        ),
        *inbox_table_scale.notes(table),
    ]
    return section
