"""The approval cycle through a real `langgraph dev` and `langgraph-sdk`, ours beside the stock agent.

At each concurrency, that many clients run cycles back to back: create a thread, run it to
the interrupt (`runs.wait`), resume it with an approval (`runs.wait`), check the refund. Ours
and the stock agent take turns in blocks of rounds (ours, stock, stock, ours) on the same server.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from agents.offline import phrases
from bench import resume_parts
from bench.approval_cycle import APPROVE, CYCLE_AMOUNT
from bench.report import Row, Section
from bench.served import OURS, STOCK
from bench.stats import Latency
from tests.conftest import add_order
from tests.devserver import DEV_TOKENS

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient
    from rich.progress import Progress, TaskID

    from bench.sizes import BenchSizes
    from services.registry import Services

QUEUE_LIMIT = (
    "2 runs per cycle, each queued to the in-memory runtime's worker (woken when a run is put: "
    "`server.runtime.engine_compat`) and streamed back to its waiting client; at 10 and more clients "
    "the 2 cores are the limit"
)
ASKER = {"Authorization": f"Bearer {DEV_TOKENS['requester1']}"}
"""The customer asks (the order is theirs); the bench user, a supervisor, approves: four eyes."""
TARGET_CONCURRENCIES = (10, 50)
"""The throughput target (ours ≥ 1.0x stock) is set at these concurrencies."""
THROUGHPUT_LIMIT = (
    "2 cores shared by the server (one Python process, GIL) and the clients: from 10 clients on, the "
    "server's one core is the limit (used 97%). It spends 60-85 ms of CPU per cycle on either agent, ours "
    "more by its approval layer's work (profiled at 10 clients, 4 rounds of 200 cycles: the GIL held 1.4% "
    "longer; the layer's own code 0.9 ms per cycle, 0.2 ms of it the signed receipts both agents get): "
    "the review request (the order lookup of its text, the answer schema LangGraph regenerates on each "
    "pause), the receipt's check and the clearance's seal before the tool runs (the receipt's EdDSA check, "
    "0.13-0.24 ms, is recalled for a token this server signed or checked before), 4 more "
    "state channels in every checkpoint. One round strays up to 5% from the next (results.json): the "
    "runtime's 10-second snapshot lands in some rounds, and a cycle costs more as the run goes on (the "
    "in-memory runtime scans every thread and run on most reads: 2,300 UUID comparisons per cycle at the "
    "start, 24,000 after 600 cycles). Removed: LangSmith's 2 thread hand-offs per middleware hook and call "
    "(`server.runtime.tracing_inline`, about 10% of the server's CPU) and full garbage collections walking "
    "the startup heap (`server.runtime.startup_heap`: 80 ms each, now about 10)"
)


async def one_cycle(client: LangGraphClient, agent: str, services: Services) -> float:
    """One approval cycle of `agent` through the server; its duration in seconds.

    Raises:
        RuntimeError: when the refund was not written exactly once.
    """
    order_id = add_order(services, CYCLE_AMOUNT)
    started = time.perf_counter()
    thread = await client.threads.create(headers=ASKER)
    request: dict[str, Any] = {"messages": [{"role": "user", "content": phrases.refund_in_full(order_id)}]}
    await client.runs.wait(thread["thread_id"], agent, input=request, headers=ASKER)
    await client.runs.wait(thread["thread_id"], agent, command={"resume": APPROVE})
    elapsed = time.perf_counter() - started
    refunds = services.payments.refunds_for(order_id)
    if [r["amount"] for r in refunds] != [CYCLE_AMOUNT]:
        msg = f"{agent} through the server: expected one refund of {CYCLE_AMOUNT:g}, found {refunds}"
        raise RuntimeError(msg)
    return elapsed


async def round_of_cycles(  # noqa: PLR0913  (one round, fully described)
    client: LangGraphClient,
    agent: str,
    services: Services,
    *,
    cycles: int,
    concurrency: int,
    progress: Progress,
    task: TaskID,
) -> tuple[list[float], float]:
    """`cycles` cycles by `concurrency` clients; the latencies and the wall time."""
    remaining = cycles
    latencies: list[float] = []

    async def client_loop() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            latencies.append(await one_cycle(client, agent, services))
            progress.advance(task)

    started = time.perf_counter()
    await asyncio.gather(*(client_loop() for _ in range(min(concurrency, cycles))))
    return latencies, time.perf_counter() - started


async def measure(
    client: LangGraphClient, services: Services, sizes: BenchSizes, progress: Progress
) -> Section:
    """Latency and throughput of both agents at every concurrency in `sizes.concurrency`."""
    section = Section(
        name="server",
        title="2. Approval cycle through the server",
        reference=(
            "the stock agent served as `stock` by the same `langgraph dev` (same auth, same checkpointer, "
            "same process), taking turns with ours."
        ),
        notes=[
            (
                "`langgraph dev --n-jobs-per-worker 10 --no-reload`, in-memory runtime, serving a copy of "
                "`langgraph.json` made at run time with `stock` added; requester1 starts each "
                "cycle and `dev-supervisor1` approves it (the asker may not approve: four eyes)."
            ),
            (
                "Latency: from `threads.create` to the end of the approving `runs.wait`. Throughput: "
                "cycles finished / wall time of the rounds. Each cycle's refund is checked in the "
                "business database."
            ),
            (
                f"At each concurrency, {sizes.server_blocks} blocks of rounds (ours, stock, stock, ours), "
                f"at least {sizes.server_cycles_min} cycles per agent (or {sizes.server_cycles_per_client} "
                "per client); each round's own throughput is in results.json (`rounds_cycles_per_s`), "
                "to show how far one round strays."
            ),
            (
                "Resume path parts: the server's own timings of each part of accepting a decision "
                "(`hitl_gate_seconds`, `GET /hitl/metrics`), read before and after the rounds at the "
                "lowest concurrency (both agents' decisions pass the same pipeline); the reference "
                "is our whole cycle there (`bench.resume_parts`)."
            ),
        ],
    )
    for concurrency in sizes.concurrency:
        timed_parts = concurrency == min(sizes.concurrency)
        phases = await resume_parts.gate_phases(client) if timed_parts else {}
        cycles = sizes.server_cycles(concurrency)
        latencies: dict[str, list[float]] = {OURS: [], STOCK: []}
        walls = dict.fromkeys(latencies, 0.0)
        rounds: dict[str, list[float]] = {OURS: [], STOCK: []}
        task = progress.add_task(f"server cycles at concurrency {concurrency}", total=2 * cycles)
        for agent in (OURS, STOCK, STOCK, OURS) * sizes.server_blocks:
            samples, wall = await round_of_cycles(
                client,
                agent,
                services,
                cycles=cycles // (2 * sizes.server_blocks),
                concurrency=concurrency,
                progress=progress,
                task=task,
            )
            latencies[agent] += samples
            walls[agent] += wall
            rounds[agent].append(round(len(samples) / wall, 2))
        summary: dict[str, Any] = {
            agent: {
                **Latency.of(samples).as_dict(),
                "cycles_per_s": len(samples) / walls[agent],
                "rounds_cycles_per_s": rounds[agent],
            }
            for agent, samples in latencies.items()
        }
        section.details[f"concurrency_{concurrency}"] = summary
        ours, stock = summary[OURS], summary[STOCK]
        section.rows += [
            Row(
                "server",
                f"server cycle at concurrency {concurrency}, p50",
                "s",
                ours["p50"],
                stock["p50"],
                QUEUE_LIMIT,
            ),
            Row(
                "server",
                f"server cycle at concurrency {concurrency}, p90",
                "s",
                ours["p90"],
                stock["p90"],
                QUEUE_LIMIT,
            ),
            Row(
                "server",
                f"server throughput at concurrency {concurrency}",
                "cycles/s",
                ours["cycles_per_s"],
                stock["cycles_per_s"],
                THROUGHPUT_LIMIT,
                "≥ 1.0x" if concurrency in TARGET_CONCURRENCIES else "",
            ),
        ]
        if timed_parts:
            after = await resume_parts.gate_phases(client)
            section.rows += resume_parts.rows(phases, after, ours["p50"] * 1000)
            section.details["resume_parts_s"] = {"before": phases, "after": after}
    return section
