"""Start-up: from launching `langgraph dev` to its first `/ok`, and the graph's import time.

Ours is the repository's `langgraph.json` as `make dev` serves it; the reference is a bare
configuration serving the stock agent alone. Imports run in fresh interpreters
(`python -c "import agents.support"` against `python -c "import bench.stock_agent"`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench.report import Row, Section
from bench.served import ROOT, serving, stock_only_config
from bench.stats import Latency, median

if TYPE_CHECKING:
    from rich.progress import Progress

    from bench.sizes import BenchSizes

OURS_MODULE = "agents.support"
STOCK_MODULE = "bench.stock_agent"
INTERPRETER_ONLY = "sys"
"""Imported too, to show what starting the interpreter alone costs."""


def seconds_to_ok(own_config: bool) -> float:  # noqa: FBT001  (ours or the reference)
    """Start a server (the repo's config, or the stock-only one) in a new folder; seconds until `/ok`."""
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        started = time.perf_counter()
        with serving(Path(tmp), None if own_config else stock_only_config()):
            return time.perf_counter() - started


def seconds_to_import(module: str) -> float:
    """Seconds for a fresh interpreter to import `module` (data in a throwaway folder).

    Raises:
        RuntimeError: when the import fails.
    """
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DATA_DIR": str(Path(tmp) / "data"),
            "MODEL": "scripted",
        }
        env.pop("OPENAI_API_KEY", None)
        started = time.perf_counter()
        done = subprocess.run(  # the module name is one of ours
            [sys.executable, "-c", f"import {module}"], cwd=tmp, env=env, capture_output=True, check=False
        )
        elapsed = time.perf_counter() - started
    if done.returncode != 0:
        msg = f"python -c 'import {module}' failed:\n{done.stderr.decode()[-2000:]}"
        raise RuntimeError(msg)
    return elapsed


def measure(sizes: BenchSizes, progress: Progress) -> Section:
    """Time `sizes.startup_runs` starts and `sizes.import_runs` imports of each, alternating."""
    starts: dict[bool, list[float]] = {True: [], False: []}
    task = progress.add_task("server starts", total=2 * sizes.startup_runs)
    for i in range(sizes.startup_runs):
        for own in (True, False) if i % 2 == 0 else (False, True):
            starts[own].append(seconds_to_ok(own))
            progress.advance(task)
    imports: dict[str, list[float]] = {OURS_MODULE: [], STOCK_MODULE: [], INTERPRETER_ONLY: []}
    task = progress.add_task("graph imports", total=3 * sizes.import_runs)
    for _ in range(sizes.import_runs):
        for module, samples in imports.items():
            samples.append(seconds_to_import(module))
            progress.advance(task)
    interpreter = median(imports.pop(INTERPRETER_ONLY))
    return Section(
        name="startup",
        title="5. Start-up",
        reference=(
            "a bare `langgraph.json` serving only the stock agent (no auth, no custom checkpointer); "
            '`python -c "import bench.stock_agent"` for the import.'
        ),
        rows=[
            Row(
                "startup",
                "server start to /ok",
                "s",
                median(starts[True]),
                median(starts[False]),
                "the launcher polls /ok every 0.3 s; importing langgraph-api, the graphs and auth; "
                "includes spawning the CLI",
            ),
            Row(
                "startup",
                "graph import (fresh interpreter)",
                "s",
                median(imports[OURS_MODULE]),
                median(imports[STOCK_MODULE]),
                f"importing deepagents and langchain; the interpreter alone takes {interpreter:.2f} s",
            ),
        ],
        details={
            "server_start_s": {
                "ours": Latency.of(starts[True]).as_dict(),
                "stock": Latency.of(starts[False]).as_dict(),
            },
            "import_s": {m: Latency.of(s).as_dict() for m, s in imports.items()},
            "interpreter_only_s": interpreter,
        },
        notes=[
            (
                "Each start in a new temporary folder, through `tests.devserver.start_dev_server` "
                "(the same launcher as the server tests); median of "
                f"{sizes.startup_runs} starts and of {sizes.import_runs} imports each, alternating."
            ),
            "The import builds the graph too (`graph = make_graph()` at module level).",
        ],
    )
