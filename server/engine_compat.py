"""Workarounds for engine bugs met when serving the package, each applied only where it is needed.

Every workaround names the bug, the versions it was seen on and the check that tells when it
can go: `tests/replicas/test_engine_compat.py` asserts the bug is still there upstream, so the
test fails (and this module should shrink) once an engine release fixes it. The one private name
the package reads from the engine besides (`served_graph`) is here too.

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
"""

from __future__ import annotations

import sys
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
    return applied


def _pg_runtime_serialises_with_json() -> bool:
    from server.checkpointer import runtime_edition  # noqa: PLC0415  (only inside the server)

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

    The approval layer reads what it knows of an agent from the graph itself (`hitl.served`),
    never from a module named after the graph id. langgraph-api keeps the graphs it loaded from
    `langgraph.json` in `GRAPHS` (0.11.1 to 0.16.7); `tests/unit/test_served_cards.py` fails if
    an upgrade moves it.
    """
    try:
        from langgraph_api.graph import GRAPHS  # noqa: PLC0415  (only inside the server)
    except ImportError:
        return None
    return GRAPHS.get(graph_id)
