"""`server.runtime.engine_compat`: each workaround is still needed by the engine it patches, and does its job.

Run in the replica engine's own interpreter (`.venv-replicas`, langgraph-api 0.11.1 and
langgraph-runtime-pg). When an upstream release fixes a bug, its "still needed" test fails:
delete that workaround from `server.runtime.engine_compat` and the test with it.
"""

from __future__ import annotations

import json
import subprocess

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

PROBES = """
import asyncio, json
import langgraph_runtime  # picks the pg runtime, as the server does before loading the app


async def lifespan_through_store_middleware():
    from langgraph_api.middleware.ensure_store import EnsureStoreAccessible

    async def app(scope, receive, send):
        pass

    try:
        await EnsureStoreAccessible(app)({"type": "lifespan"}, None, None)
    except Exception as error:
        return type(error).__name__
    return None


async def engine_serialiser():
    from langgraph_api.auth.custom import normalize_user
    from langgraph_runtime_pg import database

    engine = database.create_async_engine("postgresql+asyncpg://postgres@127.0.0.1:5432/postgres")
    user = normalize_user({"identity": "reviewer1", "role": "reviewer"})
    try:
        serialise = engine.dialect._json_serializer or json.dumps  # SQLAlchemy's default is json.dumps
        return serialise({"configurable": {"langgraph_auth_user": user}})
    except TypeError:
        return None
    finally:
        await engine.dispose()


async def connections_heal():
    import redis.exceptions
    from langgraph_api import worker
    from langgraph_runtime_pg import checkpoint, redis_stream, store
    from psycopg import OperationalError

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


async def sweep_beside_a_run_that_pauses():
    import uuid
    from langgraph_runtime_pg import ops
    from langgraph_runtime_pg.models import Base, RunRow, ThreadRow
    from sqlalchemy import select, text, update
    from sqlalchemy.exc import DBAPIError
    from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

    server = "postgresql+asyncpg://postgres@127.0.0.1:5432"
    name = f"hitl_compat_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(f"{server}/postgres", isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine = create_async_engine(f"{server}/{name}")
    try:
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        sessions = async_sessionmaker(engine, expire_on_commit=False)
        thread_id, run_id, orphan = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        async with sessions() as session:  # a thread its run is busy with, and one a dead worker left busy
            session.add_all([ThreadRow(thread_id=tid, status="busy") for tid in (thread_id, orphan)])
            running = RunRow(run_id=run_id, thread_id=thread_id, assistant_id=uuid.uuid4(), status="running")
            session.add(running)
            await session.commit()

        async def run_pauses():  # what the worker's set_joint_status commits: the run done, its thread paused
            async with sessions() as session:
                await session.execute(text("SET LOCAL lock_timeout = '200ms'"))
                await session.execute(update(RunRow).where(RunRow.run_id == run_id).values(status="success"))
                paused = update(ThreadRow).where(ThreadRow.thread_id == thread_id)
                await session.execute(paused.values(status="interrupted"))
                await session.commit()

        held, inflight = [], ops._thread_has_inflight_work

        async def the_run_pauses_meanwhile(session, thread):  # between the sweep's read and its write
            if thread == thread_id and not held:
                try:
                    await run_pauses()
                    held.append(False)
                except DBAPIError:  # the sweep holds the thread: the worker waits for it
                    held.append(True)
            return await inflight(session, thread)

        ops._thread_has_inflight_work = the_run_pauses_meanwhile
        try:
            await ops._idle_orphaned_busy_threads(sessions)
        finally:
            ops._thread_has_inflight_work = inflight
        if held == [True]:
            await run_pauses()
        async with sessions() as session:
            statuses = dict((await session.execute(select(ThreadRow.thread_id, ThreadRow.status))).all())
        return {"paused": statuses[thread_id], "orphaned": statuses[orphan]}
    finally:
        await engine.dispose()
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


PROBES = (
    lifespan_through_store_middleware,
    engine_serialiser,
    connections_heal,
    sweep_beside_a_run_that_pauses,
)


async def main():
    found = {"unpatched": {probe.__name__: await probe() for probe in PROBES}}
    from server.runtime import engine_compat

    engine_compat.apply()
    found["patched"] = {probe.__name__: await probe() for probe in PROBES}
    return found


print(json.dumps(asyncio.run(main())))
"""
"""What each bug looks like from inside the engine: every probe runs unpatched, then again after
`engine_compat.apply()`, in one interpreter (each start imports langgraph-api: seconds of CPU)."""


@pytest.fixture(scope="module")
def engine() -> dict[str, dict[str, object]]:
    """The probes' findings in the replica engine's interpreter: {"unpatched"|"patched": {probe: found}}."""
    if not REPLICAS_PYTHON.exists():
        pytest.fail(
            f"{REPLICAS_PYTHON} is missing: `make .venv-replicas/.installed` installs the replica engine"
        )
    done = subprocess.run(
        [str(REPLICAS_PYTHON), "-c", PROBES],
        cwd=ROOT,
        env=ENGINE_ENV,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_store_middleware_still_fails_a_lifespan_on_the_pg_runtime(engine):
    """still needed: unpatched, a lifespan makes the middleware open a Store before the pool backs it."""
    assert engine["unpatched"]["lifespan_through_store_middleware"] is not None


def test_the_store_middleware_lets_a_lifespan_through_once_patched(engine):
    """workaround: patched, the lifespan reaches the app."""
    assert engine["patched"]["lifespan_through_store_middleware"] is None


def test_the_pg_engine_still_cannot_write_a_custom_auth_user(engine):
    """still needed: unpatched, the engine's JSON serialiser refuses the auth user put in each run."""
    assert engine["unpatched"]["engine_serialiser"] is None


def test_the_pg_engine_writes_the_user_as_json_once_patched(engine):
    """workaround: patched, the run's configurable is written with the user's identity and role."""
    written = engine["patched"]["engine_serialiser"]
    assert isinstance(written, str)
    assert json.loads(written)["configurable"]["langgraph_auth_user"]["identity"] == "reviewer1"


def test_the_engine_still_keeps_dead_connections_and_fails_runs_on_them(engine):
    """still needed: unpatched, pools hand out dead connections, Redis retries nothing, no run is retried."""
    assert engine["unpatched"]["connections_heal"] == {
        "pools_check": [False, False],
        "redis_retries": 0,
        "worker_retries": [False, False],
    }


def test_connections_heal_and_runs_are_retried_once_patched(engine):
    """workaround: patched, both pools check each connection, Redis retries with backoff, runs are retried."""
    assert engine["patched"]["connections_heal"] == {
        "pools_check": [True, True],
        "redis_retries": engine_compat.REDIS_RETRIES,
        "worker_retries": [True, True],
    }


def test_the_engine_sweep_still_idles_a_thread_its_run_just_paused(engine):
    """still needed: unpatched, a run pausing between the sweep's read and write leaves its thread idle."""
    assert engine["unpatched"]["sweep_beside_a_run_that_pauses"] == {"paused": "idle", "orphaned": "idle"}


def test_a_thread_paused_during_the_sweep_stays_interrupted_once_patched(engine):
    """workaround: patched, the sweep locks each thread and reads it again: the pause stays, orphans idle."""
    assert engine["patched"]["sweep_beside_a_run_that_pauses"] == {
        "paused": "interrupted",
        "orphaned": "idle",
    }
