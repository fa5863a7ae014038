"""`server.runtime.engine_compat`: each workaround is still needed by the engine it patches, and does its job.

Run in the replica engine's own interpreter (`.venv-replicas`, langgraph-api 0.11.1 and
langgraph-runtime-pg). When an upstream release fixes a bug, its "still needed" test fails:
delete that workaround from `server.runtime.engine_compat` and the test with it.
"""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from server.runtime import engine_compat
from server.runtime.replicas import LANGHOST, ROOT

REPLICAS_PYTHON = LANGHOST.parent / "python"
ENGINE_ENV = {
    "LANGGRAPH_RUNTIME_EDITION": "pg",
    "DATABASE_URI": "postgresql://postgres@127.0.0.1:5432/postgres",
    "REDIS_URI": "redis://127.0.0.1:6379/0",
    "PATH": "/usr/bin:/bin",
}

LIFESPAN_THROUGH_STORE_MIDDLEWARE = """
import asyncio, json, sys
import langgraph_runtime  # picks the pg runtime, as the server does before loading the app
from langgraph_api.middleware.ensure_store import EnsureStoreAccessible
if PATCHED:
    from server.runtime import engine_compat
    engine_compat.apply()

async def app(scope, receive, send):
    pass

async def main():
    try:
        await EnsureStoreAccessible(app)({"type": "lifespan"}, None, None)
    except Exception as error:
        return type(error).__name__
    return None

print(json.dumps(asyncio.run(main())))
"""

ENGINE_SERIALISER = """
import json
import langgraph_runtime
from langgraph_api.auth.custom import normalize_user
if PATCHED:
    from server.runtime import engine_compat
    engine_compat.apply()
from langgraph_runtime_pg import database
engine = database.create_async_engine("postgresql+asyncpg://postgres@127.0.0.1:5432/postgres")
user = normalize_user({"identity": "reviewer1", "role": "reviewer"})
try:
    serialise = engine.dialect._json_serializer or json.dumps  # SQLAlchemy's default is json.dumps
    written = serialise({"configurable": {"langgraph_auth_user": user}})
except TypeError as error:
    written = None
print(json.dumps(written))
"""


CONNECTIONS_HEAL = """
import asyncio, json
import langgraph_runtime
if PATCHED:
    from server.runtime import engine_compat
    engine_compat.apply()
import redis.exceptions
from langgraph_api import worker
from langgraph_runtime_pg import checkpoint, redis_stream, store
from psycopg import OperationalError

async def main():
    pools = [
        module.AsyncConnectionPool("postgresql://postgres@127.0.0.1:5432/postgres", open=False)
        for module in (checkpoint, store)
    ]
    retry = redis_stream._redis_pool_kwargs().get("retry")
    return {
        "pools_check": [pool._check is not None for pool in pools],
        "redis_retries": retry.get_retries() if retry is not None else 0,
        "worker_retries": [
            issubclass(error, worker.ALL_RETRIABLE_EXCEPTIONS)
            for error in (redis.exceptions.ConnectionError, OperationalError)
        ],
    }

print(json.dumps(asyncio.run(main())))
"""


def in_engine(script: str, *, patched: bool) -> object:
    """Run `script` in the replica engine's interpreter; what it printed, as JSON."""
    if not REPLICAS_PYTHON.exists():
        pytest.fail(
            f"{REPLICAS_PYTHON} is missing: `make .venv-replicas/.installed` installs the replica engine"
        )
    code = f"PATCHED = {patched}\n" + textwrap.dedent(script)
    done = subprocess.run(
        [str(REPLICAS_PYTHON), "-c", code],
        cwd=ROOT,
        env=ENGINE_ENV,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_store_middleware_still_fails_a_lifespan_on_the_pg_runtime():
    """still needed: unpatched, a lifespan makes the middleware open a Store before the pool backs it."""
    assert in_engine(LIFESPAN_THROUGH_STORE_MIDDLEWARE, patched=False) is not None


def test_the_store_middleware_lets_a_lifespan_through_once_patched():
    """workaround: patched, the lifespan reaches the app."""
    assert in_engine(LIFESPAN_THROUGH_STORE_MIDDLEWARE, patched=True) is None


def test_the_pg_engine_still_cannot_write_a_custom_auth_user():
    """still needed: unpatched, the engine's JSON serialiser refuses the auth user put in each run."""
    assert in_engine(ENGINE_SERIALISER, patched=False) is None


def test_the_pg_engine_writes_the_user_as_json_once_patched():
    """workaround: patched, the run's configurable is written with the user's identity and role."""
    written = in_engine(ENGINE_SERIALISER, patched=True)
    assert isinstance(written, str)
    assert json.loads(written)["configurable"]["langgraph_auth_user"]["identity"] == "reviewer1"


def test_the_engine_still_keeps_dead_connections_and_fails_runs_on_them():
    """still needed: unpatched, pools hand out dead connections, Redis retries nothing, no run is retried."""
    assert in_engine(CONNECTIONS_HEAL, patched=False) == {
        "pools_check": [False, False],
        "redis_retries": 0,
        "worker_retries": [False, False],
    }


def test_connections_heal_and_runs_are_retried_once_patched():
    """workaround: patched, both pools check each connection, Redis retries with backoff, runs are retried."""
    assert in_engine(CONNECTIONS_HEAL, patched=True) == {
        "pools_check": [True, True],
        "redis_retries": engine_compat.REDIS_RETRIES,
        "worker_retries": [True, True],
    }
