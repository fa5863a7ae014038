"""What the server process tree holds: resident memory from `/proc`, bytes on disk under a folder.

Linux only (`/proc/<pid>/status`); no psutil. Reads, never signals.
"""

from __future__ import annotations

from pathlib import Path


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
