"""The resume path's parts, timed inside the server: what checking and accepting a decision costs.

The server times each part of `server.decisions.pipeline.decide` in `hitl_gate_seconds{phase}`
(`GET /hitl/metrics`): the answer's checks, then the one transaction that accepts it (the audit
head read and locked, the claim, the receipts signed, sealed into the command, the audit records
appended). The bench reads the histograms' sums and counts before and after the cycles at
concurrency 1 (one decision at a time, so no part waits on another) and reports each part's
mean beside the whole cycle it belongs to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.parser import text_string_to_metric_families

from bench.report import Row

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

METRIC = "hitl_gate_seconds"
PARTS = {
    "resume": "the whole decision (checks, accept, publish)",
    "resume.check": "checks: contract, who may decide, four eyes, edit policy",
    "resume.accept": "accept: the one transaction below",
    "resume.audit_head": "accept: read and lock the audit trail's head",
    "resume.claim": "accept: claim the interrupts",
    "resume.sign": "accept: sign the receipts (Ed25519, bound to the head)",
    "resume.seal": "accept: seal the receipts into the command (HMAC)",
    "resume.audit_append": "accept: append the audit records (hash chain)",
}
LIMIT = (
    "the decisions database (SQLite in `make dev`: one file, a write transaction per decision) and "
    "the signatures; ratio = the part's share of one approval cycle through the server"
)


async def gate_phases(client: LangGraphClient) -> dict[str, tuple[float, float]]:
    """Seconds spent and calls counted so far per phase of `hitl_gate_seconds`."""
    response = await client.http.client.get("/hitl/metrics")  # Prometheus text, not JSON
    response.raise_for_status()
    found: dict[str, tuple[float, float]] = {}
    for family in text_string_to_metric_families(response.text):
        if family.name != METRIC:
            continue
        for sample in family.samples:
            phase = sample.labels.get("phase", "")
            spent, count = found.get(phase, (0.0, 0.0))
            if sample.name == f"{METRIC}_sum":
                found[phase] = (sample.value, count)
            elif sample.name == f"{METRIC}_count":
                found[phase] = (spent, sample.value)
    return found


def rows(
    before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]], cycle_ms: float
) -> list[Row]:
    """One row per part: its mean in ms per decision between the two readings, beside `cycle_ms`."""
    made = []
    for phase, what in PARTS.items():
        spent = after.get(phase, (0.0, 0.0))[0] - before.get(phase, (0.0, 0.0))[0]
        count = after.get(phase, (0.0, 0.0))[1] - before.get(phase, (0.0, 0.0))[1]
        mean = spent / count * 1000 if count else None
        made.append(Row("server", f"resume path, {what}, mean", "ms", mean, cycle_ms, LIMIT))
    return made
