"""`make serve-replicas N=2`: N replicas of the package on the local PostgreSQL and Redis.

Each replica is `langhost serve` (the open `langgraph-runtime-pg` engine for the stock
langgraph-api, from `.venv-replicas`) on its own loopback port, serving `langgraph.replicas.json`.
They share one runtime database (threads, runs, checkpoints, Store, the run queue), one
PostgreSQL business database (orders, refunds), the approval layer's own database (decisions,
receipts, the trail, claims, leases), one Redis, one workspace and one seal key, so any replica can
answer any approval. The business data has a role of its own, which may not connect to the other
two databases (the grants `deploy/` makes too). The tests and the benchmarks start their replica
sets here too. Not for production, where `deploy/` runs the same topology.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from server.http import outgoing

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
LANGHOST = ROOT / ".venv-replicas" / "bin" / "langhost"
CONFIG = ROOT / "langgraph.replicas.json"
POSTGRES = "postgresql://postgres@127.0.0.1:5432"
REDIS = "redis://127.0.0.1:6379"
START_SECONDS = 120.0


@dataclass
class ReplicaSet:
    """Where N replicas keep what they share, and the replicas once started."""

    name: str
    workdir: Path
    postgres: str = POSTGRES
    redis: str = REDIS
    redis_db: int = 0
    env: dict[str, str] = field(default_factory=dict)
    config: Path = CONFIG
    """The langgraph configuration every replica serves (the bench serves one of its own)."""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)

    @property
    def runtime_uri(self) -> str:
        """The engine's database: threads, runs, checkpoints, Store, queue."""
        return f"{self.postgres}/{self.name}_runtime"

    @property
    def business_role(self) -> str:
        """The business data's own role: no superuser, no grant on the runtime's or the layer's database."""
        return f"{self.name}_business"

    @property
    def business_url(self) -> str:
        """The business database (SQLAlchemy URL), as its own role: orders, refunds, what the tools write."""
        url = make_url(f"{self.postgres}/{self.name}_business")
        return url.set(
            drivername="postgresql+psycopg", username=self.business_role, password=None
        ).render_as_string(hide_password=False)

    @property
    def layer_url(self) -> str:
        """The approval layer's own database (SQLAlchemy URL): decisions, receipts, trail, claims, leases."""
        return f"{self.postgres.replace('postgresql://', 'postgresql+psycopg://')}/{self.name}_layer"

    def environment(self) -> dict[str, str]:
        """What every replica is started with: the shared parts, then `env`."""
        seal = self.workdir / "seal.key"
        if not seal.exists():
            seal.parent.mkdir(parents=True, exist_ok=True)
            seal.write_text(secrets.token_urlsafe(32))
        return {
            **os.environ,
            "DATABASE_URI": self.runtime_uri,
            "REDIS_URI": f"{self.redis}/{self.redis_db}",
            "DATABASE_URL": self.business_url,
            "HITL_DATABASE_URL": self.layer_url,
            "HITL_SEAL_KEY": seal.read_text().strip(),
            # One receipt signing key for every replica (the first one started makes it).
            "HITL_RECEIPT_KEY_FILE": str(self.workdir / "receipt-keys" / "signing.pem"),
            "WORKSPACE_DIR": str(self.workdir / "workspace"),
            "LANGGRAPH_NO_VERSION_CHECK": "true",
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            # Each replica's PostgreSQL pools (deploy/README.md): the engine's (5 + 3) and the layer's store
            # and business database's (2 + 3 each), beside the engine's two pools of 10 and the inbox
            # broadcast's 2: 4 replicas at 50 concurrent cycles stay under 100 connections (measured).
            "PG_POOL_SIZE": "5",
            "PG_MAX_OVERFLOW": "3",
            "DB_POOL_SIZE": "2",
            "DB_MAX_OVERFLOW": "3",
            # A replica that dies mid-run: another one re-runs its runs after 2 heartbeats (default 120 s).
            "LG_BG_JOB_HEARTBEAT": "5",
            **self.env,
        }

    def create_databases(self, *, fresh: bool = False) -> None:
        """Create the three databases and the business role if missing (`fresh`: drop them first).

        The business role owns its database and everything in it (a set made before it had a role
        of its own is handed over), and may connect to neither of the other two.
        """
        role = sql.Identifier(self.business_role)
        with psycopg.connect(f"{self.postgres}/postgres", autocommit=True) as conn:
            if fresh:
                for database in self.databases():
                    conn.execute(
                        sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
                    )
            if not conn.execute(
                "SELECT 1 FROM pg_roles WHERE rolname = %s", (self.business_role,)
            ).fetchone():
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER").format(role))
            for database in self.databases():
                if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone():
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
                conn.execute(
                    sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(sql.Identifier(database))
                )
            business = sql.Identifier(f"{self.name}_business")
            conn.execute(sql.SQL("ALTER DATABASE {} OWNER TO {}").format(business, role))
        with psycopg.connect(f"{self.postgres}/{self.name}_business", autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER SCHEMA public OWNER TO {}").format(role))
            for (table,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall():
                conn.execute(sql.SQL("ALTER TABLE {} OWNER TO {}").format(sql.Identifier(table), role))

    def databases(self) -> tuple[str, str, str]:
        """The runtime's, the business data's and the approval layer's database names."""
        return f"{self.name}_runtime", f"{self.name}_business", f"{self.name}_layer"

    def drop_databases(self) -> None:
        """Drop the three databases and the business role (a test's set, once stopped)."""
        with psycopg.connect(f"{self.postgres}/postgres", autocommit=True) as conn:
            for database in self.databases():
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
                )
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(self.business_role)))

    def start(self, count: int, ports: list[int] | None = None) -> list[str]:
        """Start `count` more replicas (one at a time: the first migrates the schema); their URLs."""
        env = self.environment()
        started = []
        for index in range(count):
            port = ports[index] if ports else free_port()
            number = len(self.processes) + 1
            log = self.workdir / f"replica-{number}.log"
            data = self.workdir / f"replica-{number}"
            data.mkdir(parents=True, exist_ok=True)
            with log.open("ab") as out:
                process = subprocess.Popen(  # noqa: S603  (our own engine binary, fixed arguments)
                    [
                        str(LANGHOST),
                        "serve",
                        "--config",
                        str(self.config),
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(port),
                        "--n-jobs-per-worker",
                        "10",
                    ],
                    cwd=ROOT,
                    env={**env, "DATA_DIR": str(data)},
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            url = f"http://127.0.0.1:{port}"
            self.processes.append(process)
            self.urls.append(url)
            wait_ready(url, process, log)
            started.append(url)
        return started

    def stop(self, index: int | None = None, sig: int = signal.SIGTERM) -> None:
        """Stop replica `index` (all by default) and its process group, by PID."""
        for i, process in enumerate(self.processes):
            if index is None or i == index:
                stop(process, sig)


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def polled_ok(url: str, seconds: float, failed: Callable[[], str | None], interval: float = 0.3) -> bool:
    """Poll `url`/ok until it answers 200 (True) or `seconds` pass (False), with one HTTP client.

    Before each poll `failed()` may say why waiting is pointless (the process exited): it is raised
    as a RuntimeError. One client for every poll: making one costs about 20 ms of CPU.

    Raises:
        RuntimeError: what `failed()` said.
    """
    deadline = time.monotonic() + seconds
    with httpx.Client(timeout=1, verify=outgoing.tls()) as http:
        while time.monotonic() < deadline:
            if (reason := failed()) is not None:
                raise RuntimeError(reason)
            try:
                if http.get(f"{url}/ok").status_code == httpx.codes.OK:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(interval)
    return False


def wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait for `/ok`, or raise with the end of the replica's log."""

    def exited() -> str | None:
        if process.poll() is None:
            return None
        return f"replica {url} exited with {process.returncode}:\n{log.read_text()[-3000:]}"

    if polled_ok(url, START_SECONDS, exited):
        return
    stop(process)
    msg = f"replica {url} did not answer /ok in {START_SECONDS:.0f} s:\n{log.read_text()[-3000:]}"
    raise RuntimeError(msg)


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    """Stop one replica's process group by its PID (SIGKILL after 30 s)."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, sig)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def _exit(_signum: int, _frame: object) -> None:
    raise SystemExit(0)


def main() -> None:
    """Start N replicas on ports PORT, PORT+1, ... and serve until Ctrl-C."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--replicas", type=int, default=2)
    parser.add_argument("--port", type=int, default=2024, help="the first replica's port")
    parser.add_argument(
        "--name", default="hitl", help="database name prefix (<name>_runtime, <name>_business, <name>_layer)"
    )
    parser.add_argument("--workdir", type=Path, default=ROOT / "data" / "replicas")
    args = parser.parse_args()
    replicas = ReplicaSet(args.name, args.workdir.resolve())
    replicas.create_databases()
    signal.signal(signal.SIGTERM, _exit)  # like Ctrl-C: leave through `finally`, which stops the replicas
    try:
        urls = replicas.start(args.replicas, [args.port + i for i in range(args.replicas)])
        print(f"{len(urls)} replicas on one PostgreSQL + Redis (logs in {args.workdir}):")  # noqa: T201
        for url in urls:
            print(f"  {url}   web app: {url}/app/")  # noqa: T201
        while True:
            signal.pause()
    finally:
        replicas.stop()


if __name__ == "__main__":
    main()
