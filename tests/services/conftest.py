"""The business services over every database they support: SQLite, and PostgreSQL.

Each test here runs once per backend. A PostgreSQL test gets a fresh schema of its own (dropped
afterwards, its connections closed), so reruns and parallel runs never meet. Where PostgreSQL is
unreachable those tests are skipped, and the skip says why. `TEST_POSTGRES_URL` points them at
another server (default: the local one, trust auth).
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import OperationalError

from services import registry
from services.database import connect
from services.registry import Services

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sqlalchemy import Engine

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Engine]:
    """An admin connection to the test PostgreSQL; skips the test (with the reason) if unreachable."""
    engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as error:
        engine.dispose()
        pytest.skip(reason=f"PostgreSQL unreachable at {POSTGRES_URL}: {' '.join(str(error.orig).split())}")
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path) -> Iterator[str]:
    """The URL of a new, empty business database on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'business.db'}"
        return
    admin = request.getfixturevalue("postgres")
    schema = f"hitl_test_{uuid.uuid4().hex[:12]}"
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = make_url(POSTGRES_URL).update_query_dict(
            {"application_name": schema, "options": f"-csearch_path={schema}"}
        )
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :name"),
                {"name": schema},
            )
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture(autouse=True)
def engines(database_url, monkeypatch) -> Iterator[list[Engine]]:
    """Every engine `Services.open` makes during the test, closed before its database goes."""
    opened: list[Engine] = []

    def tracked(url: str) -> Engine:
        opened.append(connect(url))
        return opened[-1]

    monkeypatch.setattr(registry, "connect", tracked)
    yield opened
    for engine in opened:
        engine.dispose()


@pytest.fixture
def services(database_url, engines) -> Services:
    """Business services over the test's database, seeded with the demo orders and flights."""
    return Services.open(database_url)
