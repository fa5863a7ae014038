"""Podman as the check runs it: its own containers.conf, and every command it runs printed first.

On these machines podman needs runc (crun fails on hybrid cgroups), the cgroupfs manager (no
systemd) and ulimits below the machine's; a containers.conf of the check's own says so
(`CONTAINERS_CONF`), leaving the machine's configuration alone. Not for what a container holds.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""


class CommandError(RuntimeError):
    """A command the check ran failed; the message holds its output's tail."""


class Podman:
    """Runs podman and podman-compose with the check's containers.conf."""

    def __init__(self, workdir: Path, compose: Path) -> None:
        """Write the containers.conf into `workdir`; `compose` is the podman-compose executable."""
        self.conf = workdir / "containers.conf"
        self.conf.write_text(CONTAINERS_CONF)
        self.compose_command = compose

    @property
    def env(self) -> dict[str, str]:
        """The environment of every podman command: the machine's, with the check's containers.conf."""
        return {**os.environ, "CONTAINERS_CONF": str(self.conf)}

    def run(
        self,
        *args: str | Path,
        check: bool = True,
        timeout: float = 600,
        cwd: Path | None = None,
        quiet: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command (podman, podman-compose, ...) with the check's environment; its result."""
        command = [str(arg) for arg in args]
        if not quiet:
            print("  $", shlex.join(command), flush=True)
        done = subprocess.run(
            command,
            env=self.env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
        if check and done.returncode != 0:
            tail = (done.stdout + done.stderr)[-4000:]
            msg = f"{shlex.join(command)} exited {done.returncode}:\n{tail}"
            raise CommandError(msg)
        return done

    def podman(
        self, *args: str | Path, check: bool = True, timeout: float = 600, quiet: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """`podman ARGS`."""
        return self.run("podman", *args, check=check, timeout=timeout, quiet=quiet)

    def import_folder(self, root: Path, tag: str) -> None:
        """`tar -C ROOT -c . | podman import - TAG`: a root file system as an image."""
        print(f"  $ tar -C {root} -c . | podman import - {tag}", flush=True)
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        done = subprocess.run(
            ["podman", "import", "-", tag],
            stdin=tar.stdout,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        if tar.stdout:
            tar.stdout.close()
        if tar.wait() != 0 or done.returncode != 0:
            msg = f"podman import of {root} failed:\n{done.stderr[-4000:]}"
            raise CommandError(msg)

    def exists(self, kind: str, name: str) -> bool:
        """Whether podman has the `kind` (image, container, volume, network) called `name`."""
        return self.podman(kind, "exists", name, check=False, quiet=True).returncode == 0

    def inspect(self, name: str) -> dict[str, Any]:
        """`podman inspect` of one container or image."""
        [found] = json.loads(self.podman("inspect", name, quiet=True).stdout)
        return dict(found)

    def healthy(self, container: str) -> bool:
        """Whether `container`'s own health check passes now (`podman healthcheck run`).

        Podman 4.3 runs health checks on systemd timers, which these machines lack, so the check runs
        each one itself when it needs the answer.
        """
        return self.podman("healthcheck", "run", container, check=False, quiet=True).returncode == 0

    def untagged_images_since(self, started: float) -> list[str]:
        """The IDs of images left without a name (a build's tag moved on) that were made after `started`."""
        listed = self.podman(
            "images", "--filter", "dangling=true", "--format", "json", quiet=True, check=False
        )
        return [
            image["Id"] for image in json.loads(listed.stdout or "[]") if image["Created"] >= int(started)
        ]

    def names(self, kind: str, prefix: str) -> list[str]:
        """The names of the `kind`s (container, volume, network, image) whose name starts with `prefix`."""
        if kind == "image":
            listed = self.podman("images", "--format", "{{.Repository}}:{{.Tag}}", quiet=True, check=False)
            return [n for n in listed.stdout.split() if n.removeprefix("localhost/").startswith(prefix)]
        fields = {
            "container": ("ps", "-a", "--format", "{{.Names}}"),
            "volume": ("volume", "ls", "--format", "{{.Name}}"),
            "network": ("network", "ls", "--format", "{{.Name}}"),
        }
        listed = self.podman(*fields[kind], quiet=True, check=False)
        return [name for name in listed.stdout.split() if name.startswith(prefix)]


def say(text: str) -> None:
    """One line of the check's progress."""
    print(text, file=sys.stdout, flush=True)
