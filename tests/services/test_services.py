"""The business services, once on SQLite and once on PostgreSQL: rules, and one write per tool call."""

from __future__ import annotations

import pytest

from services.errors import BusinessRuleError
from tests.conftest import add_order


def test_the_demo_data_is_seeded_once_per_database(services, database_url):
    """seeding: the demo orders and flights are there, and opening the database again adds none."""
    assert services.orders.get("A1024")["amount"] == 899.0
    again = type(services).open(database_url)
    assert again.orders.get("A2048")["customer_email"] == "tomas.berg@example.com"
    flights = again.timetable.search(origin="berlin", destination="Lisbon", date="2026-12-18")
    assert flights[0]["flight_id"] == "FR8364"


def test_an_unknown_order_is_refused_by_name(services):
    """orders: looking up a missing order says which one."""
    with pytest.raises(BusinessRuleError, match="There is no order Z9999"):
        services.orders.get("Z9999")


def test_a_refund_is_written_once_per_tool_call(services):
    """refunds: a replay of the same tool call returns the first refund and writes nothing more."""
    order_id = add_order(services, 250)
    first = services.payments.issue_refund(
        tool_call_id="call-1", order_id=order_id, amount=200, reason="Broken"
    )
    replay = services.payments.issue_refund(
        tool_call_id="call-1", order_id=order_id, amount=200, reason="Broken"
    )
    assert replay == first
    assert [(r["refund_id"], r["amount"]) for r in services.payments.refunds_for(order_id)] == [
        (first["refund_id"], 200.0)
    ]


def test_an_order_is_refunded_at_most_once(services):
    """refunds: a second tool call on a refunded order is refused with a reason; one row stays."""
    order_id = add_order(services, 80)
    services.payments.issue_refund(tool_call_id="call-1", order_id=order_id, amount=80, reason="Broken")
    with pytest.raises(BusinessRuleError, match="already been refunded"):
        services.payments.issue_refund(tool_call_id="call-2", order_id=order_id, amount=10, reason="Again")
    assert len(services.payments.refunds_for(order_id)) == 1


@pytest.mark.parametrize(
    ("amount", "order_id", "message"),
    [(0, None, "must be more than 0"), (251, None, "exceeds it"), (10, "Z0000", "There is no order Z0000")],
)
def test_a_refund_outside_the_rules_writes_nothing(services, amount, order_id, message):
    """refunds: zero, more than was paid, or an unknown order is refused and nothing is written."""
    order_id = order_id or add_order(services, 250)
    before = services.payments.count()
    with pytest.raises(BusinessRuleError, match=message):
        services.payments.issue_refund(tool_call_id="call-1", order_id=order_id, amount=amount, reason="x")
    assert services.payments.count() == before


def test_an_email_is_queued_once_per_tool_call(services):
    """outbox: a replay returns the first e-mail; a bad address is refused before anything is queued."""
    first = services.outbox.send(tool_call_id="mail-1", to="a@example.com", subject="Hi", body="Hello")
    assert (
        services.outbox.send(tool_call_id="mail-1", to="a@example.com", subject="Hi", body="Hello") == first
    )
    with pytest.raises(BusinessRuleError, match="not an e-mail address"):
        services.outbox.send(tool_call_id="mail-2", to="nobody", subject="Hi", body="Hello")
    assert [e["email_id"] for e in services.outbox.sent_to("a@example.com")] == [first["email_id"]]


def test_a_booking_is_made_once_and_cancelled_once(services):
    """bookings: a replayed booking or cancellation returns the first; another cancellation is refused."""
    booked = services.bookings.book(
        tool_call_id="book-1", flight_id="TP541", seat_class="economy", insurance=False
    )
    again = services.bookings.book(
        tool_call_id="book-1", flight_id="TP541", seat_class="economy", insurance=False
    )
    assert again == booked
    cancelled = services.bookings.cancel(tool_call_id="cancel-1", booking_id=booked["booking_id"])
    assert services.bookings.cancel(tool_call_id="cancel-1", booking_id=booked["booking_id"]) == cancelled
    with pytest.raises(BusinessRuleError, match="already cancelled"):
        services.bookings.cancel(tool_call_id="cancel-2", booking_id=booked["booking_id"])
    assert [b["status"] for b in services.bookings.for_flight("TP541")] == ["cancelled"]


def test_sql_reads_cannot_write_and_writes_run_once(services):
    """sql: a SELECT returns rows and a write hidden in a read is refused; a write replays as a no-op."""
    rows = services.sql.run("SELECT order_id FROM orders WHERE order_id = 'A1024'", tool_call_id="q-1")[
        "rows"
    ]
    assert rows == [{"order_id": "A1024"}]
    insert = (
        "INSERT INTO orders (order_id, customer_name, customer_email, item, amount, status) "
        "VALUES ('S0001', 'Sam', 'sam@example.com', 'Mug', 9, 'delivered')"
    )
    assert services.sql.run(insert, tool_call_id="w-1")["rowcount"] == 1
    assert services.sql.run(insert, tool_call_id="w-1")["rowcount"] == 1
    assert services.sql.writes() == 1
    assert services.orders.get("S0001")["item"] == "Mug"
