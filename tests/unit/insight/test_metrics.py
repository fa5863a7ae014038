"""Prometheus metrics: decisions and refusals counted from audit records, notices by outcome."""

from __future__ import annotations

import asyncio
import types

import pytest

from hitl.settings import Settings
from server.channels import delivery
from server.coordination import outbox
from server.insight import metrics
from server.insight.metrics import REGISTRY, observe, refusal_status
from server.ledger import storage
from server.runtime.replicas import free_port
from services.database import connect
from tests.notices import Receiver


def value(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


def decision(tool, decision_type, reviewer="reviewer1", roles=("reviewer",)):
    return {
        "thread_id": "t-metrics",
        "interrupt_id": "i-metrics",
        "agent": "support",
        "tool": tool,
        "decision": decision_type,
        "reviewer": reviewer,
        "roles": list(roles),
        "decided_at": "2026-11-02T10:00:00+00:00",
        "outcome": "accepted",
    }


def test_decisions_are_counted_by_agent_tool_decision_and_role():
    """observe: an approve by a supervisor and an expiry (system) move their own counters only."""
    sup = {"agent": "support", "tool": "metrics_tool", "decision": "approve", "role": "supervisor"}
    system = {**sup, "decision": "reject", "role": "system"}
    before = value("hitl_approvals_decided_total", **sup), value("hitl_approvals_decided_total", **system)
    observe(
        [
            decision("metrics_tool", "approve", "supervisor1", ("reviewer", "supervisor")),
            decision("metrics_tool", "reject", "system", ()),
            decision("metrics_tool", "escalated", "system", ()),  # counted by the watcher, not here
            decision("metrics_tool", "allow"),
        ]
    )
    after = value("hitl_approvals_decided_total", **sup), value("hitl_approvals_decided_total", **system)
    assert (after[0] - before[0], after[1] - before[1]) == (1, 1)
    assert value("hitl_approvals_decided_total", **{**sup, "decision": "escalated"}) == 0


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("This thread has no pending approval to answer.", "409"),
        ("Interrupt x is already being answered by reviewer1.", "409"),
        ("The resume payload is 70000 bytes; the limit is 64000.", "413"),
        ("requester1 (requester) may not answer issue_refund: it needs a supervisor.", "403"),
        ("reviewer1 (reviewer) may not edit issue_refund to {...}: that call needs a supervisor.", "403"),
        ("Only a supervisor may send update or goto with a resume.", "403"),
        ("Invalid answer for issue_refund (abc): 'type' is a required property", "422"),
    ],
)
def test_refused_resumes_are_counted_by_status(message, status):
    """observe: a refused resume counts under the status it was answered with (inferred from its message)."""
    assert refusal_status(message) == status
    before = value("hitl_resumes_refused_total", status=status)
    observe([{**decision("issue_refund", "refused"), "outcome": "refused", "refusal": message}])
    assert value("hitl_resumes_refused_total", status=status) == before + 1


def test_a_record_metrics_cannot_read_is_skipped():
    """observe: a record with an unreadable time is skipped without raising; the next one counts."""
    labels = {"agent": "support", "tool": "odd_tool", "decision": "approve", "role": "reviewer"}
    before = value("hitl_approvals_decided_total", **labels)
    observe([None, {**decision("odd_tool", "approve"), "roles": None}, decision("odd_tool", "approve")])
    assert value("hitl_approvals_decided_total", **labels) == before + 1


async def test_notices_are_counted_sent_and_failed(monkeypatch, tmp_path):
    """notices: a delivered notice counts as sent, one failing every attempt as failed (real receivers)."""
    monkeypatch.setattr(delivery, "FIRST_BACKOFF_SECONDS", 0)
    engine = connect(f"sqlite:///{tmp_path / 'business.db'}")
    receiver = Receiver()
    settings = Settings()
    sent = ("hitl_notices_total", {"event": "approval_pending", "outcome": "sent"})
    failed = ("hitl_notices_total", {"event": "approval_pending", "outcome": "failed"})
    before = value(sent[0], **sent[1]), value(failed[0], **failed[1])
    body = {"event": "approval_pending"}
    ok = outbox.Notice.post("notice:ok", "webhook", receiver.url, body)
    down = outbox.Notice.post("notice:down", "webhook", f"http://127.0.0.1:{free_port()}/hook", body)
    with storage.ready(engine).begin() as conn:
        outbox.record(conn, [ok, down], 0.0)
    assert await outbox.send(ok, settings, engine=engine)
    assert not await outbox.send(down, settings, engine=engine)
    assert (value(sent[0], **sent[1]), value(failed[0], **failed[1])) == (before[0] + 1, before[1] + 1)
    receiver.http.shutdown()
    receiver.http.server_close()
    engine.dispose()


async def test_timed_observes_the_gate_time_of_sync_and_async_calls():
    """timed: each call, returning or raising, adds one observation to hitl_gate_seconds{phase}."""
    count = ("hitl_gate_seconds_count", {"phase": "test"})
    before = value(count[0], **count[1])

    @metrics.timed("test")
    def check() -> int:
        return 1

    @metrics.timed("test")
    async def resume() -> int:
        raise RuntimeError

    assert check() == 1
    with pytest.raises(RuntimeError):
        await resume()
    assert value(count[0], **count[1]) == before + 2


def test_exposition_follows_prometheus_names():
    """exposition: counters end in _total, durations in _seconds, the pending gauge is always there."""
    text = metrics.exposition().decode()
    for name in (
        "# TYPE hitl_approvals_decided_total counter",
        "# TYPE hitl_approval_decision_seconds histogram",
        "# TYPE hitl_approvals_pending gauge",
        "# TYPE hitl_resumes_refused_total counter",
        "# TYPE hitl_notices_total counter",
        "# TYPE hitl_gate_seconds histogram",
        "# TYPE hitl_approvals_requested_total counter",
        "# TYPE hitl_approvals_escalated_total counter",
        "# TYPE hitl_approvals_expired_total counter",
    ):
        assert name in text


async def test_each_watcher_pass_is_timed_on_both_clocks(monkeypatch):
    """Watcher.run: a pass, even a failing one, adds one observation to hitl_watcher_pass_seconds{clock}."""
    from server.coordination import watcher as watching  # noqa: PLC0415  (the watcher imports the whole server)

    before = {clock: value("hitl_watcher_pass_seconds_count", clock=clock) for clock in ("wall", "cpu")}
    passes = watching.Watcher(Settings())

    async def failing_tick():
        raise RuntimeError("a pass that fails")

    async def stop_after_one(_seconds):
        raise asyncio.CancelledError

    # The watcher's own asyncio only: a server another test left running in a thread of this worker
    # sleeps in the same module (patching asyncio.sleep itself stopped it, and its socket's
    # ResourceWarning failed a later test's setup in CI).
    watchers_asyncio = types.ModuleType("asyncio")
    watchers_asyncio.__dict__.update(vars(asyncio))
    watchers_asyncio.sleep = stop_after_one  # type: ignore[attr-defined]
    monkeypatch.setattr(passes, "tick", failing_tick)
    monkeypatch.setattr(watching, "asyncio", watchers_asyncio)
    with pytest.raises(asyncio.CancelledError):
        await passes.run()
    for clock, count in before.items():
        assert value("hitl_watcher_pass_seconds_count", clock=clock) == count + 1
