"""The durable checkpointer of `langgraph dev` (`checkpointer.path` in `langgraph.json`).

The embedded runtime keeps checkpoints in memory and saves them every 10 s; this saver commits
each checkpoint to SQLite in `DATA_DIR` as it is written, so a pending approval survives a crash.
Not for the production Agent Server, which keeps its checkpoints in PostgreSQL (`deploy/README.md`).
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from hitl.settings import get_settings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path


class DurableSaver(AsyncSqliteSaver):
    """`AsyncSqliteSaver` that can also say which threads and runs its checkpoints belong to."""

    async def latest_metadata(self) -> dict[str, dict[str, Any]]:
        """The metadata of every thread's latest top-level checkpoint, by thread id."""
        rows = await self._rows(
            "SELECT c.thread_id, c.metadata FROM checkpoints AS c JOIN ("
            " SELECT thread_id, MAX(checkpoint_id) AS checkpoint_id FROM checkpoints"
            " WHERE checkpoint_ns = '' GROUP BY thread_id"
            ") AS latest USING (thread_id, checkpoint_id) WHERE c.checkpoint_ns = ''"
        )
        return {str(thread_id): _metadata(raw) for thread_id, raw in rows}

    async def writer_run_ids(self, thread_id: str) -> set[str]:
        """The ids of the runs that wrote a top-level checkpoint of `thread_id`."""
        rows = await self._rows(
            "SELECT metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''", (thread_id,)
        )
        return {str(run_id) for (raw,) in rows if (run_id := _metadata(raw).get("run_id"))}

    async def _rows(self, query: str, params: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
        await self.setup()
        async with self.lock, self.conn.execute(query, params) as cursor:
            return [tuple(row) async for row in cursor]


def _metadata(raw: bytes | str | None) -> dict[str, Any]:
    loaded = json.loads(raw) if raw else {}
    return loaded if isinstance(loaded, dict) else {}


EMBEDDED_EDITION = "inmem"
"""The runtime of `langgraph dev`: one process, records in memory, checkpoints here."""


def runtime_edition() -> str:
    """The runtime the server runs on (`inmem`, `postgres`, `pg`, ...): checked before anything else.

    Read from `langgraph_runtime`, which imports the edition's package; `langgraph_api`'s own
    `IS_POSTGRES_BACKEND` names only the licensed one and says False on every other.
    """
    import langgraph_runtime  # noqa: PLC0415  (exists only inside the server)

    return str(langgraph_runtime.RUNTIME_EDITION)


@cache
def shared_runtime() -> bool:
    """Whether other processes may serve the same threads (any runtime but `langgraph dev`'s)."""
    return runtime_edition() != EMBEDDED_EDITION


def checkpoint_file() -> Path:
    """Where the dev server's checkpoints are kept: `checkpoints.db` in `DATA_DIR`."""
    return get_settings().data_dir / "checkpoints.db"


@asynccontextmanager
async def durable_checkpointer() -> AsyncIterator[DurableSaver]:
    """Open the SQLite checkpoint file; the server enters this once per event loop.

    Raises:
        RuntimeError: started on any runtime but the embedded one of `langgraph dev` (the
            Agent Server, `langgraph-runtime-pg` replicas), which keep their checkpoints in
            PostgreSQL: a SQLite file per process would make each approval answerable on one
            replica only. Their config leaves `checkpointer` out (`langgraph.replicas.json`;
            the Agent Server's image: `LANGGRAPH_CHECKPOINTER=''`, see deploy/README.md).
    """
    edition = runtime_edition()
    if edition != EMBEDDED_EDITION:
        msg = (
            f"server.runtime.checkpointer is for `langgraph dev` only, not the {edition!r} runtime, "
            "which keeps "
            "its checkpoints in PostgreSQL. Serve with langgraph.replicas.json, or set "
            "LANGGRAPH_CHECKPOINTER='' for the Agent Server's container (see deploy/README.md)."
        )
        raise RuntimeError(msg)
    path = checkpoint_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    async with DurableSaver.from_conn_string(str(path)) as saver:
        await saver.setup()  # also turns on WAL
        # WAL + NORMAL: a commit survives the death of the process (what we guard against)
        # without an fsync per checkpoint; a power cut may lose the last few.
        await saver.conn.execute("PRAGMA synchronous=NORMAL")
        yield cast("DurableSaver", saver)
