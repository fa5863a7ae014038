"""Leases in the shared database, once on SQLite and once on PostgreSQL.

One holder at a time; the holder renews with the same fencing token; when it stops renewing
and the lease expires, another takes it over with a higher token.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from server.coordination.leadership import Lease, process_id
from services.database import connect
from tests.services.test_races import together

if TYPE_CHECKING:
    from sqlalchemy import Engine

SECONDS = 30.0


@pytest.fixture
def engine(database_url, engines) -> Engine:
    """The test's business database (closed with the test's other engines)."""
    engines.append(connect(database_url))
    return engines[-1]


def test_one_holder_at_a_time_and_renewal_keeps_the_token(engine):
    """lease: the first takes it (token 1) and renews it with the same token; the second is refused."""
    first, second = Lease("duty", SECONDS, engine=engine), Lease("duty", SECONDS, engine=engine)
    start = time.time()
    assert first.hold_now(start) == 1
    assert second.hold_now(start + 1) is None
    assert first.hold_now(start + 2) == 1
    assert second.hold_now(start + SECONDS) is None  # renewed at +2: held until +32
    assert first.held(start + 3)
    assert not second.held(start + 3)


def test_an_expired_lease_is_taken_over_with_a_higher_token(engine):
    """failover: once the holder stops renewing and the lease expires, another takes it with token + 1."""
    first, second = Lease("duty", SECONDS, engine=engine), Lease("duty", SECONDS, engine=engine)
    start = time.time()
    assert first.hold_now(start) == 1
    after = start + SECONDS + 1
    assert not first.held(after)
    assert second.hold_now(after) == 2
    assert first.hold_now(after + 1) is None
    assert first.token is None
    assert second.hold_now(after + 2 * SECONDS) == 2  # its own lapsed lease, nobody else took it: same token


def test_leases_of_different_names_are_independent(engine):
    """names: holding one duty's lease says nothing about another's."""
    assert Lease("one", SECONDS, engine=engine).hold_now() == 1
    assert Lease("two", SECONDS, engine=engine).hold_now() == 1


def test_many_takers_at_once_one_holds(engine):
    """race: of eight processes asking for a new or an expired lease at the same moment, one gets it."""
    for round_ in range(10):
        start = time.time() + round_ * (SECONDS + 1)
        takers = [Lease("duty", SECONDS, engine=engine) for _ in range(8)]
        tokens = together(*(lambda lease=lease, start=start: lease.hold_now(start) for lease in takers))
        assert [t for t in tokens if t is not None] == [round_ + 1], tokens


def test_holder_ids_are_unique():
    """holder: two leases made in one process still name different holders."""
    assert process_id() != process_id()
