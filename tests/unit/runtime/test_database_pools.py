"""The layer's PostgreSQL pools (its store, the business database) are as large as the settings say.

A replica's connections are budgeted (deploy/README.md, "PostgreSQL connections"): `DB_POOL_SIZE` kept,
`DB_MAX_OVERFLOW` more while busy, per database and process. Run in a fresh interpreter, as a server
reads its settings once. Creating an engine connects to nothing, so no PostgreSQL is needed here.
"""

from __future__ import annotations

import json
import os

from tests.fresh_interpreter import last_line

PROBE = """
import json
from hitl.databases import open_database
engine = open_database("postgresql+psycopg://hitl@127.0.0.1:1/hitl")
sqlite = open_database("sqlite:///:memory:")
print(json.dumps({"size": engine.pool.size(), "overflow": engine.pool._max_overflow,
                  "sqlite": type(sqlite.pool).__name__}))
"""


def test_the_pools_take_their_size_from_the_settings() -> None:
    found = json.loads(last_line(PROBE, env={**os.environ, "DB_POOL_SIZE": "3", "DB_MAX_OVERFLOW": "1"}))
    assert (found["size"], found["overflow"]) == (3, 1)
    assert found["sqlite"] == "SingletonThreadPool"  # SQLite's own: the settings are PostgreSQL's


def test_the_defaults_are_five_and_five() -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"DB_POOL_SIZE", "DB_MAX_OVERFLOW"}}
    found = json.loads(last_line(PROBE, env=env))
    assert (found["size"], found["overflow"]) == (5, 5)
