"""The business database: engine, tables and the demo data seeded on first use.

One SQLAlchemy Core schema for SQLite and PostgreSQL. Not an ORM layer: each service
module writes its own small queries against these tables. A database made by an older
version is brought up to date on opening (nullable columns it lacks are added).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import (
    Boolean,
    Column,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError, OperationalError

from hitl.databases import SCHEMA_LOCK, open_database, schema_lock

if TYPE_CHECKING:
    from sqlalchemy import Connection

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
    Column("owner", String(200), nullable=True, index=True),  # the customer's user identity
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

flights = Table(
    "flights",
    metadata,
    Column("flight_id", String(32), primary_key=True),
    Column("carrier", String(100), nullable=False),
    Column("origin", String(100), nullable=False),
    Column("destination", String(100), nullable=False),
    Column("date", String(10), nullable=False),
    Column("departs", String(5), nullable=False),
    Column("price", Float, nullable=False),
)

bookings = Table(
    "bookings",
    metadata,
    Column("booking_id", String(64), primary_key=True),
    Column("tool_call_id", String(200), nullable=False, unique=True),
    Column("flight_id", String(32), nullable=False),
    Column("seat_class", String(16), nullable=False),
    Column("insurance", Boolean, nullable=False),
    Column("price", Float, nullable=False),
    Column("status", String(16), nullable=False),
    Column("cancelled_by", String(200), nullable=True, unique=True),
    Column("created_at", String(32), nullable=False),
    Column("owner", String(200), nullable=True, index=True),  # the traveller's user identity
)

sql_runs = Table(
    "sql_runs",
    metadata,
    Column("tool_call_id", String(200), primary_key=True),
    Column("statement", Text, nullable=False),
    Column("rowcount", Integer, nullable=False),
    Column("created_at", String(32), nullable=False),
)

file_deletions = Table(
    "file_deletions",
    metadata,
    Column("tool_call_id", String(200), primary_key=True),
    Column("path", String(1000), nullable=False),
    Column("created_at", String(32), nullable=False),
)

invoices = Table(
    "invoices",
    metadata,
    Column("invoice_id", String(32), primary_key=True),
    Column("order_id", String(32), nullable=False),
    Column("amount", Float, nullable=False),
    Column("status", String(16), nullable=False),  # open, void
    Column("voided_by", String(200), nullable=True, unique=True),  # the tool call that voided it
    Column("owner", String(200), nullable=True, index=True),  # the customer's user identity
)

credit_notes = Table(
    "credit_notes",
    metadata,
    Column("credit_note_id", String(64), primary_key=True),
    Column("tool_call_id", String(200), nullable=False, unique=True),
    Column("invoice_id", String(32), nullable=False, index=True),
    Column("amount", Float, nullable=False),
    Column("reason", Text, nullable=False),
    Column("created_at", String(32), nullable=False),
)

DEMO_ORDERS: tuple[dict[str, object], ...] = (  # owners: the dev requesters of `.env.example`
    {
        "order_id": "A1024",
        "customer_name": "Mara Lind",
        "customer_email": "mara.lind@example.com",
        "item": "Espresso machine",
        "amount": 899.0,
        "status": "delivered",
        "delivered_on": "2026-11-02",
        "owner": "requester1",
    },
    {
        "order_id": "A2048",
        "customer_name": "Tomas Berg",
        "customer_email": "tomas.berg@example.com",
        "item": "Milk frother",
        "amount": 59.0,
        "status": "delivered",
        "delivered_on": "2026-11-12",
        "owner": "requester1",
    },
    {
        "order_id": "A3072",
        "customer_name": "Ines Duarte",
        "customer_email": "ines.duarte@example.com",
        "item": "Grinder",
        "amount": 300.0,
        "status": "delivered",
        "delivered_on": "2026-11-20",
        "owner": "requester2",
    },
    {
        "order_id": "A0412",
        "customer_name": "Jonas Weber",
        "customer_email": "jonas.weber@example.com",
        "item": "Kettle",
        "amount": 45.0,
        "status": "delivered",
        "delivered_on": "2024-03-14",
        "owner": "requester1",
    },
    {
        "order_id": "A0733",
        "customer_name": "Lea Santos",
        "customer_email": "lea.santos@example.com",
        "item": "Coffee scale",
        "amount": 32.0,
        "status": "delivered",
        "delivered_on": "2024-09-02",
        "owner": "requester2",
    },
    {
        "order_id": "A4096",
        "customer_name": "Ada Okafor",
        "customer_email": "ada.okafor@example.com",
        "item": "Dual-boiler espresso machine",
        "amount": 2400.0,
        "status": "delivered",
        "delivered_on": "2026-11-25",
        "owner": "requester1",
    },
)

DEMO_FLIGHTS: tuple[dict[str, object], ...] = (
    {"flight_id": "TP541", "carrier": "TAP Air Portugal", "departs": "06:50", "price": 184.0},
    {"flight_id": "FR8364", "carrier": "Ryanair", "departs": "09:40", "price": 89.0},
    {"flight_id": "LH1166", "carrier": "Lufthansa", "departs": "13:15", "price": 241.0},
    {"flight_id": "U25721", "carrier": "easyJet", "departs": "18:05", "price": 112.0},
)
"""Berlin to Lisbon on 2026-12-18, the demo route; cheapest is FR8364 at 89."""


def connect(url: str) -> Engine:
    """Open the business database at `url`, creating and seeding it on first use.

    Sealed: a SQLite statement (the ops agent's SQL console runs any a person approved) cannot
    attach another database file, such as the approval layer's own store.
    """
    engine = open_database(url, sealed=True)
    with schema_lock(url), engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            # Processes opening a new database at once (server workers, a test) would race on
            # CREATE TABLE, which PostgreSQL does not serialise: the first creates, the rest wait.
            conn.execute(select(func.pg_advisory_xact_lock(SCHEMA_LOCK)))
        metadata.create_all(conn)
        add_missing_columns(conn)
    seed_demo_orders(engine)
    seed_demo_flights(engine)
    seed_demo_invoices(engine)
    return engine


def add_missing_columns(conn: Connection) -> None:
    """Add each nullable column a table made by an older version lacks (e.g. `owner`).

    On PostgreSQL the caller holds the schema lock; two SQLite processes that both add a
    column at once see "duplicate column", which means the other one did it.
    """
    inspector = inspect(conn)
    for table in metadata.sorted_tables:
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present or not column.nullable:
                continue
            kind = column.type.compile(dialect=conn.dialect)
            try:  # a failed statement leaves a SQLite transaction usable
                conn.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}")
            except OperationalError as error:
                if "duplicate column" not in str(error.orig).lower():
                    raise


def seed_demo_orders(engine: Engine) -> None:
    """Insert the demo orders that are not there yet; give an owner to those from before owners."""
    with engine.begin() as conn:
        present = set(conn.scalars(select(orders.c.order_id)))
        missing = [row for row in DEMO_ORDERS if row["order_id"] not in present]
        if missing:
            try:
                conn.execute(insert(orders), missing)
            except IntegrityError:  # another process seeded them a moment ago
                conn.rollback()
    with engine.begin() as conn:
        for row in DEMO_ORDERS:
            conn.execute(
                update(orders)
                .where(orders.c.order_id == row["order_id"])
                .where(orders.c.owner.is_(None))
                .values(owner=row["owner"])
            )


def seed_demo_flights(engine: Engine) -> None:
    """Insert the demo flights (Berlin to Lisbon on 2026-12-18) that are not there yet."""
    route = {"origin": "Berlin", "destination": "Lisbon", "date": "2026-12-18"}
    with engine.begin() as conn:
        present = set(conn.scalars(select(flights.c.flight_id)))
        missing = [{**route, **row} for row in DEMO_FLIGHTS if row["flight_id"] not in present]
        if missing:
            try:
                conn.execute(insert(flights), missing)
            except IntegrityError:  # another process seeded them a moment ago
                conn.rollback()


def seed_demo_invoices(engine: Engine) -> None:
    """Insert an open invoice per demo order (INV-1024 for A1024, same amount and owner) not there yet."""
    rows = [
        {
            "invoice_id": f"INV-{str(order['order_id'])[1:]}",
            "order_id": order["order_id"],
            "amount": order["amount"],
            "status": "open",
            "owner": order["owner"],
        }
        for order in DEMO_ORDERS
    ]
    with engine.begin() as conn:
        present = set(conn.scalars(select(invoices.c.invoice_id)))
        missing = [row for row in rows if row["invoice_id"] not in present]
        if missing:
            try:
                conn.execute(insert(invoices), missing)
            except IntegrityError:  # another process seeded them a moment ago
                conn.rollback()
