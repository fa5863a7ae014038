"""Where and with what the numbers were taken: machine, package versions, source revision."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from bench.served import ROOT

PACKAGES = (
    "deepagents",
    "langchain",
    "langchain-core",
    "langgraph",
    "langgraph-api",
    "langgraph-runtime-inmem",
    "langgraph-cli",
    "langgraph-sdk",
    "langgraph-checkpoint-sqlite",
    "pydantic",
)


def machine() -> dict[str, str]:
    """CPU, cores, memory, OS, Python and the source revision."""
    return {
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "memory": f"{_mem_total_gib():.1f} GiB",
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "revision": _revision(),
    }


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: other work on the machine shows here."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def versions() -> dict[str, str]:
    """Installed versions of the packages the numbers depend on."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except FileNotFoundError:
        pass
    return platform.processor() or "unknown"


def _mem_total_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024**2
    except FileNotFoundError:
        pass
    return 0.0


def _revision() -> str:
    """`git rev-parse` and whether tracked files differ from it; read-only (no optional locks)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "diff", "--quiet", "HEAD", "--"], cwd=ROOT, env=env, check=False
        ).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head} (plus uncommitted changes)" if dirty else head
