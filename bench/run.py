"""Run every benchmark section in order, keep going past a failed one, and write the results.

In-process first (the approval cycle, the first-line reviewer), then one side-by-side server for
the throughput, footprint and inbox sections (in that order: the footprint batches are the first
pending approvals the inbox lists), then the start-up measurements with servers of their own,
then the replica sets, then the inbox at a million (`bench.org_scale`). `--only` runs some of
them and puts their results in place of the same sections' in the results already written.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench import (
    approval_cycle,
    first_line,
    footprint,
    inbox,
    mcp_cycles,
    org_scale,
    replicas,
    server_cycles,
    startup,
)
from bench.machine import load_average, machine, versions
from bench.report import Results, Section
from bench.served import bench_client, repo_config, serving, side_by_side_config

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from langgraph_sdk.client import LangGraphClient

    from bench.sizes import BenchSizes
    from tests.devserver import DevServer


SERVED = ("server", "footprint", "inbox")
"""The sections that share the side-by-side server."""


def run_benchmarks(sizes: BenchSizes) -> Results:
    """Measure everything `sizes` asks for; write RESULTS.md and results.json to `sizes.out_dir`."""
    started = time.perf_counter()
    results = Results(
        meta={
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": {**machine(), "load average at start": load_average()},
            "versions": versions(),
            "sizes": sizes.model_dump(mode="json", exclude={"progress", "out_dir"}),
        }
    )
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, disable=not sizes.progress) as progress:

        def section(name: str, measure: Callable[[], Section]) -> None:
            if not sizes.runs(name):
                return
            try:
                results.sections.append(measure())
            except Exception as error:  # noqa: BLE001  (a failed section is reported, the rest still runs)
                results.errors[name] = f"{type(error).__name__}: {error}"
                console.print(f"[red]{name} failed[/red]\n{traceback.format_exc()}")

        section("in_process", lambda: approval_cycle.measure(sizes, progress))
        section("first_line", lambda: first_line.measure(sizes, progress))
        if any(sizes.runs(name) for name in SERVED):
            _served(sizes, progress, section, results, console)
        section("startup", lambda: startup.measure(sizes, progress))
        section("replicas", lambda: replicas.measure(sizes, progress))
        section("org_scale", lambda: org_scale.measure(sizes, progress))
        section("mcp", lambda: mcp_cycles.measure(sizes, progress))

    results.meta["duration_s"] = time.perf_counter() - started
    results.meta["machine"]["load average at end"] = load_average()
    took = results.meta["duration_s"] / 60
    if sizes.only and (previous := Results.load(sizes.out_dir)) is not None:
        results = previous.with_rerun(results)
    results.write(sizes.out_dir)
    print(f"Wrote {sizes.out_dir / 'RESULTS.md'} in {took:.1f} min", file=sys.stderr)
    return results


def _served(
    sizes: BenchSizes,
    progress: Progress,
    section: Callable[[str, Callable[[], Section]], None],
    results: Results,
    console: Console,
) -> None:
    """The sections of the side-by-side server, which is started for them (a failed start is reported)."""
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        try:
            config = side_by_side_config(repo_config())
            with serving(Path(tmp), config) as server:
                for name, measure in _served_sections(server, sizes, progress).items():
                    section(name, measure)
        except (Exception, pytest.fail.Exception) as error:  # noqa: BLE001  (reported; the launcher fails the pytest way)
            for name in [n for n in SERVED if sizes.runs(n)]:
                results.errors.setdefault(name, f"the bench server did not run: {error}")
            console.print(f"[red]bench server failed[/red]\n{traceback.format_exc()}")


def _served_sections(
    server: DevServer, sizes: BenchSizes, progress: Progress
) -> dict[str, Callable[[], Section]]:
    """The sections that share the side-by-side server, each run in its own event loop."""
    services = server.services

    def in_loop(measure: Callable[[LangGraphClient], Awaitable[Section]]) -> Callable[[], Section]:
        async def with_client() -> Section:
            client = bench_client(server)
            try:
                return await measure(client)
            finally:
                await client.aclose()

        return lambda: asyncio.run(with_client())

    return {
        "server": in_loop(lambda client: server_cycles.measure(client, services, sizes, progress)),
        "footprint": in_loop(lambda client: footprint.measure(server, client, services, sizes, progress)),
        "inbox": in_loop(lambda client: inbox.measure(server, client, services, sizes, progress)),
    }
