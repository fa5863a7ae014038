"""Key files written whole before anyone can read them, by one process of many starting at once.

Several servers, replicas or test workers may find a key file missing at the same moment. Each
writes its candidate to a private file of its own and links it into place in one step: the first
link wins, and a reader that sees the file sees a whole key, never an empty or half-written one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def create_once(path: Path, content: bytes) -> None:
    """`path` holding `content` (mode 0600), unless another process made it first (then it is kept)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = stage(path, content)
    try:
        os.link(staged, path)
    except FileExistsError:
        pass
    finally:
        staged.unlink(missing_ok=True)


def replace(path: Path, content: bytes) -> None:
    """`path` holding `content` (mode 0600), swapped in whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stage(path, content).replace(path)


def stage(path: Path, content: bytes) -> Path:
    """`content` in a new private (0600) file beside `path`, flushed to disk."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as out:
        out.write(content)
        out.flush()
        os.fsync(out.fileno())
    return Path(name)
