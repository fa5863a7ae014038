"""The start-up check that the approval layer's store is out of the business connection's reach.

An agent's tools (a SQL console above all) run statements as the business connection
(`DATABASE_URL`). If that connection could read or write the layer's decisions, receipts or
trail, a prompt-injected agent could forge a decision. So the server refuses to start when the
layer's store (`HITL_DATABASE_URL`) is the business database, when the business role is a
PostgreSQL superuser (`COPY ... PROGRAM`, `pg_read_file` reach any file), or when it may
connect to the layer's PostgreSQL database.
Not for moving an older release's records (`server.ledger.move`).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import URL, make_url

from hitl.databases import open_database
from hitl.settings import Settings, get_settings

POWERS = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program")
"""PostgreSQL roles whose members read or write the server's files or run programs on it."""


class StoreNotApartError(RuntimeError):
    """The business connection could reach the approval layer's records."""


def check_store_apart(settings: Settings | None = None) -> None:
    """Refuse to start when the business connection could reach the layer's store (blocking).

    Raises:
        StoreNotApartError: naming each setting to change.
    """
    settings = settings or get_settings()
    business, layer = make_url(settings.resolved_database_url), make_url(settings.resolved_hitl_database_url)
    if _same_database(business, layer):
        msg = (
            "HITL_DATABASE_URL names the business database (DATABASE_URL): the approval layer's records "
            "must live in a store of their own that no agent tool reaches (empty: DATA_DIR/hitl.db)."
        )
        raise StoreNotApartError(msg)
    problems = []
    engine = open_database(settings.resolved_database_url)
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            role = conn.execute(text("SELECT current_user")).scalar_one()
            superuser = conn.execute(
                text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            ).scalar()
            powers = [
                power
                for power in POWERS
                if conn.execute(
                    text("SELECT pg_has_role(current_user, :power, 'MEMBER')"), {"power": power}
                ).scalar()
            ]
        if superuser or powers:
            what = "a superuser" if superuser else f"a member of {', '.join(powers)}"
            problems.append(
                f"DATABASE_URL connects as {role}, {what}: the agents' SQL statements could read any file "
                "or database of the server; give the business data a role of its own (deploy/README.md)"
            )
        if layer.get_backend_name() == "postgresql" and _same_server(business, layer):
            problems += _reachable_layer(settings.resolved_hitl_database_url, str(role), layer.database or "")
    if problems:
        raise StoreNotApartError(
            "The approval layer's store is not apart from the business data: " + "; ".join(problems) + "."
        )


def _reachable_layer(layer_url: str, role: str, database: str) -> list[str]:
    """Whether `role` may connect to the layer's database (checked from the layer's side)."""
    with open_database(layer_url).connect() as conn:
        known = conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :role"), {"role": role}).scalar()
        if not known:
            return []
        may = conn.execute(
            text("SELECT has_database_privilege(:role, current_database(), 'CONNECT')"), {"role": role}
        ).scalar()
    if not may:
        return []
    why = f"the business role {role} may connect to the layer's database {database}"
    return [f"{why} (REVOKE ALL ON DATABASE {database} FROM PUBLIC, and grant {role} nothing there)"]


def _same_database(business: URL, layer: URL) -> bool:
    if business.get_backend_name() != layer.get_backend_name():
        return False
    if business.get_backend_name() == "sqlite":
        return _sqlite_file(business) == _sqlite_file(layer)
    return _same_server(business, layer) and business.database == layer.database


def _same_server(business: URL, layer: URL) -> bool:
    return (business.host or "localhost", business.port or 5432) == (
        layer.host or "localhost",
        layer.port or 5432,
    )


def _sqlite_file(url: URL) -> str:
    name = url.database or ":memory:"
    return name if name == ":memory:" else str(Path(name).resolve())
