"""Workarounds for engine bugs met when serving the package, each applied only where it is needed.

Every workaround names the bug, the versions it was seen on and the check that tells when it
can go: `tests/replicas/test_engine_compat.py` asserts the bug is still there upstream, so the
test fails (and this module should shrink) once an engine release fixes it. The one private name
the package reads from the engine besides (`served_graph`) is here too. It is one concept, kept
whole though long: the package's one adapter to the engine's private parts, so that an engine
upgrade is checked against one module and one test.

- **Store middleware at start-up** (`langgraph_api.middleware.ensure_store.EnsureStoreAccessible`,
  langgraph-api 0.11.1 to 0.16.7): with a custom `http.app`, langgraph_api wraps the whole app,
  lifespan included, in a middleware that opens the Store on its first call. On a runtime whose
  Store needs the lifespan's connection pool (`langgraph-runtime-pg`), the lifespan's own call
  fails, uvicorn reports "ASGI 'lifespan' protocol appears unsupported" and serves without a
  lifespan: no migrations, no queue, no watcher. `apply` lets non-request scopes through.
- **Run rows that cannot be written** (`langgraph_runtime_pg.database.start_pool`, 0.11.1.post1):
  its engine serialises JSONB columns with the standard `json`, but langgraph_api puts the
  custom-auth user object into each run's configurable; every run with custom auth failed with
  "Object of type ProxyUser is not JSON serializable" (500). `apply` gives that engine
  langgraph_api's own serialiser (the worker turns the stored user back into one).
- **Pooled connections that died with the database** (`langgraph_runtime_pg.checkpoint` and
  `.store`, 0.11.1.post1): their psycopg pools hand out connections unchecked, so after a
  PostgreSQL restart each stale one fails a checkpoint or Store call (issue 28 saw failures
  up to 47 s after). `apply` makes them check a connection (an empty query) as it is handed out.
- **Redis calls that fail at once while Redis restarts** (`langgraph_runtime_pg.redis_stream`,
  0.11.1.post1): its pool retries nothing, so a run publishing during a 1-3 s restart failed.
  `apply` gives the pool a retry with backoff (about 6 s) on connection errors and time-outs.
- **Runs that end in `error` on an infrastructure error** (`langgraph_api.worker`, 0.11.1):
  only its runtime's own exception type is retried, so a run that lost its PostgreSQL or Redis
  connection ended in `error`, its thread with it. `apply` adds lost-connection errors to the
  exceptions the worker retries (the run starts again from its last checkpoint; side effects
  stay single by tool call id).
- **A new run waits for the embedded worker's poll** (`langgraph_runtime_inmem.ops.Runs.next`,
  0.16.7): `langgraph dev`'s scheduler sleeps 0.5 s whenever it found no run, and only takes runs
  created before its poll began, so each run (an approval's resume too) waited about 0.5 to 1 s
  to start. `apply` wakes the poll when a run is put, and lets the next poll look at once.
- **A sweep that idles a thread its run just paused** (`langgraph_runtime_pg.ops._idle_orphaned_busy_threads`,
  0.11.1.post1): the queue's sweep lists the busy threads, then, one by one, idles those with no run
  in flight, writing `idle` over whatever the row holds by then. A run that ended between the two
  (its worker wrote the run `success` and the thread `interrupted` at once) left its thread idle with
  its pause in the checkpoint: the approval vanished from every list (seen in the fault test, once
  in 12 to 26 first pauses). `apply` makes the sweep lock each thread, read it again and idle it only
  while it is still busy with nothing in flight, each in a transaction of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

REQUEST_SCOPES = frozenset({"http", "websocket"})


def apply() -> list[str]:
    """Apply every workaround this engine needs (idempotent); the names of those applied.

    Only inside a server, which picks its runtime before it loads the package's app; an
    import of the app elsewhere (a test, a script) changes nothing.
    """
    if "langgraph_runtime" not in sys.modules:
        return []
    applied = []
    if _store_middleware_spans_lifespan():
        applied.append("ensure_store_lifespan")
    if _pg_runtime_serialises_with_json():
        applied.append("pg_json_serializer")
    if _pg_pools_hand_out_unchecked():
        applied.append("pg_pool_check")
    if _redis_pool_retries_nothing():
        applied.append("redis_retry")
    if _worker_fails_runs_on_lost_connections():
        applied.append("retry_lost_connections")
    if _inmem_worker_polls_for_new_runs():
        applied.append("inmem_wake_on_put")
    if _sweep_idles_threads_unlocked():
        applied.append("sweep_idles_locked")
    return applied


INMEM_POLL_SECONDS = 0.5
"""The embedded scheduler's pause between polls when it found no run (`Runs.next(wait=True)`)."""


class _Waker:
    """Wakes the embedded scheduler's poll when a run is put; thread-safe, one scheduler loop.

    The poll only takes runs created before it began, so after a run is put the poll that
    may have missed it returns at once and the next one looks again, without its pause.
    """

    def __init__(self) -> None:
        self.put_at = float("-inf")
        self.poll_began = float("-inf")
        self.loop: asyncio.AbstractEventLoop | None = None
        self.event: asyncio.Event | None = None

    def wake(self) -> None:
        self.put_at = time.monotonic()
        loop, event = self.loop, self.event
        if loop is None or event is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            event.set()
        else:
            loop.call_soon_threadsafe(event.set)

    async def sleep(self, delay: float, result: Any = None) -> Any:  # noqa: ANN401  (asyncio.sleep's own)
        if delay != INMEM_POLL_SECONDS:
            return await asyncio.sleep(delay, result)
        began, previous = time.monotonic(), self.poll_began
        self.poll_began = began
        if self.put_at >= previous:  # a run came since the last poll began: it may have been missed
            return result
        if self.event is None or self.loop is not asyncio.get_running_loop():
            self.loop, self.event = asyncio.get_running_loop(), asyncio.Event()
        self.event.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.event.wait(), delay)
        return result


def _inmem_worker_polls_for_new_runs() -> bool:
    from server.runtime.checkpointer import runtime_edition  # noqa: PLC0415  (only inside the server)

    if runtime_edition() != "inmem":
        return False
    import langgraph_runtime_inmem.ops as runtime_ops  # noqa: PLC0415

    if getattr(runtime_ops.asyncio, "__hitl_compat__", False):
        return True
    waker = _Waker()
    put = runtime_ops.Runs.put

    async def put_and_wake(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401  (the engine's own signature)
        try:
            return await put(*args, **kwargs)
        finally:
            waker.wake()

    patched = types.ModuleType("asyncio", "asyncio, whose sleep wakes when a run is put (server.runtime)")
    patched.__dict__.update({k: v for k, v in vars(asyncio).items() if not k.startswith("__")})
    patched.sleep = waker.sleep  # type: ignore[attr-defined]
    patched.__hitl_compat__ = True  # type: ignore[attr-defined]
    runtime_ops.Runs.put = staticmethod(put_and_wake)  # type: ignore[method-assign,assignment]
    runtime_ops.asyncio = patched  # type: ignore[assignment]
    return True


POOLED_MODULES = ("langgraph_runtime_pg.checkpoint", "langgraph_runtime_pg.store")
"""Modules of the pg runtime that open a psycopg pool under the name `AsyncConnectionPool`."""
REDIS_RETRIES = 8
REDIS_BACKOFF = (0.05, 1.0)
"""Redis retry: base and cap of the exponential backoff (8 tries span about 6 s)."""


def _pg_pools_hand_out_unchecked() -> bool:
    from server.runtime.checkpointer import runtime_edition  # noqa: PLC0415  (only inside the server)

    if runtime_edition() != "pg":
        return False
    import importlib  # noqa: PLC0415

    for name in POOLED_MODULES:
        module = importlib.import_module(name)
        pool = module.AsyncConnectionPool
        if getattr(pool, "__hitl_compat__", False):
            continue

        class CheckedPool(pool):  # type: ignore[misc,valid-type]
            """The engine's pool, checking each connection as it is handed out."""

            __hitl_compat__ = True

            def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN401  (psycopg_pool's own)
                kwargs.setdefault("check", type(self).check_connection)
                super().__init__(*args, **kwargs)

        vars(module)["AsyncConnectionPool"] = CheckedPool
    return True


def _redis_pool_retries_nothing() -> bool:
    from server.runtime.checkpointer import runtime_edition  # noqa: PLC0415  (only inside the server)

    if runtime_edition() != "pg":
        return False
    from langgraph_runtime_pg import redis_stream  # noqa: PLC0415
    from redis.asyncio.retry import Retry  # noqa: PLC0415
    from redis.backoff import ExponentialBackoff  # noqa: PLC0415

    kwargs_of = redis_stream._redis_pool_kwargs  # noqa: SLF001  (the one place it builds the pool's options)
    if getattr(kwargs_of, "__hitl_compat__", False):
        return True

    def with_retry() -> dict[str, Any]:
        base, cap = REDIS_BACKOFF
        return {**kwargs_of(), "retry": Retry(ExponentialBackoff(cap=cap, base=base), REDIS_RETRIES)}

    with_retry.__hitl_compat__ = True  # type: ignore[attr-defined]
    redis_stream._redis_pool_kwargs = with_retry  # noqa: SLF001
    return True


def _sweep_idles_threads_unlocked() -> bool:
    from server.runtime.checkpointer import runtime_edition  # noqa: PLC0415  (only inside the server)

    if runtime_edition() != "pg":
        return False
    from datetime import UTC, datetime  # noqa: PLC0415

    import langgraph_runtime_pg.ops as runtime_ops  # noqa: PLC0415
    from langgraph_runtime_pg.models import ThreadRow  # noqa: PLC0415
    from sqlalchemy import select  # noqa: PLC0415

    if getattr(runtime_ops._idle_orphaned_busy_threads, "__hitl_compat__", False):  # noqa: SLF001
        return True

    async def idle_orphaned_busy_threads(sessions: Any) -> bool:  # noqa: ANN401  (the engine's session factory)
        """The engine's sweep of threads a dead worker left busy, each locked and read again."""
        async with sessions() as session:
            busy = list(
                (await session.scalars(select(ThreadRow.thread_id).where(ThreadRow.status == "busy"))).all()
            )
        idled = False
        for thread_id in busy:
            async with sessions() as session:
                locked = select(ThreadRow).where(ThreadRow.thread_id == thread_id, ThreadRow.status == "busy")
                thread = await session.scalar(
                    locked.with_for_update().execution_options(populate_existing=True)
                )
                if thread is None or await runtime_ops._thread_has_inflight_work(session, thread_id):  # noqa: SLF001
                    continue
                thread.status = "idle"
                thread.updated_at = datetime.now(UTC)
                await session.commit()
                idled = True
        return idled

    idle_orphaned_busy_threads.__hitl_compat__ = True  # type: ignore[attr-defined]
    runtime_ops._idle_orphaned_busy_threads = idle_orphaned_busy_threads  # noqa: SLF001
    return True


def lost_connection_errors() -> tuple[type[BaseException], ...]:
    """The exceptions of a PostgreSQL or Redis connection lost mid-run (the engine's drivers)."""
    import asyncpg  # noqa: PLC0415  (the pg runtime's drivers)
    import psycopg  # noqa: PLC0415
    import psycopg_pool  # noqa: PLC0415
    import redis.exceptions  # noqa: PLC0415
    import sqlalchemy.exc  # noqa: PLC0415

    return (
        redis.exceptions.ConnectionError,
        redis.exceptions.TimeoutError,
        psycopg.OperationalError,
        psycopg_pool.PoolTimeout,
        sqlalchemy.exc.OperationalError,
        sqlalchemy.exc.InterfaceError,
        asyncpg.exceptions.PostgresConnectionError,
        asyncpg.exceptions.CannotConnectNowError,
        asyncpg.exceptions.ConnectionDoesNotExistError,
        asyncpg.exceptions.AdminShutdownError,
        ConnectionError,
    )


def _worker_fails_runs_on_lost_connections() -> bool:
    from server.runtime.checkpointer import runtime_edition  # noqa: PLC0415  (only inside the server)

    if runtime_edition() != "pg":
        return False
    from langgraph_api import worker  # noqa: PLC0415

    retried = worker.ALL_RETRIABLE_EXCEPTIONS
    missing = tuple(e for e in lost_connection_errors() if e not in retried)
    if missing:
        worker.ALL_RETRIABLE_EXCEPTIONS = (*retried, *missing)
    return True


def _pg_runtime_serialises_with_json() -> bool:
    from server.runtime.checkpointer import runtime_edition  # noqa: PLC0415  (only inside the server)

    if runtime_edition() != "pg":
        return False
    from langgraph_api.serde import json_dumpb  # noqa: PLC0415
    from langgraph_runtime_pg import database  # noqa: PLC0415

    create = database.create_async_engine
    if getattr(create, "__hitl_compat__", False):
        return True

    def serialise(value: object) -> str:
        return json_dumpb(value).decode()

    def create_engine(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401  (SQLAlchemy's own signature)
        kwargs.setdefault("json_serializer", serialise)
        return create(*args, **kwargs)

    create_engine.__hitl_compat__ = True  # type: ignore[attr-defined]
    database.create_async_engine = create_engine
    return True


def _store_middleware_spans_lifespan() -> bool:
    try:
        from langgraph_api.middleware import ensure_store  # noqa: PLC0415  (only inside the server)
    except ImportError:
        return False
    middleware = ensure_store.EnsureStoreAccessible
    original = middleware.__call__
    if getattr(original, "__hitl_compat__", False):
        return True

    async def call(
        self: ensure_store.EnsureStoreAccessible, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if scope["type"] not in REQUEST_SCOPES:
            await self.app(scope, receive, send)
            return
        await original(self, scope, receive, send)

    call.__hitl_compat__ = True  # type: ignore[attr-defined]
    middleware.__call__ = call  # type: ignore[method-assign]
    return True


def served_graph(graph_id: str) -> object | None:
    """The graph object the engine serves under `graph_id` (`langgraph_api.graph.GRAPHS`), if any.

    The approval layer reads what it knows of an agent from the graph itself (`hitl.policy.served`),
    never from a module named after the graph id. langgraph-api keeps the graphs it loaded from
    `langgraph.json` in `GRAPHS` (0.11.1 to 0.16.7); `tests/unit/policy/test_served_cards.py` fails if
    an upgrade moves it.
    """
    try:
        from langgraph_api.graph import GRAPHS  # noqa: PLC0415  (only inside the server)
    except ImportError:
        return None
    return GRAPHS.get(graph_id)
