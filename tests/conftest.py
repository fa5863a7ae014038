"""Fixtures shared by every layer: the one dev server and its users; the demo's database and orders.

The session's `langgraph dev` (`server`) is defined here, once, so the server and the web
tests share it. The demo's fixtures (`services`, `new_order`, `server_order`, ...) import the
demo's business code when asked for, so a project without the demo runs the rest as is.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy.exc import IntegrityError

from tests.devserver import DevServer, serving, user_clients

if TYPE_CHECKING:
    from collections.abc import Iterator

    from services.registry import Services


ONE_WORKER_FOLDERS = ("tests/web/", "tests/wire/")
"""Folders with a session server of their own (the web tests' `langgraph dev` and Chromium, the wire
tests' server on the scripted endpoint): under `make test` one worker runs each folder whole, so that
server starts once, not on every worker that drew one of its modules."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules marked `long` and the `ONE_WORKER_FOLDERS` first, the rest in the order they were collected.

    `make test` hands whole modules (and those folders) to its workers in this order
    (`--no-loadscope-reorder`), so the work that takes a minute or more starts at once and the run
    ends on short modules, never on a long one that began last.
    """
    items.sort(
        key=lambda item: item.get_closest_marker("long") is None and _one_worker_folder(item.nodeid) is None
    )


def _one_worker_folder(nodeid: str) -> str | None:
    return next((folder for folder in ONE_WORKER_FOLDERS if nodeid.startswith(folder)), None)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's `loadscope` (a module per worker at a time), with each of `ONE_WORKER_FOLDERS` one unit."""
    from xdist.scheduler import LoadScopeScheduling  # noqa: PLC0415  (xdist is there when this hook runs)

    class ByModuleAndFolder(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _one_worker_folder(nodeid) or super()._split_scope(nodeid)

    return ByModuleAndFolder(config, log)


@pytest.fixture
def services(tmp_path) -> Services:
    """Business services over a new SQLite file, seeded with the demo orders."""
    from services.registry import Services  # noqa: PLC0415  (the demo's)

    return Services.open(f"sqlite:///{tmp_path / 'business.db'}")


@pytest.fixture
def new_order(services):
    """Insert a fresh delivered order of `amount` into the test's database; returns its id."""
    return lambda amount: add_order(services, amount)


def add_order(
    services: Services, amount: float, *, delivered_on: str | None = None, owner: str | None = "requester1"
) -> str:
    """Insert a fresh order of `amount` for the customer `owner`, delivered today unless `delivered_on`.

    Returns its id (B123456789). `owner` defaults to the dev user requester1, who asks for
    refunds in the server tests.

    Ids are random (9 digits, the most the scripted model reads); one already taken is drawn
    again, since the benchmarks add over 10,000 orders to one database.
    """
    from services.orders import Order  # noqa: PLC0415  (the demo's)

    while True:
        order_id = f"B{uuid.uuid4().int % 10**9:09d}"
        try:
            services.orders.add(
                Order(
                    order_id=order_id,
                    customer_name="Test Customer",
                    customer_email=f"{order_id.lower()}@example.com",
                    item="Test item",
                    amount=amount,
                    status="delivered",
                    delivered_on=delivered_on or datetime.now(UTC).date().isoformat(),
                    owner=owner,
                )
            )
        except IntegrityError:
            continue
        return order_id


@pytest.fixture(scope="session")
def mcp_servers_beside(tmp_path_factory) -> Iterator[Any]:
    """The MCP servers the session's agents use (billing, the lab: `tests.mcp_lab`), one per session.

    None in a project without the demo; the session's `server` starts beside them.
    """
    try:
        from tests.mcp_lab.beside import mcp_beside  # noqa: PLC0415  (the demo's)
    except ImportError:
        yield None
        return
    with mcp_beside(tmp_path_factory.mktemp("langgraph-dev")) as beside:
        yield beside


@pytest.fixture(scope="session")
def server(tmp_path_factory, mcp_servers_beside) -> Iterator[DevServer]:
    """The session's `langgraph dev` (and, beside it, the MCP servers its agents use)."""
    if mcp_servers_beside is None:
        with serving(tmp_path_factory.mktemp("langgraph-dev")) as running:
            yield running
        return
    workdir = mcp_servers_beside.config.parent
    with serving(workdir, mcp_servers_beside.env, mcp_servers_beside.config) as running:
        yield running


@pytest.fixture(scope="session")
def server_services(server) -> Services:
    """The business services behind the session's server, to check its side effects."""
    return server.services


@pytest.fixture
def server_order(server_services):
    """Insert a fresh order into the server's database; returns its id."""
    return lambda amount: add_order(server_services, amount)


@pytest.fixture
async def client_as(server):
    """`client_as("reviewer1")`: a client of the session's server acting as that dev user."""
    async with user_clients(server.url) as make:
        yield make


@pytest.fixture
def requester(client_as):
    """requester1: starts conversations and owns their threads."""
    return client_as("requester1")


@pytest.fixture
def reviewer(client_as):
    """reviewer1: may decide gated calls up to the supervisor limit."""
    return client_as("reviewer1")


@pytest.fixture
def supervisor(client_as):
    """supervisor1: may decide everything."""
    return client_as("supervisor1")
