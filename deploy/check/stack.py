"""The compose stack as a user runs it: a clean copy of the checkout, its deploy/.env, the README's commands.

The copy holds the checkout's files (tracked and new, none that git ignores) in a git repository of
its own, so the check can make a newer commit there for the rolling upgrade. Every name the stack
gets starts with the run's project name, and `remove` deletes by those names. Not for what the
stack is checked for (`deploy.check.steps`).
"""

from __future__ import annotations

import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from deploy.check.images import PREFIX, digest
from deploy.check.podman import CommandError, say

if TYPE_CHECKING:
    from deploy.check.images import BaseImages
    from deploy.check.podman import Podman

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = "deploy/docker-compose.yml"
ENV_FILE = "deploy/.env"
SERVICES = ("langgraph-postgres", "langgraph-redis", "billing", "replica-1", "replica-2")
USERS = ("requester1:requester", "requester2:requester", "reviewer1:reviewer", "supervisor1:supervisor")
PIP_INDEX_KEYS = ("index-url", "extra-index-url", "trusted-host", "timeout", "default-timeout", "retries")
"""What of the machine's pip configuration the replica build gets (the CA bundle goes as its own secret)."""


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def checkout_copy(target: Path) -> None:
    """Copy the checkout's files (tracked and untracked, not ignored) to `target`, as one git commit.

    With the web app's build (`web/dist`, which git ignores) when the checkout has one: the image
    serves it at `/app/`, as it does for a user who built it before `compose up --build`.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted in the work tree is still listed as cached
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    built = ROOT / "web" / "dist"
    if (built / "index.html").is_file():  # the web app a user built (`make dev`) before `compose up --build`
        shutil.copytree(built, target / "web" / "dist")
    git(target, "init", "-q")
    commit(target, "the checkout under test")


def git(repository: Path, *args: str) -> str:
    """`git ARGS` in `repository`, as the check's own author; its output."""
    command = ["git", "-c", "user.name=deploy-check", "-c", "user.email=deploy-check@localhost", *args]
    return subprocess.run(command, cwd=repository, capture_output=True, text=True, check=True).stdout


def commit(repository: Path, message: str) -> str:
    """Commit everything in `repository`; the new commit's hash."""
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", message)
    return git(repository, "rev-parse", "HEAD").strip()


def pip_build_config() -> tuple[str, str]:
    """The machine's pip index settings (as a pip.conf) and the CA bundle its pip trusts (a path or '')."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    ).stdout
    return pip_index_settings(listed)


def pip_index_settings(listed: str) -> tuple[str, str]:
    """From `pip config list` output: a pip.conf of the index settings a build can reach, and the CA bundle.

    Local folders (file:// indexes, find-links) are not inside the build: only what a URL reaches.
    """
    settings: dict[str, str] = {}
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        settings[key.rsplit(".", 1)[-1]] = value.strip().strip("'\"")
    lines = ["[global]"]
    for name in PIP_INDEX_KEYS:
        values = [v for v in settings.get(name, "").split() if not v.startswith("file:")]
        if values:
            lines.append(f"{name} = {' '.join(values)}")
    cert = settings.get("cert", "")
    return "\n".join(lines) + "\n", cert if cert and Path(cert).is_file() else ""


@dataclass
class Stack:
    """One run's compose project: its copy of the checkout, its settings and its containers."""

    podman: Podman
    compose: Path
    workdir: Path
    project: str
    tokens: dict[str, str] = field(default_factory=dict)
    ports: tuple[int, int] = (0, 0)
    passwords: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    images_used: str = ""

    @property
    def copy(self) -> Path:
        """The clean copy of the checkout the stack is built from."""
        return self.workdir / "checkout"

    @property
    def replica_image(self) -> str:
        """The tag compose gives the replica image (REPLICA_IMAGE)."""
        return f"{self.project}-replicas"

    @property
    def urls(self) -> tuple[str, str]:
        """replica-1's and replica-2's published addresses."""
        return (f"http://127.0.0.1:{self.ports[0]}", f"http://127.0.0.1:{self.ports[1]}")

    def container(self, service: str) -> str:
        """The container podman-compose names for `service`."""
        return f"{self.project}_{service}_1"

    def prepare(self, images: BaseImages) -> None:
        """Copy the checkout and write its deploy/.env from deploy/.env.example, as the README says."""
        self.copy.mkdir(parents=True)
        checkout_copy(self.copy)
        shutil.copy(
            self.copy / "deploy/.env.example", self.copy / ENV_FILE
        )  # cp deploy/.env.example deploy/.env
        self.ports = (free_port(), free_port())
        self.tokens = {user.split(":")[0]: secrets.token_urlsafe(24) for user in USERS}
        self.passwords = {name: secrets.token_hex(16) for name in ("POSTGRES", "BUSINESS_DB", "HITL_DB")}
        pip_conf, pip_cert = pip_build_config()
        (self.workdir / "pip.conf").write_text(pip_conf)
        receipt_key = subprocess.run(
            [sys.executable, "-m", "hitl.proof.receipt_keys", "new"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        self.images_used = images.python
        self.fill_env(
            {
                "PORT": str(self.ports[0]),
                "REPLICA_2_PORT": str(self.ports[1]),
                "PUBLISH_ADDRESS": "127.0.0.1",
                "REPLICA_IMAGE": self.replica_image,
                "PYTHON_IMAGE": images.python,
                "POSTGRES_IMAGE": images.postgres,
                "REDIS_IMAGE": images.redis,
                "PIP_BUILD_CONFIG": str(self.workdir / "pip.conf"),
                "PIP_BUILD_CERT": pip_cert,
                "POSTGRES_PASSWORD": self.passwords["POSTGRES"],
                "BUSINESS_DB_PASSWORD": self.passwords["BUSINESS_DB"],
                "HITL_DB_PASSWORD": self.passwords["HITL_DB"],
                "HITL_USERS": ",".join(f"{user}:{self.tokens[user.split(':')[0]]}" for user in USERS),
                "HITL_SEAL_KEY": secrets.token_hex(32),
                "BILLING_MCP_AUTHORIZATION": f"Bearer {secrets.token_hex(16)}",
                "HITL_RECEIPT_KEY": receipt_key,
                "HITL_PUBLIC_URL": self.urls[0],
            }
        )

    def fill_env(self, values: dict[str, str]) -> None:
        """Set `values` on their `NAME=` lines of deploy/.env (each must be there, as a user finds it)."""
        path = self.copy / ENV_FILE
        text = path.read_text()
        for name, value in values.items():
            line = f"{name}={value}".replace("\\", "\\\\")  # a literal backslash stays one (the key's \\n)
            text, found = re.subn(rf"^{name}=.*$", line, text, flags=re.MULTILINE)
            if not found:
                msg = f"deploy/.env.example has no {name}= line to fill in"
                raise CommandError(msg)
        path.write_text(text)

    def compose_command(self, *args: str) -> list[str | Path]:
        """The README's `docker compose -f ... --env-file ... --profile replicas --profile billing ARGS`."""
        return [
            self.compose,
            "-p",
            self.project,
            "-f",
            COMPOSE_FILE,
            "--env-file",
            ENV_FILE,
            "--profile",
            "replicas",
            "--profile",
            "billing",
            *args,
        ]

    def compose_run(self, *args: str, timeout: float = 1800) -> str:
        """Run the compose command with ARGS in the copy; its output."""
        done = self.podman.run(*self.compose_command(*args), cwd=self.copy, timeout=timeout)
        return done.stdout + done.stderr

    def up(self) -> None:
        """`compose up -d --build`, then keep the replica image's dependency layer for the next run."""
        self.compose_run("up", "-d", "--build")
        self.keep_dependency_layer()

    def keep_dependency_layer(self) -> None:
        """Tag the `pip install -r constraints-replicas.txt` layer: removing the run's images keeps it.

        Podman removes an image's untagged parent layers with it; this one is the slow one to build.
        """
        history = self.podman.podman(
            "image",
            "history",
            "--no-trunc",
            "--format",
            "{{.ID}}\t{{.CreatedBy}}",
            self.replica_image,
            quiet=True,
        )
        for line in history.stdout.splitlines():
            layer, _, created_by = line.partition("\t")
            if "-r constraints-replicas.txt" in created_by and not layer.startswith("<"):
                key = digest(self.images_used, (self.copy / "constraints-replicas.txt").read_bytes())
                self.podman.podman("tag", layer, f"{PREFIX}-replica-dependencies:{key}")
                return
        say("  the replica image's dependency layer was not found: the next run builds it again")

    def sql(self, database: str, statement: str) -> list[list[str]]:
        """Rows of `statement` run by psql as postgres inside the PostgreSQL container (`|`-separated)."""
        done = self.podman.podman(
            "exec",
            self.container("langgraph-postgres"),
            "psql",
            "-v",
            "ON_ERROR_STOP=1",
            "-U",
            "postgres",
            "-d",
            database,
            "-Atc",
            statement,
            quiet=True,
        )
        return [line.split("|") for line in done.stdout.splitlines() if line]

    def connect_as(self, role: str, database: str) -> tuple[int, str]:
        """The exit code and output of psql as `role` (with its password) connecting to `database` by TCP."""
        password = {"business": self.passwords["BUSINESS_DB"], "hitl": self.passwords["HITL_DB"]}[role]
        done = self.podman.podman(
            "exec",
            "-e",
            f"PGPASSWORD={password}",
            self.container("langgraph-postgres"),
            "psql",
            "-h",
            "127.0.0.1",
            "-U",
            role,
            "-d",
            database,
            "-Atc",
            "SELECT current_user",
            check=False,
            quiet=True,
        )
        return done.returncode, (done.stdout + done.stderr).strip()

    def remove(self) -> None:
        """Stop and remove this run's containers, volumes, network and image by their names, and its copy."""
        say(f"removing {self.project}: containers, volumes, network, image")
        if (self.copy / ENV_FILE).is_file():  # then by name, whatever compose could not remove
            self.podman.run(
                *self.compose_command("down", "-v", "-t", "5"), cwd=self.copy, check=False, timeout=300
            )
        for container in self.podman.names("container", self.project):
            self.podman.podman("rm", "-f", "-t", "0", container, check=False)
        for volume in self.podman.names("volume", self.project):
            self.podman.podman("volume", "rm", "-f", volume, check=False)
        for network in self.podman.names("network", self.project):
            self.podman.podman("network", "rm", "-f", network, check=False)
        for image in self.podman.names("image", self.project):
            self.podman.podman("rmi", "-f", image, check=False)
        # The replica images this run built, then tagged anew (compose builds once per replica; the upgrade
        # builds again). Not forced: an image a container uses stays. Build layers stay: they are the cache.
        for image in self.podman.untagged_images_since(self.started):
            self.podman.podman("rmi", image, check=False, quiet=True)
        shutil.rmtree(self.workdir, ignore_errors=True)
