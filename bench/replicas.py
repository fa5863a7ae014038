"""Approval cycles across N replicas of the open engine, and how long a decision takes to act.

Throughput on 1, 2 and 4 replicas (`server.runtime.replicas.ReplicaSet`: one PostgreSQL, one Redis),
each cycle paused through one replica and answered through another; then, one decision at a
time, how long after the resume request the refund row exists, on `langgraph dev` and on 2
replicas. Not the comparison with the stock agent on one server: that is `bench.server_cycles`.
`python -m bench.replicas` runs this section alone and prints its table rows.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from langgraph_sdk import get_client
from langgraph_sdk.schema import Command

from agents.offline import phrases
from bench.approval_cycle import APPROVE, CYCLE_AMOUNT
from bench.report import Row, Section, render_rows
from bench.served import OURS, STOCK, repo_config, serving, side_by_side_config
from bench.stats import Latency
from server.runtime.replicas import ReplicaSet
from services.registry import Services
from tests.conftest import add_order
from tests.devserver import DEV_TOKENS, dev_users

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient
    from rich.progress import Progress

    from bench.sizes import BenchSizes

REQUESTER = "requester1"
REVIEWER = "supervisor1"
DATABASES = "bench_replicas"
"""Prefix of each run's databases (`bench_replicas_<random>_runtime`, `_business`, `_layer`), then dropped."""
REDIS_DB = 13
"""A Redis database of the bench's own (the test suite's replica sets use 0)."""
EFFECT_REPLICAS = 2
"""Decision-to-effect is measured on this many replicas (the pause on one, the answer on the other)."""
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\dT")
POLL_SECONDS = 0.005
EFFECT_TIMEOUT = 60.0
REPLICA_ENV = {"HITL_USERS": dev_users(), "HITL_DEV_MODE": "true", "MODEL": "scripted"}

THROUGHPUT_LIMIT = (
    "2 cores shared by every replica, PostgreSQL, Redis and the clients: more replicas add workers "
    "(10 jobs each) but no CPU, so past the cores they only add processes; each cycle is 2 runs "
    "claimed from the PostgreSQL queue (a Redis wake-up, else a 0.5 s poll) and streamed back through "
    "Redis; the ratio is to the same cycles on 1 replica"
)
EFFECT_LIMIT = (
    "the queue hand-off: the worker is woken at once by Redis pub/sub (else a 0.5 s poll) and claims the "
    "run from PostgreSQL; what remains is the resumed run's own steps up to the write (load the "
    "checkpoint, the gate's checks and seals, the refund insert) and the 5 ms DB poll"
)
EMBEDDED_EFFECT_LIMIT = (
    "the embedded runtime's worker, woken when a run is put (`server.runtime.engine_compat`; its own "
    "loop sleeps 0.5 s before each look, about 1 s every time before the wake-up); then the resumed "
    "run's steps up to the write and the 5 ms DB poll. Ours adds the decision's checks and records "
    "before the run is queued (the claim, the seals, the audit)"
)
EFFECT_TARGET = "≤ 100 ms"
EMBEDDED_EFFECT_TARGET = "≤ 250 ms"


@dataclass
class Endpoint:
    """One server address, seen as the requester and as the reviewer."""

    url: str
    requester: LangGraphClient
    reviewer: LangGraphClient


async def endpoints(urls: list[str], stack: AsyncExitStack) -> list[Endpoint]:
    """A requester and a reviewer client per URL, closed with `stack`."""
    made = []
    for url in urls:
        clients = []
        for user in (REQUESTER, REVIEWER):
            client = get_client(
                url=url, headers={"Authorization": f"Bearer {DEV_TOKENS[user]}"}, api_key=None
            )
            stack.push_async_callback(client.aclose)
            clients.append(client)
        made.append(Endpoint(url, *clients))
    return made


async def pause(via: Endpoint, services: Services, agent: str = OURS) -> tuple[str, str]:
    """A fresh refund request to `agent` run to its pause through `via`; the order and thread ids."""
    order_id = add_order(services, CYCLE_AMOUNT)
    thread = await via.requester.threads.create()
    request: dict[str, Any] = {"messages": [{"role": "user", "content": phrases.refund_in_full(order_id)}]}
    await via.requester.runs.wait(thread["thread_id"], agent, input=request)
    return order_id, thread["thread_id"]


async def approval(via: Endpoint, thread_id: str) -> Command:
    """The resume command approving the thread's one pending call, read through `via`.

    Raises:
        RuntimeError: when the thread does not wait on exactly one approval.
    """
    state = await via.reviewer.threads.get_state(thread_id)
    ids = [i["id"] for task in state["tasks"] for i in task["interrupts"]]
    if len(ids) != 1:
        msg = f"thread {thread_id} through {via.url}: expected one pending approval, found {len(ids)}"
        raise RuntimeError(msg)
    return Command(resume={ids[0]: APPROVE})


def check_refund(services: Services, order_id: str, where: str) -> None:
    """Raise unless `order_id` was refunded exactly once, in full."""
    refunds = services.payments.refunds_for(order_id)
    if [r["amount"] for r in refunds] != [CYCLE_AMOUNT]:
        msg = f"{where}: expected one refund of {CYCLE_AMOUNT:g} on {order_id}, found {refunds}"
        raise RuntimeError(msg)


async def cycle(paused_via: Endpoint, answered_via: Endpoint, services: Services) -> None:
    """One approval cycle: paused through one endpoint, approved through the other, refund checked."""
    order_id, thread_id = await pause(paused_via, services)
    command = await approval(answered_via, thread_id)
    await answered_via.reviewer.runs.wait(thread_id, OURS, command=command)
    check_refund(services, order_id, f"paused via {paused_via.url}, approved via {answered_via.url}")


async def throughput(
    ends: list[Endpoint], services: Services, cycles: int, concurrency: int
) -> tuple[float, list[str]]:
    """Finished cycles per second of `concurrency` clients, client i on replica i and i+1 (round-robin).

    A cycle the server fails (an HTTP error, a broken response) is not counted, and is returned
    as one line each: the rate is of cycles that refunded once.
    """
    remaining = cycles
    failed: list[str] = []

    async def client_loop(index: int) -> None:
        nonlocal remaining
        paused_via, answered_via = ends[index % len(ends)], ends[(index + 1) % len(ends)]
        while remaining > 0:
            remaining -= 1
            try:
                await cycle(paused_via, answered_via, services)
            except (
                httpx.HTTPError,
                ValueError,
            ) as error:  # a server failure, counted (JSON errors are ValueError)
                failed.append(f"{type(error).__name__}: {error}"[:300])

    started = time.perf_counter()
    await asyncio.gather(*(client_loop(i) for i in range(min(concurrency, cycles))))
    return (cycles - len(failed)) / (time.perf_counter() - started), failed


async def decision_to_effect(
    paused_via: Endpoint, answered_via: Endpoint, services: Services, agent: str = OURS
) -> float:
    """Seconds from sending the approval to `agent`'s refund row existing (polled every 5 ms).

    Raises:
        RuntimeError: when the refund does not appear within `EFFECT_TIMEOUT`.
    """
    order_id, thread_id = await pause(paused_via, services, agent)
    command = await approval(answered_via, thread_id)
    started = time.perf_counter()
    run = await answered_via.reviewer.runs.create(thread_id, agent, command=command)
    while not services.payments.refunds_for(order_id):
        if time.perf_counter() - started > EFFECT_TIMEOUT:
            msg = f"no refund on {order_id} {EFFECT_TIMEOUT:.0f} s after approving via {answered_via.url}"
            raise RuntimeError(msg)
        await asyncio.sleep(POLL_SECONDS)
    elapsed = time.perf_counter() - started
    await answered_via.reviewer.runs.join(thread_id, run["run_id"])
    check_refund(services, order_id, f"approved via {answered_via.url}")
    return elapsed


async def effect_samples(ends: list[Endpoint], services: Services, samples: int) -> list[float]:
    """`samples` decisions one at a time, each paused on one endpoint and answered on the next."""
    return [
        await decision_to_effect(ends[i % len(ends)], ends[(i + 1) % len(ends)], services)
        for i in range(samples)
    ]


async def on_replicas(sizes: BenchSizes, workdir: Path, progress: Progress) -> dict[str, Any]:
    """Grow one replica set through `sizes.replica_counts`; throughput at each, effect latency on 2."""
    replicas = ReplicaSet(f"{DATABASES}_{secrets.token_hex(3)}", workdir, redis_db=REDIS_DB, env=REPLICA_ENV)
    replicas.create_databases(fresh=True)
    counts = sorted(sizes.replica_counts)
    found: dict[str, Any] = {"cycles_per_s": {}, "effect_s": [], "failed_cycles": {}}
    task = progress.add_task("replica cycles", total=len(counts) * len(sizes.replica_concurrency))
    try:
        async with AsyncExitStack() as stack:
            replicas.start(counts[0])
            services = Services.open(replicas.business_url)
            for count in counts:
                replicas.start(count - len(replicas.urls))
                ends = await endpoints(replicas.urls, stack)
                for i in range(count):  # warm-up: each replica loads the graph and its pools
                    await cycle(ends[i], ends[(i + 1) % count], services)
                for concurrency in sizes.replica_concurrency:
                    cycles = concurrency * sizes.replica_cycles_per_client
                    rate, failed = await throughput(ends, services, cycles, concurrency)
                    found["cycles_per_s"].setdefault(str(concurrency), {})[str(count)] = rate
                    if failed:
                        found["failed_cycles"][f"{count} replicas, concurrency {concurrency}"] = failed
                    progress.advance(task)
                if count == EFFECT_REPLICAS:
                    found["effect_s"] = await effect_samples(ends, services, sizes.effect_samples)
    except Exception as error:
        msg = f"{type(error).__name__}: {error}\nreplica errors:\n{logged_errors(workdir)}"
        raise RuntimeError(msg) from error
    finally:
        replicas.stop()
        replicas.drop_databases()
    if found["failed_cycles"]:
        found["replica_errors"] = logged_errors(workdir)
    return found


def logged_errors(workdir: Path, last: int = 3, traceback_lines: int = 40) -> str:
    """The last `last` errors of each replica's log, each with the traceback after it (colour removed)."""
    found = []
    for log in sorted(workdir.glob("replica-*.log")):
        lines = ANSI.sub("", log.read_text(errors="replace")).splitlines()
        errors = [i for i, line in enumerate(lines) if "[error" in line]
        for i in errors[-last:]:
            found.append(f"{log.name}: {lines[i][:600]}")
            for line in lines[i + 1 : i + 1 + traceback_lines]:
                if LOG_LINE.match(line):  # the next log line: the traceback has ended
                    break
                found.append(f"    {line[:300]}")
    return "\n".join(found) or "(none logged)"


async def on_embedded(sizes: BenchSizes, workdir: Path) -> dict[str, list[float]]:
    """Decision-to-effect samples of ours and the stock agent, taking turns, on one `langgraph dev`.

    The server is `make dev`'s: the repository's `langgraph.json` (plus `stock`), the embedded runtime.
    """
    samples: dict[str, list[float]] = {OURS: [], STOCK: []}
    with serving(workdir, side_by_side_config(repo_config())) as server:
        services = server.services
        async with AsyncExitStack() as stack:
            end = (await endpoints([server.url], stack))[0]
            await cycle(end, end, services)  # warm-up
            for i in range(sizes.effect_samples):
                for agent in (OURS, STOCK) if i % 2 == 0 else (STOCK, OURS):
                    samples[agent].append(await decision_to_effect(end, end, services, agent))
    return samples


def effect_rows(what: str, ours: list[float], reference: list[float], limit: str, target: str) -> list[Row]:
    """p50 and p90 rows of decision-to-effect samples (s), ours beside the reference; `target` on p50."""
    found, beside = Latency.of(ours), Latency.of(reference)
    return [
        Row(
            "replicas",
            f"{what}, {name}",
            "ms",
            getattr(found, name) * 1000,
            getattr(beside, name) * 1000,
            limit,
            target if name == "p50" else "",
        )
        for name in ("p50", "p90")
    ]


def measure(sizes: BenchSizes, progress: Progress) -> Section:
    """Throughput by replica count, and decision-to-effect latency embedded vs 2 replicas."""
    with tempfile.TemporaryDirectory(prefix="bench-replicas-") as tmp:
        replicated = asyncio.run(on_replicas(sizes, Path(tmp) / "replicas", progress))
        embedded = asyncio.run(on_embedded(sizes, Path(tmp) / "embedded"))
    base = min(sizes.replica_counts)
    section = Section(
        name="replicas",
        title="6. Replicas",
        reference=(
            f"throughput: the same cycles on {base} replica; decision to effect embedded: the stock "
            "agent on the same `langgraph dev`, taking turns; on replicas: ours on `langgraph dev` "
            "(embedded runtime, SQLite business database), same package, same users."
        ),
        details={**replicated, "embedded_effect_s": embedded},
    )
    failed = sum(len(lines) for lines in replicated["failed_cycles"].values())
    if failed:
        section.notes.append(
            f"{failed} cycles failed on the server and are not counted (where, and the replicas' "
            "logged errors: `failed_cycles` and `replica_errors` in results.json)."
        )
    for concurrency, by_count in replicated["cycles_per_s"].items():
        section.rows += [
            Row(
                "replicas",
                f"approval throughput on {count} replicas at concurrency {concurrency}",
                "cycles/s",
                rate,
                by_count[str(base)],
                THROUGHPUT_LIMIT,
            )
            for count, rate in by_count.items()
            if count != str(base)
        ]
    if embedded[OURS] and embedded[STOCK]:
        section.rows += effect_rows(
            "decision to effect, `make dev` (embedded)",
            embedded[OURS],
            embedded[STOCK],
            EMBEDDED_EFFECT_LIMIT,
            EMBEDDED_EFFECT_TARGET,
        )
    if replicated["effect_s"] and embedded[OURS]:
        section.rows += effect_rows(
            f"decision to effect on {EFFECT_REPLICAS} replicas",
            replicated["effect_s"],
            embedded[OURS],
            EFFECT_LIMIT,
            EFFECT_TARGET,
        )
    section.notes += [
        (
            "Replicas: `langhost serve --config langgraph.replicas.json` (langgraph-runtime-pg, "
            "`.venv-replicas`) started by `server.runtime.replicas.ReplicaSet` on one PostgreSQL "
            "(runtime and "
            "business databases, fresh for the run and dropped after) and one Redis; the set grows "
            "through the replica counts, so later counts also hold the earlier counts' threads."
        ),
        (
            f"A cycle: requester1 creates the thread and runs it to the pause (`runs.wait`) on replica "
            f"i; supervisor1 reads the pending approval and approves it (`runs.wait`) on replica i+1; "
            f"the refund is checked. {sizes.replica_cycles_per_client} cycles per client at each "
            "concurrency after one warm-up cycle per replica; throughput = finished cycles / wall time."
        ),
        (
            f"Decision to effect: {sizes.effect_samples} decisions one at a time; from sending "
            "`runs.create(command=resume)` to the refund row being read in the business database "
            f"(polled every {POLL_SECONDS * 1000:.0f} ms), the pause on one replica and the answer on "
            "the other."
        ),
    ]
    return section


def main() -> None:
    """Run this section alone with the sizes from the command line or `BENCH_*`; print its rows."""
    from pydantic_settings import CliApp  # noqa: PLC0415  (only the command line needs it)
    from rich.progress import Progress  # noqa: PLC0415

    from bench.sizes import BenchSizes  # noqa: PLC0415

    sizes = CliApp.run(BenchSizes)
    started = time.perf_counter()
    with Progress(disable=not sizes.progress) as progress:
        section = measure(sizes, progress)
    print(render_rows(section.rows))
    print(f"\ndetails: {section.details}\n{(time.perf_counter() - started) / 60:.1f} min")


if __name__ == "__main__":
    main()
