"""Owners and limits in the business services, once on SQLite and once on PostgreSQL.

Bookings and orders carry their customer; a database from before owners opens and gains the
column; SQL runs under a time limit and a row cap.
"""

from __future__ import annotations

import time

import pytest
from sqlalchemy import Boolean, Column, Float, MetaData, String, Table, create_engine, insert, inspect

from services.database import DEMO_ORDERS
from services.errors import BusinessRuleError
from services.flights import fare
from services.registry import Services
from services.sql import SqlConsole
from tests.conftest import add_order

ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r"
ENDLESS_AS_SELECT = (
    "SELECT count(*) FROM "
    "(WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT n FROM r) AS endless"
)
"""The same, as one plain SELECT: a read no person reviews."""
LIMIT_MS = 300


def old_tables() -> MetaData:
    """The orders and bookings tables as a version without owners made them."""
    old = MetaData()
    Table(
        "orders",
        old,
        Column("order_id", String(32), primary_key=True),
        Column("customer_name", String(200), nullable=False),
        Column("customer_email", String(200), nullable=False),
        Column("item", String(200), nullable=False),
        Column("amount", Float, nullable=False),
        Column("status", String(32), nullable=False),
        Column("delivered_on", String(10), nullable=True),
    )
    Table(
        "bookings",
        old,
        Column("booking_id", String(64), primary_key=True),
        Column("tool_call_id", String(200), nullable=False, unique=True),
        Column("flight_id", String(32), nullable=False),
        Column("seat_class", String(16), nullable=False),
        Column("insurance", Boolean, nullable=False),
        Column("price", Float, nullable=False),
        Column("status", String(16), nullable=False),
        Column("cancelled_by", String(200), nullable=True, unique=True),
        Column("created_at", String(32), nullable=False),
    )
    return old


def test_a_database_from_before_owners_opens_and_gains_them(database_url, engines):
    """migration: old orders and bookings gain `owner`; demo orders get theirs; old rows stay, unowned."""
    old_engine = create_engine(database_url)
    old = old_tables()
    with old_engine.begin() as conn:
        old.create_all(conn)
        conn.execute(
            insert(old.tables["orders"]),
            [
                {
                    "order_id": "A1024",
                    "customer_name": "Mara Lind",
                    "customer_email": "mara.lind@example.com",
                    "item": "Espresso machine",
                    "amount": 899.0,
                    "status": "delivered",
                    "delivered_on": "2026-11-02",
                }
            ],
        )
        conn.execute(
            insert(old.tables["bookings"]),
            [
                {
                    "booking_id": "BK-OLD",
                    "tool_call_id": "old-call",
                    "flight_id": "TP541",
                    "seat_class": "economy",
                    "insurance": False,
                    "price": 184.0,
                    "status": "confirmed",
                    "created_at": "2025-01-01T00:00:00+00:00",
                }
            ],
        )
    old_engine.dispose()

    services = Services.open(database_url)

    for table in ("orders", "bookings"):
        assert "owner" in {c["name"] for c in inspect(engines[-1]).get_columns(table)}
    assert services.orders.get("A1024")["owner"] == "requester1"
    assert services.orders.get("A3072")["owner"] == "requester2"
    assert services.bookings.get("BK-OLD")["owner"] is None
    with pytest.raises(BusinessRuleError, match="not a booking of requester1"):
        services.bookings.cancel(tool_call_id="c1", booking_id="BK-OLD", owner="requester1")
    assert services.bookings.cancel(tool_call_id="c2", booking_id="BK-OLD")["status"] == "cancelled"
    assert Services.open(database_url).orders.get("A1024")["owner"] == "requester1"  # opens again


def test_a_cancellation_by_another_traveller_changes_nothing(services):
    """bookings: requester1 cancelling requester2's booking is refused, nothing changes; the owner cancels."""
    booking = services.bookings.book(
        tool_call_id="b1", flight_id="FR8364", seat_class="economy", insurance=False, owner="requester2"
    )
    with pytest.raises(
        BusinessRuleError, match=f"Booking {booking['booking_id']} is not a booking of requester1"
    ):
        services.bookings.cancel(tool_call_id="x1", booking_id=booking["booking_id"], owner="requester1")
    assert services.bookings.get(booking["booking_id"]) == booking
    with pytest.raises(BusinessRuleError, match=r"no booking BK-\w+ for requester1"):
        services.bookings.get(booking["booking_id"], owner="requester1")
    cancelled = services.bookings.cancel(
        tool_call_id="x2", booking_id=booking["booking_id"], owner="requester2"
    )
    assert (cancelled["status"], cancelled["cancelled_by"]) == ("cancelled", "x2")


def test_orders_and_refunds_for_a_customer(services):
    """orders/payments: another customer's order reads as missing and cannot be refunded; its own can."""
    order_id = add_order(services, 80.0, owner="requester2")
    with pytest.raises(BusinessRuleError, match=f"There is no order {order_id} for requester1"):
        services.orders.get(order_id, owner="requester1")
    with pytest.raises(BusinessRuleError, match=f"There is no order {order_id} for requester1"):
        services.payments.issue_refund(
            tool_call_id="r1", order_id=order_id, amount=10, reason="x", owner="requester1"
        )
    assert services.payments.refunds_for(order_id) == []
    refund = services.payments.issue_refund(
        tool_call_id="r2", order_id=order_id, amount=10, reason="x", owner="requester2"
    )
    assert services.payments.refunds_for(order_id) == [refund]


def test_records_for_a_customer_show_only_their_rows(services):
    """records: a customer reads only their orders and bookings, the flights, and no staff table."""
    services.bookings.book(
        tool_call_id="b1", flight_id="FR8364", seat_class="economy", insurance=False, owner="requester1"
    )
    services.bookings.book(
        tool_call_id="b2", flight_id="FR8364", seat_class="economy", insurance=False, owner="requester2"
    )
    orders = services.records.read("orders", owner="requester2")
    assert [o["order_id"] for o in orders] == ["A0733", "A3072"]
    assert [b["tool_call_id"] for b in services.records.read("bookings", owner="requester1")] == ["b1"]
    assert len(services.records.read("flights", owner="requester1")) == 4
    with pytest.raises(BusinessRuleError, match="'sql_runs' is for staff"):
        services.records.read("sql_runs", owner="requester1")
    assert len(services.records.read("bookings")) == 2


def test_the_price_follows_seat_class_and_insurance(services):
    """fares: on FR8364 (89 economy) economy is 89, premium 142.4, business + insurance 234.5."""
    prices = {
        (seat, insured): services.bookings.book(
            tool_call_id=f"{seat}-{insured}", flight_id="FR8364", seat_class=seat, insurance=insured
        )["price"]
        for seat, insured in [("economy", False), ("economy", True), ("premium", False), ("business", True)]
    }
    assert prices == {
        ("economy", False): 89.0,
        ("economy", True): 101.0,
        ("premium", False): 142.4,
        ("business", True): 234.5,
    }
    with pytest.raises(BusinessRuleError, match="no seat class 'first'"):
        fare(89.0, "first", insurance=False)


@pytest.mark.parametrize("query", [ENDLESS_AS_SELECT, ENDLESS])
def test_a_statement_that_never_ends_is_stopped_at_the_time_limit(services, engines, query):
    """time limit: an endless recursive CTE (as a read, and as a reviewed statement) fails clearly in time."""
    console = SqlConsole(engines[-1], read_timeout_ms=LIMIT_MS, write_timeout_ms=LIMIT_MS)
    console.run("SELECT 1 AS one", tool_call_id="warm")  # its worker runs: what is timed is the statement
    started = time.monotonic()
    with pytest.raises(BusinessRuleError, match=f"ran longer than {LIMIT_MS} ms and was stopped"):
        console.run(query, tool_call_id="endless")
    assert time.monotonic() - started < LIMIT_MS / 1000 + 2
    assert console.run("SELECT count(*) AS n FROM orders", tool_call_id="after")["rows"] == [
        {"n": len(DEMO_ORDERS)}
    ]
    assert console.writes() == 0


def test_a_read_is_cut_at_the_row_limit_and_says_so(services, engines):
    """row cap: a read of more rows than the cap returns the cap and `truncated`; a smaller one does not."""
    console = SqlConsole(engines[-1], max_rows=3)
    cut = console.run("SELECT order_id FROM orders ORDER BY order_id", tool_call_id="r1")
    assert (cut["rowcount"], cut["truncated"]) == (3, True)
    whole = console.run("SELECT order_id FROM orders WHERE order_id < 'A1'", tool_call_id="r2")
    assert (whole["rowcount"], whole["truncated"]) == (2, False)
    assert services.sql.run("SELECT 1 AS one", tool_call_id="r3")["truncated"] is False
