"""A PostgreSQL and a Redis of the fault test's own, so it can restart them: other tests never see it.

`OwnPostgres` runs `initdb` into a temporary directory and `pg_ctl` on a free loopback port
(trust auth; as the `postgres` system user when the test runs as root, which PostgreSQL
refuses); `OwnRedis` runs `redis-server` on a free port, without persistence. Both are started,
restarted and stopped by their own PIDs and data directories, never by name.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

from server.runtime.replicas import free_port

POSTGRES_BINS = (Path("/usr/local/bin"), *sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True))
READY_SECONDS = 30.0


def postgres_binary(name: str) -> str:
    """The path of PostgreSQL's `name` (initdb, pg_ctl), or a failure saying where it was looked for."""
    for folder in POSTGRES_BINS:
        if (folder / name).exists():
            return str(folder / name)
    found = shutil.which(name)
    if found is None:
        msg = f"{name} not found in {', '.join(map(str, POSTGRES_BINS))} or on PATH: install PostgreSQL"
        raise FileNotFoundError(msg)
    return found


class OwnPostgres:
    """A PostgreSQL server in `workdir`, on a port of its own."""

    def __init__(self) -> None:
        """Make the cluster (initdb) in a new temporary directory; `start` serves it."""
        self.workdir = Path(tempfile.mkdtemp(prefix="hitl-own-postgres-"))
        self.data = self.workdir / "pgdata"
        self.log = self.workdir / "postgres.log"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}"
        self._as_owner: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run it as its own system user
            self._as_owner = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.workdir, "postgres")
        self._run(postgres_binary("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust")

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self._as_owner, *command], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            said = done.stderr[-2000:] or done.stdout[-2000:]
            msg = f"{Path(command[0]).name} {command[1]} failed ({done.returncode}): {said}"
            raise RuntimeError(msg)

    def start(self) -> None:
        """Start the server and wait until it answers."""
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c max_connections=200"
        options += " -c fsync=off"  # a test's data: no need to survive the machine
        pg_ctl = postgres_binary("pg_ctl")
        self._run(pg_ctl, "start", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w")
        deadline = time.monotonic() + READY_SECONDS
        while True:
            try:
                with psycopg.connect(f"{self.url}/postgres", connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`immediate`: as if it crashed, every connection cut)."""
        self._run(postgres_binary("pg_ctl"), "stop", "-D", str(self.data), "-m", mode, "-w")

    def restart(self, down_seconds: float) -> None:
        """Crash-stop, stay down `down_seconds`, start again."""
        self.stop("immediate")
        time.sleep(down_seconds)
        self.start()

    def remove(self) -> None:
        """Stop (if running) and delete the cluster and its directory."""
        if (self.data / "postmaster.pid").exists():
            self.stop("immediate")
        shutil.rmtree(self.workdir, ignore_errors=True)


class OwnRedis:
    """A `redis-server` on a port of its own, in memory only."""

    def __init__(self, workdir: Path) -> None:
        """Serve from `workdir` once started."""
        self.workdir = workdir
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server and wait until it answers PING."""
        binary = shutil.which("redis-server")
        if binary is None:
            msg = "redis-server not found on PATH: install Redis"
            raise FileNotFoundError(msg)
        with (self.workdir / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(
                [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + READY_SECONDS
        while not self.answers():
            if time.monotonic() > deadline or self.process.poll() is not None:
                msg = f"redis-server on port {self.port} did not answer PING"
                raise RuntimeError(msg)
            time.sleep(0.05)

    def answers(self) -> bool:
        """Whether the server answers PING now."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server by its PID."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)

    def restart(self, down_seconds: float) -> None:
        """Kill (SIGKILL: everything in it is lost), stay down `down_seconds`, start again."""
        self.stop(signal.SIGKILL)
        time.sleep(down_seconds)
        self.start()
