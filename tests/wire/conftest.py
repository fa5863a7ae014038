"""The real-model path: agents and server talk to the scripted model through `langchain-openai`.

One OpenAI-compatible endpoint (`hitl.model.scripted.endpoint`) serves the session on a free loopback
port, in this process so a test can arm its faults directly. Every test in this folder runs with
`MODEL=openai:scripted OPENAI_BASE_URL=http://127.0.0.1:<port>/v1`; the in-process agent
fixtures are the graph tests' own, and `server` is a second `langgraph dev` configured the same way.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
import uvicorn

from agents.offline import DEMO
from hitl.model.scripted.endpoint import FaultBoard, make_app
from server.http.outgoing import tls
from server.runtime.replicas import free_port
from tests.conftest import add_order
from tests.devserver import DevServer, serving
from tests.graphs.conftest import ops_agent, support_agent, travel_agent, workspace

if TYPE_CHECKING:
    from collections.abc import Iterator

    from services.registry import Services

__all__ = ["ops_agent", "support_agent", "travel_agent", "workspace"]

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of this folder `wire`, so `-m wire` (or `-m "not wire"`) selects them."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.wire)


@dataclass
class ScriptedEndpoint:
    """The session's OpenAI-compatible endpoint and its fault board."""

    url: str
    faults: FaultBoard

    @property
    def base_url(self) -> str:
        """What `OPENAI_BASE_URL` is set to."""
        return f"{self.url}/v1"

    def arm(
        self, fault: str, times: int = 1, stall_seconds: float | None = None, tool: str | None = None
    ) -> None:
        """Fail the next `times` completions with `fault`, whoever asks (only those offering `tool`)."""
        body: dict[str, object] = {"fault": fault, "times": times}
        if stall_seconds is not None:
            body["stall_seconds"] = stall_seconds
        if tool is not None:
            body["tool"] = tool
        httpx.post(f"{self.url}/faults", json=body, timeout=5, verify=tls()).raise_for_status()

    def served(self) -> dict[str, int]:
        """Completions served (`requests`) and faults served, by name, since the test began."""
        return dict(self.faults.served)


@pytest.fixture(scope="session")
def scripted_endpoint() -> Iterator[ScriptedEndpoint]:
    """The endpoint, served by uvicorn on a free loopback port from a thread of this process."""
    port = free_port()
    board = FaultBoard()
    config = uvicorn.Config(
        make_app(board, DEMO), host="127.0.0.1", port=port, log_level="warning", lifespan="off", ws="none"
    )
    config.timeout_graceful_shutdown = 2
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="scripted-endpoint", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail(f"the scripted endpoint did not start on port {port}")
        time.sleep(0.05)
    try:
        yield ScriptedEndpoint(f"http://127.0.0.1:{port}", board)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(autouse=True)
def through_the_wire(monkeypatch, scripted_endpoint) -> ScriptedEndpoint:
    """Point `Settings()` at the endpoint for this test, with no fault armed and counts at zero."""
    monkeypatch.setenv("MODEL", "openai:scripted")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_endpoint.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    scripted_endpoint.faults.armed.clear()
    scripted_endpoint.faults.armed_for.clear()
    scripted_endpoint.faults.served.clear()
    return scripted_endpoint


WIRE_SERVER_RETRIES = 1
WIRE_SERVER_TIMEOUT_SECONDS = 3


@pytest.fixture(scope="session")
def server(tmp_path_factory, scripted_endpoint) -> Iterator[DevServer]:
    """A second `langgraph dev` whose agents reach their model through the endpoint.

    One retry and a 3 s timeout, so a provider failure ends a run in seconds.
    """
    with serving(
        tmp_path_factory.mktemp("langgraph-dev-wire"),
        {
            "MODEL": "openai:scripted",
            "OPENAI_BASE_URL": scripted_endpoint.base_url,
            "MODEL_MAX_RETRIES": str(WIRE_SERVER_RETRIES),
            "MODEL_TIMEOUT_SECONDS": str(WIRE_SERVER_TIMEOUT_SECONDS),
        },
    ) as running:
        yield running


@pytest.fixture(scope="session")
def server_services(server) -> Services:
    """The business services behind the wire server (not the session's other server)."""
    return server.services


@pytest.fixture
def server_order(server_services):
    """Insert a fresh order into the wire server's database; returns its id."""
    return lambda amount: add_order(server_services, amount)
