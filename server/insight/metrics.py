"""Prometheus metrics of the humans in the loop: what waits, what was decided, how fast, what failed.

Counted where each event happens (the watcher, notices, the audit records as they are written,
a first-line reviewer's verdicts) into this process's own registry, served at `GET /hitl/metrics`
to reviewers and supervisors. Each replica counts its own events; Prometheus scrapes every
replica and sums. Not analytics over history (that is `server.insight.analytics`, from the trail).
It is one concept, kept whole though long: the process's one registry, every metric the docs' table
lists defined in one place.
"""

from __future__ import annotations

import functools
import inspect
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from hitl.contracts.records import PERSON_DECISIONS
from hitl.gate import timing
from hitl.policy.first_line import is_model_actor
from hitl.policy.groups import SYSTEM_ACTOR, UNKNOWN_ACTOR
from server.coordination.inbox_rows import actions_of
from server.coordination.inbox_table import READS, TABLE
from server.coordination.inbox_table_rows import listed_at
from server.identity.users import ROLES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from prometheus_client.core import Metric

    from hitl.contracts.records import AuditRecord
    from server.decisions.pending import Pending

F = TypeVar("F", bound="Callable[..., Any]")
REGISTRY = CollectorRegistry()
"""This process's metrics only (no default process collectors: the API process has its own)."""
DECISIONS = frozenset(PERSON_DECISIONS)
"""The decisions a person (or the expiry, as `system`) takes on a pending approval (`RecordedDecision`)."""
LABEL_CHARS = 100
DECISION_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 4 * 3600.0, 24 * 3600.0)
GATE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
PASS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTED = Counter(
    "hitl_approvals_requested",
    "Approvals that started waiting (counted once: when first announced, or at their decision if sooner).",
    ["agent", "tool", "required_role"],
    registry=REGISTRY,
)
DECIDED = Counter(
    "hitl_approvals_decided",
    "Decisions accepted on pending approvals; role `system` is the expiry.",
    ["agent", "tool", "decision", "role"],
    registry=REGISTRY,
)
DECISION_SECONDS = Histogram(
    "hitl_approval_decision_seconds",
    "Time from the pause to the accepted decision, in seconds.",
    ["agent", "tool"],
    buckets=DECISION_BUCKETS,
    registry=REGISTRY,
)
ESCALATED = Counter(
    "hitl_approvals_escalated",
    "Approvals escalated past their deadline.",
    ["agent", "tool"],
    registry=REGISTRY,
)
EXPIRED = Counter(
    "hitl_approvals_expired",
    "Approvals rejected by the watcher past their deadline.",
    ["agent", "tool"],
    registry=REGISTRY,
)
REFUSED = Counter(
    "hitl_resumes_refused",
    "Resumes the server refused, by HTTP status.",
    ["status"],
    registry=REGISTRY,
)
UNVERIFIED = Counter(
    "hitl_decisions_unverified",
    "Stored decisions refused because their receipts, seal or trail do not verify (never applied).",
    registry=REGISTRY,
)
SLACK_UNVERIFIED = Counter(
    "hitl_slack_unverified_requests",
    "Requests to the Slack actions route refused before reading them: forged, stale or replayed.",
    ["reason"],
    registry=REGISTRY,
)
NOTICES = Counter(
    "hitl_notices",
    "Pause notices POSTed to HITL_NOTIFY_URL, by event and outcome (sent, failed).",
    ["event", "outcome"],
    registry=REGISTRY,
)
GATE_SECONDS = Histogram(
    "hitl_gate_seconds",
    "The approval gate's own time per pause and per resume, in seconds.",
    ["phase"],
    buckets=GATE_BUCKETS,
    registry=REGISTRY,
)
WATCHER_PASS_SECONDS = Histogram(
    "hitl_watcher_pass_seconds",
    "One watcher pass (`server.coordination.watcher`), by what it took: wall seconds (`wall`) and this "
    "process's CPU seconds meanwhile (`cpu`: every thread's, so requests served during the pass count too).",
    ["clock"],
    buckets=PASS_BUCKETS,
    registry=REGISTRY,
)

FIRST_LINE = Counter(
    "hitl_first_line_verdicts",
    "Calls a first-line reviewer (a model) was asked about, by what became of them (approve, reject: decided "
    "by it; refer: sent to people) and why (`model`: its judgement; timeout, error, breaker, ...).",
    ["agent", "tool", "decision", "cause"],
    registry=REGISTRY,
)
FIRST_LINE_SECONDS = Histogram(
    "hitl_first_line_seconds",
    "How long a first-line reviewer took over one call, model and recording included, in seconds.",
    ["agent", "tool"],
    buckets=GATE_BUCKETS,
    registry=REGISTRY,
)
FIRST_LINE_REVIEWS = Counter(
    "hitl_first_line_reviews",
    "People's word afterwards on a first-line reviewer's decisions: fine, or should_not_have (overturned).",
    ["agent", "tool", "review"],
    registry=REGISTRY,
)

REFUSAL_STATUSES = (
    ("has no pending approval", "409"),
    ("is already being answered", "409"),
    ("try again when it pauses", "409"),
    ("bytes; the limit is", "413"),
    (" may not answer ", "403"),
    (" may not edit ", "403"),
    ("is refused: ", "403"),
    ("Only a supervisor may", "403"),
)
"""The refusals `server.decisions.pipeline.decide` records, by the status it answered with.

An audit record keeps the refusal's message but not its status; every other refusal of that
path is a 422 (a malformed or invalid answer).
"""


def label(value: object) -> str:
    """A label value: text, at most `LABEL_CHARS` characters."""
    return str(value or "")[:LABEL_CHARS]


def role_of(record: Mapping[str, Any]) -> str:
    """Who decided: `system` (the watcher), `model` (a first-line reviewer) or a person's highest role."""
    if record.get("reviewer") == SYSTEM_ACTOR:
        return SYSTEM_ACTOR
    if is_model_actor(record.get("reviewer")):
        return "model"
    roles = record.get("roles")
    held = [r for r in ROLES if isinstance(roles, list) and r in roles]
    return held[-1] if held else UNKNOWN_ACTOR


def refusal_status(message: str) -> str:
    """The HTTP status a refused resume was answered with, from its recorded message."""
    return next((status for phrase, status in REFUSAL_STATUSES if phrase in message), "422")


def observe(records: Iterable[AuditRecord]) -> None:
    """Count the decisions and refusals among audit `records` as they are written.

    Called from `server.records.audit.write`; never raises (metrics never break a decision).
    """
    for record in records:
        try:
            _observe(cast("Mapping[str, Any]", record))
        except Exception:  # noqa: BLE001, S112  (a record metrics cannot read is skipped, not fatal)
            continue


def _observe(record: Mapping[str, Any]) -> None:
    if record.get("outcome") == "refused" and record.get("decision") == "refused":
        REFUSED.labels(status=refusal_status(str(record.get("refusal") or ""))).inc()
        return
    if record.get("outcome") != "accepted" or record.get("decision") not in DECISIONS:
        return
    agent, tool = label(record.get("agent")), label(record.get("tool"))
    DECIDED.labels(agent=agent, tool=tool, decision=record["decision"], role=role_of(record)).inc()
    paused = paused_at(str(record.get("thread_id")), str(record.get("interrupt_id")))
    if paused is not None:
        seconds = (datetime.fromisoformat(str(record["decided_at"])) - paused).total_seconds()
        DECISION_SECONDS.labels(agent=agent, tool=tool).observe(max(0.0, seconds))


def paused_at(thread_id: str, interrupt_id: str) -> datetime | None:
    """When `interrupt_id` started waiting, as this process last read its inbox row (None: not read here)."""
    stamp = listed_at(thread_id, interrupt_id)
    try:
        return datetime.fromisoformat(stamp) if stamp else None
    except ValueError:
        return None


def requested(rows: Iterable[Mapping[str, Any]]) -> None:
    """Count approvals that started waiting: inbox rows the watcher's leader announced for the first time."""
    for row in rows:
        REQUESTED.labels(
            agent=label(row.get("agent")), tool=label(row.get("tool")), required_role=label(row.get("group"))
        ).inc()


def per_action(counter: Counter, pending: Pending) -> None:
    """Count each action of `pending` (one per tool call of a batch) on `counter`, by agent and tool."""
    for action in actions_of(pending):
        counter.labels(agent=label(action["agent"]), tool=label(action["tool"])).inc()


def notice(event: str, *, sent: bool) -> None:
    """A pause notice was delivered (`sent`) or given up on."""
    NOTICES.labels(event=label(event), outcome="sent" if sent else "failed").inc()


def timed(phase: str) -> Callable[[F], F]:
    """Decorate a sync or async function to observe its duration as the gate's `phase` time."""
    histogram = GATE_SECONDS.labels(phase=phase)

    def decorate(function: F) -> F:
        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def timed_async(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401
                started = time.perf_counter()
                try:
                    return await function(*args, **kwargs)
                finally:
                    histogram.observe(time.perf_counter() - started)

            return cast("F", timed_async)

        @functools.wraps(function)
        def timed_sync(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                histogram.observe(time.perf_counter() - started)

        return cast("F", timed_sync)

    return decorate


class PendingCollector(Collector):
    """`hitl_approvals_pending{tool, required_role}`: what waits now, counted in the inbox table."""

    def collect(self) -> Iterator[Metric]:
        """One gauge sample per tool and required role."""
        gauge = GaugeMetricFamily(
            "hitl_approvals_pending",
            "Approvals waiting now, by tool and the role that must decide.",
            labels=["tool", "required_role"],
        )
        try:
            counts = TABLE.counts_by_tool()
        except Exception:  # noqa: BLE001  (the store is away: no gauge this scrape, never a failed scrape)
            counts = {}
        for (tool, role), count in sorted(counts.items()):
            gauge.add_metric([tool, role], count)
        yield gauge


class InboxReadsCollector(Collector):
    """What keeping the inbox table current costs this process: threads read again, threads marked now."""

    def collect(self) -> Iterator[Metric]:
        """`hitl_inbox_threads_reread_total{why}` and `hitl_inbox_marked_threads`."""
        reread = CounterMetricFamily(
            "hitl_inbox_threads_reread",
            "Threads this process read again from the runtime to keep the inbox table current, by why: "
            "fill (a new store), repair (changed since the last pass), marks (changed through this "
            "process), watcher (new or due rows), waited (a request that waited for its run's end).",
            labels=["why"],
        )
        for why in READS:
            reread.add_metric([why], TABLE.reread[why])
        yield reread
        yield GaugeMetricFamily(
            "hitl_inbox_marked_threads",
            "Threads marked for reading again now (changed through this process or another replica).",
            value=len(TABLE.marks),
        )


REGISTRY.register(PendingCollector())
REGISTRY.register(InboxReadsCollector())
timing.listen(lambda phase, seconds: GATE_SECONDS.labels(phase=phase).observe(seconds))


def exposition() -> bytes:
    """Every metric of this process in the Prometheus text format."""
    return generate_latest(REGISTRY)
