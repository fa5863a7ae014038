"""Metrics and analytics through the real server: who may read them, and that they follow a refund cycle."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from agents.offline import phrases
from server.http.outgoing import tls
from server.insight.analytics_query import Thresholds
from tests.devserver import DEV_TOKENS, DevServer, serving
from tests.server.helpers import APPROVE, decisions, refused, start

if TYPE_CHECKING:
    from collections.abc import Iterator

    from services.registry import Services

QUICK_SECONDS = Thresholds().quick_seconds

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]
HITL = Path(sys.executable).parent / "hitl"
"""Whether server/records/audit.py's `write` passes its records to `server.insight.metrics.observe` yet."""
REFUND = {"agent": "support", "tool": "issue_refund"}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[DevServer]:
    """This module's own `langgraph dev`: the counters move only with what these tests do.

    On the session's server, pauses other tests left behind are counted on the watcher's passes
    at any moment, so a counter could move between two reads of one test.
    """
    with serving(tmp_path_factory.mktemp("observability")) as running:
        yield running


@pytest.fixture(scope="module")
def server_services(server) -> Services:
    """The business services behind this module's server."""
    return server.services


def http(server, user: str | None) -> httpx.AsyncClient:
    token = {"Authorization": f"Bearer {DEV_TOKENS[user]}"} if user else {}
    return httpx.AsyncClient(base_url=server.url, headers=token, timeout=60, verify=tls())


async def samples(server) -> dict[tuple[str, frozenset], float]:
    """Every sample of GET /hitl/metrics, read as a reviewer."""
    async with http(server, "reviewer1") as client:
        answer = await client.get("/hitl/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def sample(found, name, **labels) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


@pytest.mark.parametrize("path", ["/hitl/metrics", "/analytics", "/analytics?since=7d"])
async def test_metrics_and_analytics_are_for_reviewers_and_supervisors(server, path):
    """access: no token 401, a requester 403, a reviewer and a supervisor 200; bad params 400 naming them."""
    statuses = {}
    for user in (None, "requester1", "requester2", "reviewer1", "supervisor1"):
        async with http(server, user) as client:
            statuses[user] = (await client.get(path)).status_code
    assert statuses == {None: 401, "requester1": 403, "requester2": 403, "reviewer1": 200, "supervisor1": 200}
    async with http(server, "reviewer1") as client:
        bad = await client.get("/analytics", params={"since": "yesterday-ish"})
        backwards = await client.get("/analytics", params={"since": "2026-01-02", "until": "2026-01-01"})
        me = await client.get("/me")
    assert bad.status_code == 400
    assert "since must be an ISO 8601 time" in bad.json()["detail"]
    assert backwards.status_code == 400
    assert "since must be before until" in backwards.json()["detail"]
    assert me.json() == {
        "identity": "reviewer1",
        "role": "reviewer",
        "decides_as": ["reviewer"],
        "staff": True,
    }


async def test_a_refund_cycle_moves_the_metrics_and_the_analytics(
    server, requester, supervisor, server_order
):
    """refund of 899: pending +1 then back, requested +1, one gate pause timed; analytics count it.

    A requester's attempt to approve is refused (403) and counted as refused.
    """
    since = datetime.now(UTC).isoformat()
    before = await samples(server)
    pending = ("hitl_approvals_pending", {"tool": "issue_refund", "required_role": "supervisor"})
    requested = ("hitl_approvals_requested_total", {**REFUND, "required_role": "supervisor"})
    decided = ("hitl_approvals_decided_total", {**REFUND, "decision": "approve", "role": "supervisor"})

    thread_id, _ = await start(requester, phrases.refund_in_full(server_order(899)))
    paused_at = time.monotonic()
    waiting = await samples(server)
    assert sample(waiting, pending[0], **pending[1]) == sample(before, pending[0], **pending[1]) + 1
    paused = ("hitl_gate_seconds_count", {"phase": "pause"})
    assert sample(waiting, paused[0], **paused[1]) == sample(before, paused[0], **paused[1]) + 1
    for _ in range(40):  # the watcher's leader counts new pauses on its passes (HITL_WATCH_INTERVAL, 10 s)
        if sample(waiting, requested[0], **requested[1]) > sample(before, requested[0], **requested[1]):
            break
        await asyncio.sleep(1)
        waiting = await samples(server)
    assert sample(waiting, requested[0], **requested[1]) == sample(before, requested[0], **requested[1]) + 1
    with refused(403, "may not answer"):
        await requester.runs.wait(thread_id, "support", command=decisions(APPROVE))
    # Decided after the analytics' quick-approval window, however fast the watcher counted the pause.
    await asyncio.sleep(max(1.0, QUICK_SECONDS + 0.5 - (time.monotonic() - paused_at)))
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))

    after = await samples(server)
    assert sample(after, pending[0], **pending[1]) == sample(before, pending[0], **pending[1])
    for part in ("check", "accept", "audit_head", "claim", "sign", "seal", "audit_append"):  # timed apart
        counted = ("hitl_gate_seconds_count", {"phase": f"resume.{part}"})
        assert sample(after, counted[0], **counted[1]) >= sample(waiting, counted[0], **counted[1]) + 1, part
    assert sample(after, requested[0], **requested[1]) == sample(waiting, requested[0], **requested[1])

    async with http(server, "reviewer1") as client:
        answer = await client.get("/analytics", params={"since": since, **REFUND})
    assert answer.status_code == 200, answer.text
    summary = answer.json()
    totals = summary["totals"]
    assert (totals["decisions"], totals["timed"], totals["refused"]) == (1, 1, 1)
    assert totals["counts"]["approve"] == 1
    assert 1.0 <= totals["median_seconds"] == totals["p90_seconds"] < 60
    (tool,) = summary["by_tool"]
    assert (tool["tool"], tool["decisions"], tool["rates"]["approve"]) == ("issue_refund", 1, 1.0)
    (reviewer,) = summary["by_reviewer"]
    assert (reviewer["reviewer"], reviewer["decisions"], reviewer["quick_approvals"]) == ("supervisor1", 1, 0)
    assert summary["by_agent"][0]["agent"] == "support"

    assert sample(after, decided[0], **decided[1]) == sample(before, decided[0], **decided[1]) + 1
    timed = ("hitl_approval_decision_seconds_count", REFUND)
    assert sample(after, timed[0], **timed[1]) == sample(before, timed[0], **timed[1]) + 1
    refusals = ("hitl_resumes_refused_total", {"status": "403"})
    assert sample(after, refusals[0], **refusals[1]) == sample(before, refusals[0], **refusals[1]) + 1


def test_hitl_stats_prints_the_same_summary(server):
    """hitl stats: the CLI prints the analytics as tables (and JSON with --json); a requester is told 403."""
    command = [str(HITL), "stats", "--url", server.url, "--since", "1d"]
    shown = subprocess.run(
        [*command, "--token", DEV_TOKENS["supervisor1"]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "decisions from" in shown.stdout
    assert "By tool" in shown.stdout
    assert "By reviewer" in shown.stdout
    denied = subprocess.run(
        [*command, "--token", DEV_TOKENS["requester1"]], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert denied.returncode == 1
    assert "403" in denied.stderr


def test_the_server_freezes_its_startup_heap_once_the_graphs_are_loaded(server: DevServer) -> None:
    """Full garbage collections walk what requests made, not the graphs and libraries (`startup_heap`)."""
    said = re.findall(r"startup heap: (\d+) objects frozen", server.log.read_text())
    assert len(said) == 1
    assert int(said[0]) > 100_000  # LangChain, LangGraph, pydantic and the compiled graphs
