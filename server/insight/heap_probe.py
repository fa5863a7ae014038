"""The benchmarks' heap probe: how much Python heap the server holds, measured inside it (`tracemalloc`).

Off unless the server starts with `HITL_HEAP_PROBE` naming a file. Then each SIGUSR1 collects
garbage, starts tracing if it is not on yet, and writes `{"reading": n, "traced_bytes": b}` to that
file (replaced whole, so a reader never sees half of it); SIGUSR2 stops tracing and writes a
reading of 0. `b` counts the blocks allocated since the
first signal that are still alive: two readings around a batch of pending approvals give what the
batch keeps, without the allocator's reuse and high-water marks that make RSS move in steps.
Tracing slows every allocation, so the bench turns it on only for its memory batches. There is no
HTTP route: only whoever can signal the process can read it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import tracemalloc
from pathlib import Path

ENV = "HITL_HEAP_PROBE"
SIGNAL = signal.SIGUSR1
STOP = signal.SIGUSR2


def install(loop: asyncio.AbstractEventLoop) -> bool:
    """Answer SIGUSR1 on `loop` when `HITL_HEAP_PROBE` names a file; whether it did."""
    target = os.environ.get(ENV)
    if not target:
        return False
    path = Path(target)
    readings = 0
    writing: set[asyncio.Task[None]] = set()

    def write(traced: int) -> None:  # the reading is taken on the loop; the file is written off it
        nonlocal readings
        readings += 1
        task = loop.create_task(asyncio.to_thread(_write, path, readings, traced))
        writing.add(task)
        task.add_done_callback(writing.discard)

    def read() -> None:
        gc.collect()
        if not tracemalloc.is_tracing():
            tracemalloc.start()
        write(tracemalloc.get_traced_memory()[0])

    def stop() -> None:
        tracemalloc.stop()
        write(0)

    loop.add_signal_handler(SIGNAL, read)
    loop.add_signal_handler(STOP, stop)
    return True


def _write(path: Path, reading: int, traced: int) -> None:
    written = path.with_suffix(".tmp")
    written.write_text(json.dumps({"reading": reading, "traced_bytes": traced}))
    written.replace(path)
