"""Start-up on the shared engine refuses what one replica would keep to itself (`server.runtime.topology`)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest

from server.runtime.replicas import ReplicaSet
from tests.devserver import dev_users

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Iterator[ReplicaSet]:
    """A replica set's shared databases, new, with no replica running (none is needed to refuse one)."""
    databases = ReplicaSet(f"hitl_test_{uuid.uuid4().hex[:8]}", tmp_path_factory.mktemp("shared"))
    databases.create_databases(fresh=True)
    try:
        yield databases
    finally:
        databases.drop_databases()


@pytest.mark.parametrize(
    ("override", "refusal"),
    [
        ({"DATABASE_URL": "sqlite:///business.db"}, "DATABASE_URL must name the shared PostgreSQL"),
        ({"HITL_SEAL_KEY": ""}, "HITL_SEAL_KEY must be set, the same on every replica"),
        (
            {"DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/hitl_test_missing"},
            "DATABASE_URL names database 'hitl_test_missing', which does not exist",
        ),
    ],
)
def test_a_replica_with_its_own_or_a_missing_business_database_or_no_seal_key_does_not_start(
    shared, tmp_path, override, refusal
):
    """start-up: the replica exits naming the setting; it never answers /ok."""
    env = {"HITL_USERS": dev_users(), "HITL_DEV_MODE": "true", **override}
    alone = ReplicaSet(shared.name, tmp_path, env=env)
    with pytest.raises(RuntimeError, match=refusal):
        alone.start(1)
    alone.stop()
