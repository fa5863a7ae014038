"""A script run by a fresh Python interpreter at the repository root: for what an import does once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def last_line(script: str, env: dict[str, str] | None = None) -> str:
    """The last line `script` printed; its stderr is the failure message when it exits non-zero."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]
