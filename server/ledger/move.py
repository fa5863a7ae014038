"""Moving the approval layer's records out of the business database, where releases before 2.0 kept them.

Once per store, at the server's first start on it (`move_out`) or by hand (`python -m
server.ledger.move`): each layer table found in the business database is copied into the
layer's own store (`HITL_DATABASE_URL`; a row already there is kept), then dropped from the
business database, and the store is marked `moved-from-business`. The copy commits before the
drop, inside one business transaction that holds the old tables (PostgreSQL: `ACCESS
EXCLUSIVE`), so a crash between the two leaves the old tables for the next start to copy again,
and a replica of the old release still writing waits, then finds no table. Once marked, the
store never takes rows from the business database again: a table an agent's SQL later names
`hitl_decisions` there is the business data's own. Not for the records' meaning: pending
approvals stay in the runtime's checkpoints, and what a moved decision may do is checked like
any other (`server.decisions.provenance`).
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import TYPE_CHECKING, Any

from sqlalchemy import MetaData, Table, func, inspect, select
from sqlalchemy.dialects import postgresql, sqlite

from hitl.databases import open_database, schema_lock
from hitl.settings import get_settings
from server.ledger import storage
from server.ledger.storage import store_marks

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

logger = logging.getLogger(__name__)
MOVE_LOCK = 0x68746D76
"""PostgreSQL advisory lock key held on the layer's store while records move into it ("htmv")."""
MARK = "moved-from-business"
BATCH = 1000
LAYER_TABLES = tuple(t.name for t in storage.METADATA.sorted_tables if t is not store_marks)
"""The layer's tables, parents before children: what an older release kept in the business database."""


def left_behind(business: Engine) -> list[str]:
    """The layer's tables that `business` still holds, in `LAYER_TABLES` order."""
    present = set(inspect(business).get_table_names())
    return [name for name in LAYER_TABLES if name in present]


def move_out(business_url: str | None = None, layer_url: str | None = None) -> dict[str, int]:
    """Move every layer table out of the business database into the layer's store, once; rows per table.

    A store marked before costs one read of its marks; a new one, one look at the business
    database's table names too. Blocking.
    """
    settings = get_settings()
    target_url = layer_url or settings.resolved_hitl_database_url
    layer = storage.ready(open_database(target_url))
    if _marked(layer):
        return {}
    business = open_database(business_url or settings.resolved_database_url)
    with schema_lock(target_url), layer.connect() as held:
        if layer.dialect.name == "postgresql":  # one mover at a time among replicas starting together
            held.execute(select(func.pg_advisory_lock(MOVE_LOCK)))
        try:
            moved = {} if _marked(layer) else _move(business, layer)
        finally:
            if layer.dialect.name == "postgresql":
                held.execute(select(func.pg_advisory_unlock(MOVE_LOCK)))
            held.rollback()
    if moved:
        logger.warning(
            "moved the approval layer's records out of the business database into HITL_DATABASE_URL: %s",
            ", ".join(f"{name} {count}" for name, count in moved.items()),
        )
    return moved


def _marked(layer: Engine) -> bool:
    with layer.connect() as conn:
        return conn.scalar(select(store_marks.c.mark).where(store_marks.c.mark == MARK)) is not None


def _move(business: Engine, layer: Engine) -> dict[str, int]:
    """Copy, then drop, under the business transaction that holds the old tables; then mark the store.

    Each step commits before the next starts, so a crash anywhere leaves a state the next start
    finishes: tables still there are copied again (rows kept once), none left means only the mark.
    """
    moved: dict[str, int] = {}
    with business.begin() as source:
        names = left_behind(business)
        if source.dialect.name == "postgresql" and names:
            quoted = ", ".join(source.dialect.identifier_preparer.quote(n) for n in names)
            source.exec_driver_sql(f"LOCK TABLE {quoted} IN ACCESS EXCLUSIVE MODE")
        old = MetaData()
        with layer.begin() as target:
            for name in names:
                moved[name] = _copy(source, target, Table(name, old, autoload_with=source))
        for name in reversed(names):  # children first
            source.exec_driver_sql(f"DROP TABLE {source.dialect.identifier_preparer.quote(name)}")
    with layer.begin() as target:
        target.execute(store_marks.insert().values(mark=MARK, made_at=time.time()))
    return moved


def _copy(source: Connection, target: Connection, old: Table) -> int:
    """Copy `old`'s rows into the layer's table of that name (columns both have); how many were read."""
    new = storage.METADATA.tables[old.name]
    shared = [c.name for c in new.columns if c.name in old.columns]
    dialect = postgresql if target.dialect.name == "postgresql" else sqlite
    count = 0
    result = source.execute(select(*(old.c[name] for name in shared)))
    while rows := result.fetchmany(BATCH):
        batch: list[dict[str, Any]] = [dict(row._mapping) for row in rows]  # noqa: SLF001  (SQLAlchemy's public row API)
        target.execute(dialect.insert(new).on_conflict_do_nothing(), batch)
        count += len(batch)
    return count


def main() -> None:
    """Move the records now (the server also does it at start) and say what moved."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    moved = move_out()
    if not moved:
        print("Nothing to move: this store took the business database's records before, or there were none.")  # noqa: T201
        return
    for name, count in moved.items():
        print(f"{name}: {count} rows moved")  # noqa: T201


if __name__ == "__main__":
    main()
