"""The start-up checks that a server sharing its engine with other replicas shares everything else too.

`langgraph dev`'s embedded runtime is one process: SQLite for the business database and the
approval layer's store, a checkpoint file and a seal key or receipt signing key made in `data_dir`
are fine there. On any other runtime (`langgraph-runtime-pg` replicas, the Agent Server) each of
those would be one replica's own, so an approval paused on A would be answerable, sealed or
refunded on A only; the server refuses to start instead. A PostgreSQL database the settings name
must answer at start-up, on any runtime, so that a wrong URL stops the server with the variable's
name rather than the first request.
Not for what a request may do (`server.http.auth`).
"""

from __future__ import annotations

import re

import psycopg
from sqlalchemy.engine import make_url

from hitl.settings import Settings, get_settings
from server.runtime.checkpointer import EMBEDDED_EDITION, runtime_edition

CONNECT_SECONDS = 10
"""How long a database may take to answer at start-up (libpq's connect_timeout)."""
SERVER_REFUSAL = re.compile(r"FATAL:\s+(?P<reason>.+)")
"""How libpq reports a server that answered and refused the connection (no SQLSTATE reaches psycopg)."""
MISSING_DATABASE = re.compile(r'database ".*" does not exist')


class SharedTopologyError(RuntimeError):
    """A replica would keep something to itself that every replica must share."""


class DatabaseUnreachableError(RuntimeError):
    """A database the settings name does not answer, refuses the login, or does not exist."""


def check_start_up(settings: Settings | None = None, edition: str | None = None) -> None:
    """Everything the server checks about where it keeps things before it serves (the lifespan's call).

    Raises:
        SharedTopologyError: a replica would keep something to itself.
        DatabaseUnreachableError: a PostgreSQL database the settings name cannot be used.
    """
    settings = settings or get_settings()
    check_topology(settings, edition)
    check_databases_answer(settings)


def check_topology(settings: Settings | None = None, edition: str | None = None) -> None:
    """Refuse to start a replica whose business database, layer store, checkpoints or keys are its own.

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
    if not settings.resolved_hitl_database_url.startswith("postgresql"):
        problems.append(
            "HITL_DATABASE_URL must name the approval layer's shared PostgreSQL database "
            "(postgresql+psycopg://...), not a SQLite file of this replica (decisions, claims and the trail "
            "would be per replica)"
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


def check_databases_answer(settings: Settings | None = None) -> None:
    """Connect once to each PostgreSQL database the settings name, so a wrong one stops the start.

    SQLite files are made on first use and need no check.

    Raises:
        DatabaseUnreachableError: naming the variable, the database (no password) and what went wrong.
    """
    settings = settings or get_settings()
    problems = [
        problem
        for variable, url in (
            ("DATABASE_URL", settings.resolved_database_url),
            ("HITL_DATABASE_URL", settings.resolved_hitl_database_url),
        )
        if (problem := database_problem(variable, url))
    ]
    if problems:
        raise DatabaseUnreachableError("; ".join(problems) + ".")


def database_problem(variable: str, url: str) -> str | None:
    """What is wrong with the PostgreSQL database `url` (set by `variable`), or None when it answers."""
    parsed = make_url(url)
    if not parsed.drivername.startswith("postgresql"):
        return None
    shown = parsed.render_as_string(hide_password=True)
    conninfo = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        with psycopg.connect(conninfo, connect_timeout=CONNECT_SECONDS) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as error:
        message = " ".join(str(error).split()) or type(error).__name__
        refusal = SERVER_REFUSAL.search(message)
        if refusal and MISSING_DATABASE.search(refusal["reason"]):
            return (
                f"{variable} names database {parsed.database!r}, which does not exist on "
                f"{parsed.host}:{parsed.port or 5432} ({shown}): create it (deploy/postgres-init does on a "
                "new volume) or correct the URL"
            )
        if refusal:
            return f"{variable} ({shown}) was refused: {refusal['reason']}; check the role and its password"
        return (
            f"{variable} ({shown}) does not answer within {CONNECT_SECONDS} s ({message}); "
            "check the host, the port and that PostgreSQL is running"
        )
    return None


def _custom_checkpointer() -> bool:
    from langgraph_api import config  # noqa: PLC0415  (exists only inside the server)

    return bool(config.USE_CUSTOM_CHECKPOINTER)
