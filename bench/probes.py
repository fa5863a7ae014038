"""What the server holds: resident memory, bytes on disk, and the Python heap it reports.

Resident memory of the process tree from `/proc`, bytes on disk under a folder, the heap from
`server.insight.heap_probe` (asked by a signal).

Linux only (`/proc/<pid>/status`); no psutil.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from server.insight import heap_probe

HEAP_TIMEOUT = 60.0
"""How long a heap reading may take (a full garbage collection of a large server)."""


async def heap_bytes(pid: int, readings: Path, *, stop: bool = False) -> int:
    """The traced Python heap of the server `pid` now: it writes its next reading to `readings`.

    The first call starts the server's tracing (and reads what little it traced so far); with
    `stop`, tracing ends (every allocation is slower while it runs) and the reading is 0.

    Raises:
        RuntimeError: when no new reading arrives within `HEAP_TIMEOUT`.
    """
    before = _reading(readings)
    os.kill(pid, heap_probe.STOP if stop else heap_probe.SIGNAL)
    started = time.perf_counter()
    while (found := _reading(readings)) is None or found["reading"] == (before or {}).get("reading"):
        if time.perf_counter() - started > HEAP_TIMEOUT:
            msg = f"the server {pid} wrote no heap reading to {readings} within {HEAP_TIMEOUT:.0f} s"
            raise RuntimeError(msg)
        await asyncio.sleep(0.05)
    return int(found["traced_bytes"])


def _reading(path: Path) -> dict[str, int] | None:
    try:
        return dict(json.loads(path.read_text()))
    except FileNotFoundError:
        return None


def cpu_seconds(pid: int) -> float:
    """User and system CPU time `pid` has used so far (`/proc/<pid>/stat`)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def resident_bytes(pid: int) -> int:
    """VmRSS of `pid` and every process below it, in bytes."""
    return sum(_vm_rss(p) for p in [pid, *_descendants(pid)])


def _vm_rss(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:  # it ended between the listing and the read
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def disk_bytes_by_database(folder: Path) -> dict[str, int]:
    """`disk_bytes` of `folder` per SQLite database in it, each with its journal (`-wal`, `-shm`)."""
    sizes: dict[str, int] = {}
    for path in folder.glob("*") if folder.exists() else ():
        try:
            size = path.stat().st_size if path.is_file() else disk_bytes(path)
        except FileNotFoundError:  # a temporary file the server just renamed
            continue
        name = path.name.removesuffix("-wal").removesuffix("-shm").removesuffix("-journal")
        sizes[name] = sizes.get(name, 0) + size
    return sizes


def disk_bytes(folder: Path) -> int:
    """Apparent size of every file under `folder` (0 when it does not exist yet)."""
    if not folder.exists():
        return 0
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file():
                total += path.stat().st_size
        except FileNotFoundError:  # a temporary file the server just renamed
            continue
    return total
