"""Bad configuration fails loudly: a replica started with each one exits naming the variable to fix.

Each case is the running replica-2's own environment with one change, on the stack's network, so
only that change can be what is refused. Not for the start-up checks themselves
(`server.runtime.topology`).
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

from deploy.check.approvals import CheckFailedError, expect
from deploy.check.podman import say
from deploy.check.steps import START_SECONDS

if TYPE_CHECKING:
    from deploy.check.stack import Stack

BAD_CONFIGURATIONS = (
    ("no-seal-key", {"HITL_SEAL_KEY": None}, "HITL_SEAL_KEY must be set"),
    (
        "silent-database",
        {"DATABASE_URL": "langgraph-postgres:5432/business|langgraph-postgres:5999/business"},
        "DATABASE_URL (postgresql+psycopg://business:***@langgraph-postgres:5999/business) does not answer",
    ),
    (
        "missing-database",
        {"DATABASE_URL": "5432/business|5432/business_missing"},
        "DATABASE_URL names database 'business_missing', which does not exist",
    ),
)
"""Each case: its name, what it changes in a replica's environment (None: unset; 'old|new': replace in
the value), and the start-up error it must print."""


def fails_loudly(stack: Stack) -> None:
    """A replica started with each bad configuration exits at start-up with an error naming the variable."""
    inspected = stack.podman.inspect(stack.container("replica-2"))
    environment = dict(item.split("=", 1) for item in inspected["Config"]["Env"])
    network = next(iter(inspected["NetworkSettings"]["Networks"]))
    for name, changes, error in BAD_CONFIGURATIONS:
        env = dict(environment)
        for variable, change in changes.items():
            if change is None:
                env.pop(variable)
            else:
                old, new = change.split("|")
                env[variable] = env[variable].replace(old, new)
        env_file = stack.workdir / f"{name}.env"
        env_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
        container = f"{stack.project}-{name}"
        try:
            done = stack.podman.podman(
                "run",
                "--name",
                container,
                "--network",
                network,
                "--env-file",
                env_file,
                stack.replica_image,
                check=False,
                timeout=START_SECONDS,
            )
        except subprocess.TimeoutExpired as timeout:
            msg = f"{name}: the replica did not stop within {START_SECONDS:.0f} s"
            raise CheckFailedError(msg) from timeout
        finally:
            stack.podman.podman("rm", "-f", "-t", "0", container, check=False, quiet=True)
        output = done.stdout + done.stderr
        expect(done.returncode != 0, f"{name}: the replica started (exit 0)")
        expect(error in output, f"{name}: no {error!r} in its output:\n{output[-3000:]}")
        say(f"  {name}: exit {done.returncode}, says {error!r}")
