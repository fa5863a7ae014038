"""Memory and disk per pending approval: how much a waiting thread costs the dev server.

The Python heap the server keeps (traced inside it, `server.insight.heap_probe`), resident memory
of its process tree and bytes under its `.langgraph_api/` and data folders, before and after each
batch of pending approvals of one agent. The agents take turns in
`ROUNDS` rounds (ours, stock, then stock, ours, ...): a step in the process's memory (the runtime
pickles its whole store every 10 s, and the allocator keeps the high-water mark) then falls on
either agent alike, instead of on whichever went first.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from bench.pending import PENDING_AMOUNT, add_pending
from bench.probes import disk_bytes, disk_bytes_by_database, heap_bytes, resident_bytes
from bench.report import Row, Section
from bench.served import OURS, STOCK, heap_probe_file, server_state_dirs

if TYPE_CHECKING:
    from pathlib import Path

    from langgraph_sdk.client import LangGraphClient
    from rich.progress import Progress

    from bench.sizes import BenchSizes
    from services.registry import Services
    from tests.devserver import DevServer

ROUNDS = 4
"""Batches per agent: `footprint_pending` is split into this many, taken in turns."""

FLUSH_RETRIES = 5
"""Heap readings taken at most, each after the runtime's flush in progress ended."""
FLUSH_WAIT_LIMIT = 60.0
"""Seconds waited for one flush of the runtime's snapshot to end."""
NOT_FOLDERS = frozenset({"rss", "heap", "disk"})
"""The keys of a snapshot's growth that are not a state folder's bytes."""
HEAP_LIMIT = (
    "what a pending approval keeps in the server's heap: the runtime's thread record (its state and "
    "interrupts), runs and retained stream events (checkpoints live in SQLite, outside the Python heap). "
    "Ours adds the longer value (who may decide, the deadline, the reviewer's description); the inbox's "
    "rows are in the layer's store on disk, not in the heap. The answer schema is published by "
    "reference: as a copy of 3.5 KB it was about 26 KB of Python objects per approval (47.7 KB ours, "
    "16.6 KB stock in a 200-approval run; 21.2 KB ours by reference)"
)
MEMORY_LIMIT = (
    "RSS of a Python process: allocator reuse and the runtime's periodic pickling make it move in "
    "steps (the heap row is the measure; this one is kept as a check on it)"
)
DISK_LIMIT = (
    "the runtime's snapshot of threads and runs (`.langgraph_api/`) plus the data folder's SQLite "
    "databases, WAL included: the checkpoints (`checkpoints.db`), the business rows (`business.db`) and "
    "the layer's store (`hitl.db`: every thread the server ran has its records there, the stock agent's "
    "too; ours adds its inbox rows and its audit trail); per database in the notes"
)


def snapshot(server: DevServer) -> dict[str, int]:
    """Resident bytes of the server tree; bytes on disk of the runtime's folder and of each data database."""
    folders = server_state_dirs(server)
    disk = {f"data/{name}": size for name, size in disk_bytes_by_database(folders["data"]).items()}
    return {
        "rss": resident_bytes(server.process.pid),
        ".langgraph_api": disk_bytes(folders[".langgraph_api"]),
        **disk,
    }


async def with_heap(server: DevServer) -> dict[str, int]:
    """`snapshot` and the server's traced Python heap (`heap`), read while the runtime is not flushing.

    The in-memory runtime pickles everything it holds to `.langgraph_api/` every 10 s, in a thread,
    through a `.tmp` file; its pickler's memo is traced too (24 MB once, held over two readings while
    tracing slowed the pickling). A reading taken while that file exists, or made before a flush that
    began meanwhile ended, is taken again.
    """
    folder = server_state_dirs(server)[".langgraph_api"]
    for _ in range(FLUSH_RETRIES):
        await _not_flushing(folder)
        heap = await heap_bytes(server.process.pid, heap_probe_file(server.log.parent))
        if not _flushing(folder):
            break
    return {**snapshot(server), "heap": heap}


def _flushing(folder: Path) -> bool:
    """Whether the runtime is writing its snapshot into `folder` now."""
    return any(folder.glob("*.tmp"))


async def _not_flushing(folder: Path) -> None:
    """Wait (up to `FLUSH_WAIT_LIMIT` seconds) until the runtime's flush into `folder` is done."""
    waited = 0.0
    while _flushing(folder) and waited < FLUSH_WAIT_LIMIT:
        await asyncio.sleep(0.1)
        waited += 0.1


async def measure(
    server: DevServer, client: LangGraphClient, services: Services, sizes: BenchSizes, progress: Progress
) -> Section:
    """Per-approval growth of memory and disk for `sizes.footprint_pending` approvals of each agent."""
    count = sizes.footprint_pending
    batches = [count // ROUNDS + (1 if i < count % ROUNDS else 0) for i in range(ROUNDS)]
    await heap_bytes(server.process.pid, heap_probe_file(server.log.parent))  # tracing starts
    await asyncio.sleep(sizes.flush_wait)
    growth_sums: dict[str, dict[str, float]] = {OURS: {}, STOCK: {}}
    seconds: dict[str, float] = {OURS: 0.0, STOCK: 0.0}
    snapshots: list[dict[str, Any]] = [{"after": "start", **await with_heap(server)}]
    for turn, batch in enumerate(b for b in batches if b):
        for agent in (OURS, STOCK) if turn % 2 == 0 else (STOCK, OURS):
            window = sizes.fill_window
            rate = await add_pending(client, services, agent, batch, window=window, progress=progress)
            seconds[agent] += batch / rate
            await asyncio.sleep(sizes.flush_wait)
            before, after = snapshots[-1], await with_heap(server)
            snapshots.append({"after": f"{agent} batch {turn + 1}", **after})
            for key, value in after.items():
                growth_sums[agent][key] = growth_sums[agent].get(key, 0.0) + value - before.get(key, 0)
    await heap_bytes(server.process.pid, heap_probe_file(server.log.parent), stop=True)
    growth = {agent: _per_approval(sums, count) for agent, sums in growth_sums.items()}
    rates = {agent: count / spent for agent, spent in seconds.items()}
    return Section(
        name="footprint",
        title="4. Memory and disk per pending approval",
        reference="the stock agent's pending approvals, made the same way in the same server, taking turns.",
        rows=[
            Row(
                "footprint",
                "server Python heap per pending approval",
                "KB",
                growth[OURS]["heap"] / 1024,
                growth[STOCK]["heap"] / 1024,
                HEAP_LIMIT,
                "≤ 30 KB (ours)",
            ),
            Row(
                "footprint",
                "server RSS per pending approval",
                "KB",
                growth[OURS]["rss"] / 1024,
                growth[STOCK]["rss"] / 1024,
                MEMORY_LIMIT,
            ),
            Row(
                "footprint",
                "disk per pending approval",
                "KB",
                growth[OURS]["disk"] / 1024,
                growth[STOCK]["disk"] / 1024,
                DISK_LIMIT,
            ),
        ],
        details={
            "pending_per_agent": count,
            "batches_per_agent": batches,
            "snapshots_bytes": snapshots,
            "growth_bytes_per_approval": growth,
            "pending_per_second": rates,
        },
        notes=[
            (
                f"{count} pending approvals per agent ('Refund {PENDING_AMOUNT:g} on order B…', each its "
                f"own order and thread), after the throughput rounds, in {ROUNDS} batches per agent taken "
                "in turns (ours, stock, stock, ours, ...); memory and disk read after each batch, after a "
                f"{sizes.flush_wait:.0f} s wait for the runtime's flush; an agent's growth is the sum "
                "over its batches."
            ),
            (
                "Heap: `tracemalloc` inside the server (`server.insight.heap_probe`, asked by a signal), on "
                "from just before the first batch to just after the last: the bytes still allocated after "
                "a `gc.collect()`, read after each batch while the runtime is not writing its snapshot "
                "(its pickler's memo is traced too); tracing slows the server while on, so it is off for "
                "every other section."
            ),
            "RSS is VmRSS of the server process and its children (`/proc/<pid>/status`).",
            disk_note(growth),
        ],
    )


def disk_note(growth: dict[str, dict[str, float]]) -> str:
    """What each folder and database of each agent grew by per approval (those that grew a byte or more)."""
    return "Disk per folder and database (bytes per approval): " + "; ".join(
        f"{agent}: " + ", ".join(f"{k} {v:.0f}" for k, v in per.items() if k not in NOT_FOLDERS and v >= 1)
        for agent, per in growth.items()
    )


def _per_approval(growth: dict[str, float], count: int) -> dict[str, float]:
    per = {key: value / count for key, value in growth.items()}
    per["disk"] = sum(v for k, v in per.items() if k not in NOT_FOLDERS)
    return per


def absolute_footprint(server: DevServer, pending: int) -> dict[str, Any]:
    """The server's whole footprint now, with `pending` approvals waiting (for the inbox notes)."""
    return {"pending": pending, **snapshot(server)}
