"""Start-up refuses a PostgreSQL database that does not answer, is missing, or refuses the login.

Against the machine's real PostgreSQL (127.0.0.1:5432, trust auth) and a loopback port nothing
listens on; the containers' own start-up errors are seen by `make deploy-check`.
"""

from __future__ import annotations

import socket
from unittest.mock import patch

import pytest

from hitl.settings import Settings
from server.runtime.topology import (
    DatabaseUnreachableError,
    SharedTopologyError,
    check_databases_answer,
    check_topology,
    database_problem,
)

SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"


def silent_port() -> int:
    """A loopback port with nothing listening on it (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_database_that_answers_passes():
    """start-up: the machine's `postgres` database answers; a SQLite file is not probed at all."""
    assert database_problem("DATABASE_URL", f"{SERVER}/postgres") is None
    assert database_problem("DATABASE_URL", "sqlite:////no/such/folder/business.db") is None


def test_a_missing_database_is_named_with_its_variable():
    """start-up: a database PostgreSQL does not have is named, with the variable and how to make it."""
    problem = database_problem("DATABASE_URL", f"{SERVER}/hitl_no_such_database")
    assert problem is not None
    assert problem.startswith("DATABASE_URL names database 'hitl_no_such_database', which does not exist")
    assert "deploy/postgres-init" in problem


def test_a_silent_port_and_a_refused_login_say_so_without_the_password():
    """start-up: nothing listening is 'does not answer'; an unknown role is 'refused'; no password shown."""
    port = silent_port()
    silent = database_problem(
        "DATABASE_URL", f"postgresql+psycopg://business:s3cret@127.0.0.1:{port}/business"
    )
    assert silent is not None
    assert silent.startswith(
        f"DATABASE_URL (postgresql+psycopg://business:***@127.0.0.1:{port}/business) does not"
    )
    refused = database_problem(
        "DATABASE_URL", "postgresql+psycopg://hitl_no_such_role:s3cret@127.0.0.1/postgres"
    )
    assert refused is not None
    assert "was refused" in refused
    assert "hitl_no_such_role" in refused
    assert "s3cret" not in silent + refused


def test_the_start_up_check_raises_naming_the_variable():
    """start-up: check_databases_answer raises DatabaseUnreachableError for the business database's URL."""
    settings = Settings(
        database_url=f"postgresql+psycopg://postgres@127.0.0.1:{silent_port()}/x", _env_file=None
    )
    with pytest.raises(DatabaseUnreachableError, match=r"^DATABASE_URL \(.*\) does not answer"):
        check_databases_answer(settings)
    check_databases_answer(Settings(database_url=f"{SERVER}/postgres", _env_file=None))


def test_the_layer_store_is_probed_too_and_must_be_shared_on_a_replica():
    """start-up: a missing HITL_DATABASE_URL database is named; a replica's SQLite layer store is refused."""
    settings = Settings(
        database_url=f"{SERVER}/postgres", hitl_database_url=f"{SERVER}/hitl_no_such_layer", _env_file=None
    )
    with pytest.raises(
        DatabaseUnreachableError, match=r"^HITL_DATABASE_URL names database 'hitl_no_such_layer'"
    ):
        check_databases_answer(settings)
    alone = Settings(
        database_url=f"{SERVER}/postgres", hitl_seal_key="s" * 32, hitl_receipt_key="pem", _env_file=None
    )
    with (
        patch("server.runtime.topology._custom_checkpointer", return_value=False),
        pytest.raises(SharedTopologyError, match="HITL_DATABASE_URL must name the approval layer's shared"),
    ):
        check_topology(alone, edition="pg")
