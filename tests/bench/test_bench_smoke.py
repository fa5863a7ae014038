"""`make bench`'s harness, run end to end with tiny sizes: every section runs and every row is whole.

Benchmarks, not tests: nothing here depends on how long anything took.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.long, pytest.mark.timeout(900)]  # the fixture runs all of bench

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "cycles": "2",
    "warmup": "0",
    "concurrency": "[1]",
    "server-cycles-min": "2",
    "server-cycles-per-client": "1",
    "server-blocks": "1",
    "footprint-pending": "2",
    "inbox-sizes": "[5]",
    "inbox-repeats": "1",
    "inbox-queue-page": "2",
    "refused-writes": "20",
    "startup-runs": "1",
    "import-runs": "1",
    "replica-counts": "[1,2]",
    "replica-concurrency": "[2]",
    "replica-cycles-per-client": "1",
    "effect-samples": "1",
    "flush-wait": "0",
    "org-pending": "3",
    "org-table-rows": "200",
    "org-page-repeats": "2",
    "org-startup-runs": "1",
    "org-watcher-passes": "1",
    "mcp-cycles": "4",
    "mcp-questions": "1",
}
SECTIONS = {
    "in_process",
    "first_line",
    "server",
    "footprint",
    "inbox",
    "startup",
    "replicas",
    "org_scale",
    "mcp",
}
NO_REFERENCE = (" 200 rows", "a question's round trip")
"""Rows without a reference: the inbox table's (`inbox first page at 200 rows`), which the stock runtime
has no such table for, and an MCP question's round trip, which no agent without MCP has."""


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """`python -m bench` with tiny sizes, as `make bench` runs it; its exit and its two files."""
    out = tmp_path_factory.mktemp("bench")
    args = [arg for name, value in TINY.items() for arg in (f"--{name}", value)]
    done = subprocess.run(
        [sys.executable, "-m", "bench", *args, "--no-progress", "--out-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    results = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else None
    markdown = (out / "RESULTS.md").read_text() if (out / "RESULTS.md").exists() else ""
    return done, results, markdown


def test_every_section_runs_without_errors(tiny_run):
    """Exit 0, no section in `errors`, and each of the eight sections reported."""
    done, results, _ = tiny_run
    assert done.returncode == 0, done.stderr[-4000:]
    assert results["errors"] == {}
    assert set(results["sections"]) == SECTIONS


def test_every_row_has_ours_reference_ratio_and_limit(tiny_run):
    """Each row: ours and the reference (the inbox table has none), ratio = ours / reference, a limit."""
    _, results, _ = tiny_run
    rows = results["rows"]
    assert {row["section"] for row in rows} == SECTIONS
    for row in rows:
        assert isinstance(row["ours"], int | float), row
        if not any(marker in row["what"] for marker in NO_REFERENCE):
            assert isinstance(row["reference"], int | float), row
        if row["reference"]:
            assert row["ratio"] == pytest.approx(row["ours"] / row["reference"]), row
        assert row["limit"], row


def test_the_rows_cover_what_the_issue_asks(tiny_run):
    """In-process p50/p90, server latency and throughput, inbox, memory, disk, start-up, replicas."""
    _, results, _ = tiny_run
    whats = [row["what"] for row in results["rows"]]
    for expected in (
        "in-process approval cycle, p50",
        "in-process approval cycle, p90",
        "first-line reviewer's added latency, p50",
        "first-line reviewer's added latency, p90",
        "server cycle at concurrency 1, p50",
        "server cycle at concurrency 1, p90",
        "server throughput at concurrency 1",
        "inbox first page (50) with 5 pending",
        "inbox whole queue (pages of 2) with 5 pending",
        "inbox first page (50) after 20 refused writes, 5 pending",
        "server Python heap per pending approval",
        "server RSS per pending approval",
        "disk per pending approval",
        "server start to /ok",
        "graph import (fresh interpreter)",
        "approval throughput on 2 replicas at concurrency 2",
        "decision to effect, `make dev` (embedded), p50",
        "resume path, accept: sign the receipts (Ed25519, bound to the head), mean",
        "resume path, accept: read and lock the audit trail's head, mean",
        "decision to effect on 2 replicas, p50",
        "decision to effect on 2 replicas, p90",
        "inbox first page at 3 pending",
        "inbox first page at 200 rows",
        "inbox page half way down at 200 rows, as a supervisor",
        "replica start-up at 3 pending / at 0",
        "replica RSS at 3 pending / at 0",
        "watcher pass at 3 pending (CPU, nothing changed)",
        "gated call's approval cycle, p50",
        "a question's round trip (answer → next question or result), p50",
    ):
        assert expected in whats, whats
    listing = results["sections"]["inbox"]["details"]["pending_5"]["whole_queue"]
    assert {name: (q["items"], q["pages"]) for name, q in listing.items()} == {
        "ours": (5, 3),
        "reference": (5, 3),
    }


def test_results_md_shows_every_row_and_the_machine(tiny_run):
    """RESULTS.md: one table line per row, plus the machine, the versions and the date."""
    _, results, markdown = tiny_run
    for row in results["rows"]:
        assert f"| {row['what']} |" in markdown
    assert results["meta"]["date"] in markdown
    assert f"| cores | {results['meta']['machine']['cores']} |" in markdown
    assert f"| langgraph-api | {results['meta']['versions']['langgraph-api']} |" in markdown
