"""The business database: engine, tables and the demo data seeded on first use.

One SQLAlchemy Core schema for SQLite and PostgreSQL. Not an ORM layer: each service
module writes its own small queries against these tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import (
    Column,
    Engine,
    Float,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    insert,
    select,
)
from sqlalchemy.exc import IntegrityError

if TYPE_CHECKING:
    from sqlite3 import Connection as SQLiteConnection

metadata = MetaData()

orders = Table(
    "orders",
    metadata,
    Column("order_id", String(32), primary_key=True),
    Column("customer_name", String(200), nullable=False),
    Column("customer_email", String(200), nullable=False),
    Column("item", String(200), nullable=False),
    Column("amount", Float, nullable=False),
    Column("status", String(32), nullable=False),
    Column("delivered_on", String(10), nullable=True),
)

refunds = Table(
    "refunds",
    metadata,
    Column("refund_id", String(64), primary_key=True),
    Column("tool_call_id", String(200), nullable=False, unique=True),
    Column("order_id", String(32), nullable=False, unique=True),
    Column("amount", Float, nullable=False),
    Column("reason", Text, nullable=False),
    Column("created_at", String(32), nullable=False),
)

outbox = Table(
    "outbox",
    metadata,
    Column("email_id", String(64), primary_key=True),
    Column("tool_call_id", String(200), nullable=False, unique=True),
    Column("to_address", String(200), nullable=False),
    Column("subject", String(300), nullable=False),
    Column("body", Text, nullable=False),
    Column("created_at", String(32), nullable=False),
)

DEMO_ORDERS: tuple[dict[str, object], ...] = (
    {
        "order_id": "A1024",
        "customer_name": "Mara Lind",
        "customer_email": "mara.lind@example.com",
        "item": "Espresso machine",
        "amount": 899.0,
        "status": "delivered",
        "delivered_on": "2026-11-02",
    },
    {
        "order_id": "A2048",
        "customer_name": "Tomas Berg",
        "customer_email": "tomas.berg@example.com",
        "item": "Milk frother",
        "amount": 59.0,
        "status": "delivered",
        "delivered_on": "2026-11-12",
    },
    {
        "order_id": "A3072",
        "customer_name": "Ines Duarte",
        "customer_email": "ines.duarte@example.com",
        "item": "Grinder",
        "amount": 300.0,
        "status": "delivered",
        "delivered_on": "2026-11-20",
    },
)


def _sqlite_pragmas(dbapi_connection: SQLiteConnection, _record: object) -> None:
    """WAL and a busy timeout, so the server and a test can share the file."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def connect(url: str) -> Engine:
    """Open the business database at `url`, creating and seeding it on first use."""
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, pool_pre_ping=True)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    metadata.create_all(engine)
    seed_demo_orders(engine)
    return engine


def seed_demo_orders(engine: Engine) -> None:
    """Insert the demo orders that are not there yet."""
    with engine.begin() as conn:
        present = set(conn.scalars(select(orders.c.order_id)))
        missing = [row for row in DEMO_ORDERS if row["order_id"] not in present]
        if missing:
            try:
                conn.execute(insert(orders), missing)
            except IntegrityError:  # another process seeded them a moment ago
                conn.rollback()
