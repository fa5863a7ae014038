"""`make dev`'s server: `langgraph dev` restarted on a change of code, ended by a configuration error.

`langgraph dev`'s own reloader kept a dead server when it could not start: a bad HITL_USERS or a
group nobody is in printed its error, then the reloader waited for a change of code, which a
setting is not, and said nothing more. This runs `langgraph dev --no-reload` and starts it again
when a Python file, `langgraph.json` or `.env` changes. When the server stops of itself, it asks
`start_checks` (a new process, reading the files as they are now) whether the configuration is at
fault: then `make dev` ends with that error last (exit 3); otherwise the code is, and the last
line says that it waits for a fix. Not for the tests' or the replicas' servers, which start
`langgraph dev --no-reload` or `langhost` themselves and stop on any error.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from watchfiles import Change, DefaultFilter, watch

from server.runtime.start_checks import CONFIGURATION_ERROR

if TYPE_CHECKING:
    from collections.abc import Iterable

LANGGRAPH = Path(sys.executable).parent / "langgraph"
WATCHED_FILES = frozenset({"langgraph.json", ".env"})
"""Besides Python files: what the server reads at start, so a change to it restarts the server."""
POLL_MS = 500
"""How often the watcher hands back control with no change, to see whether the server stopped."""
STOP_SECONDS = 30
"""How long a server asked to stop (SIGTERM: it flushes its threads) may take before it is killed."""


class CodeAndSettings(DefaultFilter):
    """Python files, `langgraph.json` and `.env`; nothing under `.venv`, `node_modules`, `.git`, caches."""

    def __call__(self, change: Change, path: str) -> bool:
        """Whether a change of `path` restarts the server."""
        name = Path(path).name
        return (name.endswith(".py") or name in WATCHED_FILES) and super().__call__(change, path)


def say(line: str) -> None:
    """One line of `make dev`'s own, on stderr beside the server's log."""
    sys.stderr.write(f"make dev: {line}\n")
    sys.stderr.flush()


def serve(command: list[str], root: Path) -> int:
    """Run `command` (the server) in `root`, again after each change; the exit status of `make dev`.

    Returns:
        3 when the server stopped and the configuration is why (its error printed last).
    """
    server: subprocess.Popen[bytes] | None = subprocess.Popen(command, cwd=root)  # noqa: S603  (our command)
    try:
        watched = watch(root, watch_filter=CodeAndSettings(), rust_timeout=POLL_MS, yield_on_timeout=True)
        for changed in watched:
            if server is not None and not changed and server.poll() is not None:
                if _configuration_is_wrong(root):
                    return CONFIGURATION_ERROR
                say(
                    f"the server stopped (exit status {server.returncode}; its error is above). It waits for "
                    "a fix: save a Python file, langgraph.json or .env and it starts again (Ctrl+C ends it)."
                )
                server = None
            elif changed:
                if server is not None:
                    _stop(server)
                say(f"{_names(root, changed)} changed: starting the server again")
                server = subprocess.Popen(command, cwd=root)  # noqa: S603  (our command)
        return 0
    finally:
        if server is not None:
            _stop(server)


def _configuration_is_wrong(root: Path) -> bool:
    """Whether `start_checks` finds the configuration at fault (it prints the error itself)."""
    asked = subprocess.run(
        [sys.executable, "-m", "server.runtime.start_checks"], cwd=root, check=False, timeout=300
    )
    return asked.returncode == CONFIGURATION_ERROR


def _names(root: Path, changed: Iterable[tuple[Change, str]]) -> str:
    paths = sorted({os.path.relpath(path, root) for _, path in changed})
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")  # noqa: PLR2004


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is not None:
        return
    server.terminate()
    try:
        server.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=STOP_SECONDS)


def _exit(_signum: int, _frame: object) -> None:
    raise SystemExit(0)


def main() -> None:
    """Serve on `--port` until Ctrl+C; end at once when the configuration keeps the server from starting."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=2024)
    args = parser.parse_args()
    command = [str(LANGGRAPH), "dev", "--host", "127.0.0.1", "--port", str(args.port), "--no-browser"]
    command += ["--no-reload", "--n-jobs-per-worker", "10"]
    signal.signal(signal.SIGTERM, _exit)  # leave through `finally`, which stops the server
    try:
        status = serve(command, Path.cwd().resolve())
    except KeyboardInterrupt:  # Ctrl+C: the server had it too, and was stopped on the way out
        status = 0
    raise SystemExit(status)


if __name__ == "__main__":
    main()
