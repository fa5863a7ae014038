"""`python -m deploy.check` (`make deploy-check`): build, start, check and remove the compose stack.

Prints each step with its time and ends with a table of them; exits non-zero on the first step
that fails, after removing everything the run made (also on Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from deploy.check import bad_configuration, steps, upgrade
from deploy.check.images import PREFIX, base_images
from deploy.check.podman import Podman, say
from deploy.check.stack import Stack

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType


def main(argv: list[str] | None = None) -> int:
    """Run the check; 0 when every step held."""
    parser = argparse.ArgumentParser(prog="python -m deploy.check", description=__doc__)
    parser.add_argument("--compose", default="podman-compose", help="the podman-compose executable")
    parser.add_argument(
        "--keep", action="store_true", help="leave the stack running after a failure, to look"
    )
    args = parser.parse_args(argv)
    compose = shutil.which(args.compose)
    if compose is None:
        say(f"{args.compose} not found: `make deploy-check` installs it (.venv-deploy)")
        return 2
    workdir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-"))
    podman = Podman(workdir, Path(compose).resolve())  # compose runs in the copy: an absolute path
    stack = Stack(podman, Path(compose).resolve(), workdir, project=f"{PREFIX}-{secrets.token_hex(3)}")
    signal.signal(signal.SIGTERM, _interrupted)
    timings: list[tuple[str, float]] = []
    ledger = steps.Ledger()
    plan: list[tuple[str, Callable[[], object]]] = [
        ("base images (debootstrap, python, postgres, redis)", lambda: stack.prepare(base_images(podman))),
        ("compose up -d --build (the README's command)", stack.up),
        ("every service healthy, /ok on both replicas", lambda: steps.every_service_healthy(stack)),
        ("business and approval databases apart", lambda: steps.databases_kept_apart(stack)),
        ("approval across replicas", lambda: steps.approval_across_replicas(stack, ledger)),
        ("an MCP server's tool approved across replicas", lambda: steps.mcp_approval_across_replicas(stack)),
        ("replica-1 killed (kill -9) and restarted", lambda: steps.kill_and_restart(stack, ledger)),
        ("rolling upgrade to a newer commit", lambda: upgrade.rolling_upgrade(stack, ledger)),
        ("every decision made once, every trail verified", lambda: steps.every_decision_once(stack, ledger)),
        ("bad configuration fails loudly", lambda: bad_configuration.fails_loudly(stack)),
    ]
    failed = False
    try:
        for name, step in plan:
            say(f"== {name}")
            started = time.monotonic()
            try:
                step()
            finally:
                timings.append((name, time.monotonic() - started))
    except (Exception, KeyboardInterrupt) as error:  # noqa: BLE001  (any failure: report, then remove all)
        failed = True
        say(f"FAILED: {type(error).__name__}: {error}")
        _show_logs(stack)
    finally:
        if not (failed and args.keep):
            started = time.monotonic()
            stack.remove()
            timings.append(("everything removed", time.monotonic() - started))
    say("\n".join(f"{seconds:7.1f} s  {name}" for name, seconds in timings))
    say(f"{sum(s for _, s in timings):7.1f} s  in all; {'FAILED' if failed else 'passed'}")
    return 1 if failed else 0


def _show_logs(stack: Stack) -> None:
    """The last lines each container of the run logged, to see why a step failed."""
    for container in stack.podman.names("container", stack.project):
        logs = stack.podman.podman("logs", "--tail", "40", container, check=False, quiet=True)
        say(f"-- {container}\n{(logs.stdout + logs.stderr)[-4000:]}")


def _interrupted(_signal: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
