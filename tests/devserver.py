"""The real `langgraph dev` for tests and benchmarks: start on a free loopback port, stop by PID.

Each server runs from a temporary directory (its `.langgraph_api/` and data land there) and
is checked on its own port (`langgraph dev` silently moves when the asked one is taken).
The session's shared server is the `server` fixture in `tests/conftest.py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import langgraph_sdk
import pytest
from dotenv import dotenv_values
from langgraph_sdk.client import LangGraphClient

from server.http.outgoing import tls
from server.runtime.replicas import free_port, polled_ok, stop

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator

    from services.registry import Services

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).parent / "langgraph"


def dev_users() -> str:
    """HITL_USERS as `.env.example` sets it for development, read as the server reads a `.env` made from it.

    The last `HITL_USERS=` line wins, so a project's own line below the layer's last line (its people
    in the groups its policies name: `ana:reviewer+finance:dev-ana`) is what `make dev` and the test
    servers both serve.
    """
    users = dotenv_values(ROOT / ".env.example").get("HITL_USERS")
    if not users:
        msg = ".env.example has no HITL_USERS line"
        raise AssertionError(msg)
    return users


def tokens_of(users: str) -> dict[str, str]:
    """Each user's bearer token in a HITL_USERS value (`name:role:token`, `name:role+group:token`)."""
    entries = (entry.strip().split(":", 2) for entry in users.split(",") if entry.strip())
    return {name: token for name, _, token in entries}


@dataclass
class DevServer:
    """A running `langgraph dev` and the business database behind it."""

    url: str
    process: subprocess.Popen[bytes]
    database_url: str
    log: Path
    layer_url: str = ""
    """The approval layer's own store (`HITL_DATABASE_URL`): decisions, receipts, the trail."""

    @property
    def services(self) -> Services:
        """The demo's business services over this server's database (a project without the demo has none)."""
        from services.registry import Services  # noqa: PLC0415

        return Services.open(self.database_url)


def start_dev_server(
    workdir: Path, env_overrides: dict[str, str] | None = None, config: Path | None = None
) -> DevServer:
    """Start `langgraph dev` in `workdir` and wait for `/ok` on the port it was given.

    `config` is the repository's `langgraph.json` unless given (the benchmarks serve a copy).
    """
    port = free_port()
    data = workdir / "data"
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "DATA_DIR": "data",  # relative, as .env.example has it: `workdir / "data"`, the server's cwd
        "MODEL": "scripted",
        "HITL_USERS": f"{dev_users()},{TEST_USERS}",
        "HITL_DEV_MODE": "true",  # the dev-* tokens of .env.example work only in dev mode
        # The code of this checkout, also where the venv's editable install points at another copy.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        **(env_overrides or {}),
    }
    env.pop("OPENAI_API_KEY", None)
    log = workdir / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(LANGGRAPH),
                "dev",
                "--config",
                str(config or ROOT / "langgraph.json"),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-browser",
                "--no-reload",
                "--n-jobs-per-worker",
                "10",
            ],
            cwd=workdir,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"

    def exited() -> str | None:
        if process.poll() is None:
            return None
        return f"langgraph dev exited with {process.returncode}:\n{log.read_text()[-3000:]}"

    try:
        answered = polled_ok(url, 120, exited)
    except RuntimeError as failure:
        pytest.fail(str(failure))
    if not answered:
        stop(process)
        pytest.fail(f"langgraph dev did not answer /ok on port {port}:\n{log.read_text()[-3000:]}")
    database_url = env.get("DATABASE_URL") or f"sqlite:///{data / 'business.db'}"
    layer_url = env.get("HITL_DATABASE_URL") or f"sqlite:///{data / 'hitl.db'}"
    return DevServer(url=url, process=process, database_url=database_url, log=log, layer_url=layer_url)


@contextmanager
def serving(
    workdir: Path, env_overrides: dict[str, str] | None = None, config: Path | None = None
) -> Iterator[DevServer]:
    """`start_dev_server` for the length of a `with` block (a fixture's life); stopped by its PID after."""
    running = start_dev_server(workdir, env_overrides, config)
    try:
        yield running
    finally:
        stop(running.process)


DEV_TOKENS = tokens_of(dev_users())
"""The dev users of `.env.example` and their bearer tokens (requester1, ... and a project's own)."""
TEST_USERS = "supervisor3:supervisor:test-supervisor3"
"""A third supervisor the test servers add to the dev users (two rival second approvers of a quorum)."""
TOKENS = {**DEV_TOKENS, **tokens_of(TEST_USERS)}
TEAM_USERS = (
    "finance1:reviewer+finance:test-finance1,"
    "lead1:reviewer+finance+finance-leads:test-lead1,"
    "lead2:reviewer+finance-leads:test-lead2,"
    "sre1:reviewer+sre:test-sre1"
)
"""People in teams (HITL_USERS `name:role+group:token`): finance, its leads (lead1 in both), SRE."""
TEAMS = {
    "REFUND_DECIDER_GROUP": "finance",
    "REFUND_LEAD_GROUP": "finance-leads",
    "OPS_DECIDER_GROUP": "sre",
}
"""The demo's decisions given to the teams: refunds to finance (above 500 its leads), ops to SRE."""
TEAM_TOKENS = tokens_of(TEAM_USERS)


def sdk_client(*, url: str, headers: dict[str, str]) -> LangGraphClient:
    """What `langgraph_sdk.get_client(url=url, headers=headers)` makes, on the process's one TLS context.

    `get_client` gives each client a transport of its own, which loads the CA bundle (~35 ms of CPU);
    the tests open thousands. Same transport (5 retries), timeouts and User-Agent; no API key (none is set).
    """
    transport = httpx.AsyncHTTPTransport(retries=5, verify=tls())
    return LangGraphClient(
        httpx.AsyncClient(
            base_url=url,
            transport=transport,
            timeout=httpx.Timeout(connect=5, read=300, write=300, pool=5),
            headers={"User-Agent": f"langgraph-sdk-py/{langgraph_sdk.__version__}", **headers},
        )
    )


@asynccontextmanager
async def user_clients(url: str) -> AsyncIterator[Callable[[str], LangGraphClient]]:
    """`make("reviewer1")` gives a `langgraph-sdk` client of `url` acting as that dev user."""
    opened: list[LangGraphClient] = []

    def make(user: str) -> LangGraphClient:
        if user not in TOKENS:
            msg = (
                f"no test user {user!r}: the test servers know {', '.join(TOKENS)} (HITL_USERS of "
                ".env.example; a project gives its own people in a HITL_USERS line below its last line)"
            )
            raise AssertionError(msg)
        sdk = sdk_client(url=url, headers={"Authorization": f"Bearer {TOKENS[user]}"})
        opened.append(sdk)
        return sdk

    try:
        yield make
    finally:
        for sdk in opened:
            await sdk.aclose()
