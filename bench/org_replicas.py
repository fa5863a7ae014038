"""One replica of the bench's replica set seen from outside: start-up, memory, inbox pages, watcher passes.

What `bench.org_scale` measures at 0 and at 100,000 pending, each the same way: the time from
starting a replica process to its first served `GET /inbox` page, its resident memory then, the
first page against a bare `threads.search` on the same replica, and the CPU of the watcher's
passes (the server's `hitl_watcher_pass_seconds{clock="cpu"}`) while nothing changes.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client

from bench.paused_graph import GRAPH_ID
from bench.probes import cpu_seconds, resident_bytes
from bench.served import repo_config, server_env
from server.runtime.replicas import CONFIG, ReplicaSet
from tests.devserver import DEV_TOKENS, dev_users

if TYPE_CHECKING:
    from pathlib import Path

    from langgraph_sdk.client import LangGraphClient

REVIEWER = "reviewer1"
"""Who reads the inbox and the bare search: a reviewer, who may decide every bench approval."""
REQUESTER = "requester1"
"""Who asks for the bench approvals."""
STAFF = "supervisor1"
"""Who reads `/hitl/metrics` (staff only)."""
PAGE = 50
WATCH_INTERVAL = 2.0
"""Seconds between the bench replicas' watcher passes (10 by default): more passes per minute measured."""
SETTLE_TIMEOUT = 1800.0
PASS_TIMEOUT = 600.0
PASS_METRIC = re.compile(r'^hitl_watcher_pass_seconds_(sum|count)\{clock="cpu"\} (\S+)$', re.MULTILINE)
REPLICA_ENV = {
    "HITL_USERS": dev_users(),
    "HITL_DEV_MODE": "true",
    "MODEL": "scripted",
    "HITL_WATCH_INTERVAL": str(WATCH_INTERVAL),
}


def bench_config(directory: Path) -> Path:
    """The replicas' configuration plus the pausing graph, written into `directory`; its path.

    Raises:
        ValueError: when the replicas' configuration already serves a graph of that name.
    """
    config = json.loads(CONFIG.read_text())
    config["dependencies"] = [
        str(CONFIG.parent / dep) if dep == "." else dep for dep in config["dependencies"]
    ]
    graphs = config.setdefault("graphs", {})
    if GRAPH_ID in graphs or GRAPH_ID in repo_config().get("graphs", {}):
        msg = f"{CONFIG.name} already serves a graph {GRAPH_ID!r}; the benchmark needs that name"
        raise ValueError(msg)
    graphs[GRAPH_ID] = "bench.paused_graph:graph"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def replica_set(name: str, workdir: Path, redis_db: int) -> ReplicaSet:
    """A replica set serving the bench configuration, `bench` importable in every replica."""
    env = {**REPLICA_ENV, **server_env()}
    return ReplicaSet(name, workdir, redis_db=redis_db, env=env, config=bench_config(workdir))


def client_as(url: str, user: str) -> LangGraphClient:
    """A `langgraph-sdk` client on `url` acting as the dev user `user`."""
    return get_client(url=url, headers={"Authorization": f"Bearer {DEV_TOKENS[user]}"}, api_key=None)


@dataclass(frozen=True)
class Started:
    """One replica start: seconds to its first inbox page and its resident bytes then."""

    seconds: float
    rss_bytes: int
    listed: int
    """The inbox's `total` on that first page."""


async def first_inbox_page(client: LangGraphClient) -> dict[str, Any]:
    """`GET /inbox?limit=PAGE` as the client's user."""
    return await client.http.get("/inbox", params={"limit": PAGE})


async def start_one(replicas: ReplicaSet) -> Started:
    """Start one more replica; time from starting its process to its first served inbox page.

    `ReplicaSet.start` returns once `/ok` answers (polled every 0.3 s); the page is asked then.
    """
    started = time.perf_counter()
    (url,) = replicas.start(1)
    client = client_as(url, REVIEWER)
    try:
        page = await first_inbox_page(client)
    finally:
        await client.aclose()
    seconds = time.perf_counter() - started
    return Started(seconds, resident_bytes(replicas.processes[-1].pid), int(page["total"]))


async def settle(client: LangGraphClient, pending: int) -> float:
    """Seconds until the replica's inbox lists all `pending` approvals.

    Raises:
        RuntimeError: when it does not within `SETTLE_TIMEOUT`.
    """
    started = time.perf_counter()
    while (await client.http.get("/inbox", params={"limit": 1}))["total"] < pending:
        if time.perf_counter() - started > SETTLE_TIMEOUT:
            msg = f"/inbox did not list the {pending} pending approvals within {SETTLE_TIMEOUT:.0f} s"
            raise RuntimeError(msg)
        await asyncio.sleep(1.0)
    return time.perf_counter() - started


async def page_samples(url: str, repeats: int) -> dict[str, list[float]]:
    """Seconds per first page of `GET /inbox` and of a bare `threads.search`, `repeats` each, taking turns.

    Both as the reviewer on the same replica: the search is the stock way (status interrupted,
    oldest first, `PAGE` threads).
    """
    client = client_as(url, REVIEWER)
    samples: dict[str, list[float]] = {"ours": [], "reference": []}
    try:
        for i in range(repeats):
            for name in ("ours", "reference") if i % 2 == 0 else ("reference", "ours"):
                started = time.perf_counter()
                if name == "ours":
                    await first_inbox_page(client)
                else:
                    await client.threads.search(status="interrupted", limit=PAGE, sort_by="created_at")
                samples[name].append(time.perf_counter() - started)
    finally:
        await client.aclose()
    return samples


def pass_totals(exposition: str) -> tuple[float, int]:
    """The watcher's CPU seconds over all passes and the number of passes, from `/hitl/metrics` text."""
    found = {kind: float(value) for kind, value in PASS_METRIC.findall(exposition)}
    return found.get("sum", 0.0), int(found.get("count", 0.0))


async def watcher_passes(url: str, pid: int, passes: int) -> dict[str, float]:
    """CPU per watcher pass over the next `passes` passes of the replica at `url`, with nothing asked of it.

    `cpu_per_pass_s`: the server's own measure (process CPU during each pass, every thread's);
    `process_cpu_per_pass_s`: all the replica's CPU over the same window (its queue polls and
    heartbeats too) divided by the passes, an upper bound.

    Raises:
        RuntimeError: when the passes do not happen within `PASS_TIMEOUT`.
    """
    client = client_as(url, STAFF)
    try:
        cpu_before, count_before = pass_totals(await _metrics(client))
        process_before, started = cpu_seconds(pid), time.perf_counter()
        while True:
            await asyncio.sleep(WATCH_INTERVAL / 4)
            cpu_after, count_after = pass_totals(await _metrics(client))
            if count_after - count_before >= passes:
                break
            if time.perf_counter() - started > PASS_TIMEOUT:
                msg = f"{count_after - count_before} of {passes} watcher passes in {PASS_TIMEOUT:.0f} s"
                raise RuntimeError(msg)
        done = count_after - count_before
        return {
            "passes": done,
            "cpu_per_pass_s": (cpu_after - cpu_before) / done,
            "process_cpu_per_pass_s": (cpu_seconds(pid) - process_before) / done,
            "window_s": time.perf_counter() - started,
        }
    finally:
        await client.aclose()


async def _metrics(client: LangGraphClient) -> str:
    response = await client.http.client.get("/hitl/metrics")
    response.raise_for_status()
    return response.text
