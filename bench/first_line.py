"""The first-line reviewer's added latency: what deciding a gated call in the graph costs, scripted.

In process, as the server does it: the `support` agent with its first-line reviewer on, the
server's `review` registered as the gate's hook on a SQLite layer store of its own (claims,
signed receipt, the trail's append and the ledger's row in one transaction, as `make dev` has
them). Each cycle e-mails a customer without promises: the model approves, the e-mail is sent
once (checked), no pause. Timed: the hook as the gate calls it, and the whole run it sits in.
"""

from __future__ import annotations

import gc
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from langgraph.checkpoint.memory import InMemorySaver

from agents import support
from agents.offline import DEMO, phrases
from agents.settings import DemoSettings
from bench.report import Row, Section
from bench.stats import Latency
from hitl.gate.caller import in_process
from hitl.model.first_line import review as door
from hitl.model.scripted.chat import ScriptedChatModel
from server.first_line.review import review
from server.insight import metrics
from server.ledger import storage
from services.database import connect
from services.registry import Services
from tests.conftest import add_order

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.progress import Progress

    from bench.sizes import BenchSizes
    from hitl.model.first_line.review import DelegatedCall, Verdict


PARTS = {
    "first_line.accept": "accept: the transaction a person's decision has (claim, signature, trail, its row)",
    "first_line.classify": "the model itself (scripted: its rules)",
}
"""Its parts the server times (`hitl_gate_seconds{phase}`), and what each is."""


def measure(sizes: BenchSizes, progress: Progress) -> Section:
    """Time `sizes.cycles` delegated e-mails after `sizes.warmup` untimed ones."""
    with tempfile.TemporaryDirectory(prefix="bench-first-line-") as tmp:
        services = Services.open(f"sqlite:///{Path(tmp) / 'business.db'}")
        layer = storage.ready(connect(f"sqlite:///{Path(tmp) / 'hitl.db'}"))
        hook: list[float] = []

        def timed(call: DelegatedCall) -> Verdict:
            started = time.perf_counter()
            try:
                return review(call, engine=layer)
            finally:
                hook.append(time.perf_counter() - started)

        door.keep_in(timed)
        try:
            runs = _cycles(services, sizes, progress, lambda: _spent(PARTS))
        finally:
            door.keep_in(None)
            layer.dispose()
    added, whole = Latency.of(hook[sizes.warmup :]), Latency.of(runs.durations)
    limit = (
        "the layer store's one write transaction (SQLite in `make dev`: the audit head's lock, the claim, "
        "the Ed25519 signature, the trail's append and the ledger's row, then a commit, fsync'd), the checks "
        "a person's answer passes (the answer contract, who may decide), one ledger read (replay and the "
        "circuit breaker); the scripted classifier itself is a regular expression"
    )
    rows = [
        Row(
            "first_line",
            "first-line reviewer's added latency, p50",
            "ms",
            added.p50 * 1000,
            whole.p50 * 1000,
            limit,
            "≤ 5 ms",
        ),
        Row(
            "first_line",
            "first-line reviewer's added latency, p90",
            "ms",
            added.p90 * 1000,
            whole.p90 * 1000,
            limit,
        ),
    ]
    for phase, what in PARTS.items():
        spent, count = (runs.after[phase][i] - runs.before[phase][i] for i in (0, 1))
        mean = spent / count * 1000 if count else None
        rows.append(
            Row("first_line", f"first-line reviewer, {what}, mean", "ms", mean, added.p50 * 1000, limit)
        )
    return Section(
        name="first_line",
        title="8. First-line reviewer (scripted)",
        reference=(
            "The whole in-process run the decision sits in (the ratio is its share of the run); for its "
            "parts, the added latency's p50."
        ),
        rows=rows,
        details={"hook": added.as_dict(), "run": whole.as_dict(), "warmup": sizes.warmup},
        notes=[
            (
                f"A cycle: '{phrases.email_customer('B…')}' (a fresh order) → get_order → send_email, "
                "which the gate puts to the first-line reviewer (scripted); it approves, the e-mail is "
                "sent once (checked) → answer. No pause, no second run."
            ),
            (
                f"{sizes.cycles} timed cycles after {sizes.warmup} warm-up ones; `gc.collect()` before each, "
                "outside the timing. The hook's time is the gate's call of the server's `review`."
            ),
        ],
    )


def _spent(phases: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Seconds spent and calls counted so far in each of `phases` of `hitl_gate_seconds` (this process)."""
    found = {}
    for phase in phases:
        spent = metrics.REGISTRY.get_sample_value("hitl_gate_seconds_sum", {"phase": phase}) or 0.0
        count = metrics.REGISTRY.get_sample_value("hitl_gate_seconds_count", {"phase": phase}) or 0.0
        found[phase] = (spent, count)
    return found


@dataclass(frozen=True)
class Timed:
    """The timed runs' durations, and the server's phase totals before and after them."""

    durations: list[float]
    before: dict[str, tuple[float, float]]
    after: dict[str, tuple[float, float]]


def _cycles(
    services: Services,
    sizes: BenchSizes,
    progress: Progress,
    phases: Callable[[], dict[str, tuple[float, float]]],
) -> Timed:
    """Run the warm-up and timed cycles; the timed runs' durations in seconds, and `phases()` around them.

    Raises:
        RuntimeError: a run that paused, or did not send its e-mail exactly once.
    """
    settings = DemoSettings(support_first_line=True, refund_auto_approve_limit=20)
    graph = support.make_graph(
        model=ScriptedChatModel(scripts=DEMO),
        checkpointer=InMemorySaver(),
        services=services,
        settings=settings,
    )
    task = progress.add_task("first-line reviewer", total=sizes.warmup + sizes.cycles)
    runs: list[float] = []
    before = phases()
    for index in range(sizes.warmup + sizes.cycles):
        if index == sizes.warmup:
            before = phases()
        order_id = add_order(services, 60)
        config = in_process(str(uuid.uuid4()))  # no server: said so, its tools work on every record
        request = {"messages": [{"role": "user", "content": phrases.email_customer(order_id)}]}
        gc.collect()
        started = time.perf_counter()
        done = graph.invoke(request, config, version="v2")
        elapsed = time.perf_counter() - started
        sent = services.outbox.sent_to(f"{order_id.lower()}@example.com")
        if done.interrupts or len(sent) != 1:
            paused = len(done.interrupts)
            msg = f"a delegated e-mail must not pause and be sent once (paused {paused}, sent {len(sent)})"
            raise RuntimeError(msg)
        if index >= sizes.warmup:
            runs.append(elapsed)
        progress.advance(task)
    return Timed(runs, before, phases())
