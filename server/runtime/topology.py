"""The start-up check that a server sharing its engine with other replicas shares everything else too.

`langgraph dev`'s embedded runtime is one process: SQLite for the business database, a
checkpoint file and a seal key or receipt signing key made in `data_dir` are fine there. On any other runtime
(`langgraph-runtime-pg` replicas, the Agent Server) each of those would be one replica's own,
so an approval paused on A would be answerable, sealed or refunded on A only; the server
refuses to start instead. Not for what a request may do (`server.http.auth`).
"""

from __future__ import annotations

from hitl.settings import Settings, get_settings
from server.runtime.checkpointer import EMBEDDED_EDITION, runtime_edition


class SharedTopologyError(RuntimeError):
    """A replica would keep something to itself that every replica must share."""


def check_topology(settings: Settings | None = None, edition: str | None = None) -> None:
    """Refuse to start a replica whose business database, checkpoints or seal key are its own.

    `edition` is the runtime's (read from the server by default).

    Raises:
        SharedTopologyError: naming each setting to change.
    """
    settings = settings or get_settings()
    edition = edition or runtime_edition()
    if edition == EMBEDDED_EDITION:
        return
    problems = []
    if not settings.resolved_database_url.startswith("postgresql"):
        problems.append(
            "DATABASE_URL must name the shared PostgreSQL business database "
            "(postgresql+psycopg://...), not a SQLite file of this replica"
        )
    if not settings.hitl_seal_key:
        problems.append("HITL_SEAL_KEY must be set, the same on every replica (a key file is per replica)")
    if not (settings.hitl_receipt_key or settings.hitl_receipt_key_file):
        problems.append(
            "HITL_RECEIPT_KEY (or HITL_RECEIPT_KEY_FILE on storage every replica shares) must name the same "
            "receipt signing key on every replica (one made in data_dir is per replica)"
        )
    if _custom_checkpointer():
        problems.append(
            "the config must not name a `checkpointer` (serve langgraph.replicas.json): "
            "server.runtime.checkpointer is a SQLite file per process"
        )
    if problems:
        msg = f"This server runs on the shared {edition!r} runtime, so " + "; ".join(problems) + "."
        raise SharedTopologyError(msg)


def _custom_checkpointer() -> bool:
    from langgraph_api import config  # noqa: PLC0415  (exists only inside the server)

    return bool(config.USE_CUSTOM_CHECKPOINTER)
