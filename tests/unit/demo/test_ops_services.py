"""The services behind ops and travel: what counts as a read, the workspace fence, once-per-call writes."""

from __future__ import annotations

import pytest

from services.database import DEMO_ORDERS
from services.errors import BusinessRuleError
from services.sql import is_read_only
from services.workspace import Workspace


@pytest.mark.parametrize(
    ("query", "read"),
    [
        ("SELECT * FROM orders", True),
        ("  select count(*) from orders;  ", True),
        ("SELECT 'a;b'", False),  # a semicolon inside: not worth parsing, a person looks
        ("DELETE FROM orders", False),
        ("SELECT 1; DELETE FROM orders", False),
        ("WITH x AS (DELETE FROM orders RETURNING *) SELECT * FROM x", False),
        ("SELECT * INTO backup FROM orders", False),
        ("SELECT 1 -- ; DROP TABLE orders", False),
        ("/* hi */ SELECT 1", False),
        ("PRAGMA query_only = OFF", False),
        ("", False),
    ],
)
def test_only_a_plain_select_counts_as_a_read(query, read):
    """is_read_only: one plain SELECT is a read; anything else or unclear waits for a person."""
    assert is_read_only(query) is read


def test_a_read_cannot_write_even_if_misjudged(services, monkeypatch):
    """Defence in depth: a statement run as a read goes through a read-only connection and changes nothing."""
    monkeypatch.setattr("services.sql.console.is_read_only", lambda _query: True)
    with pytest.raises(BusinessRuleError, match="refused"):
        services.sql.run("DELETE FROM orders", tool_call_id="c1")
    assert services.orders.get("A1024")["order_id"] == "A1024"
    assert services.sql.run("SELECT count(*) AS n FROM orders", tool_call_id="c2")["rows"] == [
        {"n": len(DEMO_ORDERS)}
    ]


def test_a_write_runs_once_per_tool_call(services):
    """idempotency: replaying the same tool call's INSERT returns the first result and adds no row."""
    insert = (
        "INSERT INTO orders (order_id, customer_name, customer_email, item, amount, status, delivered_on) "
        "VALUES ('Z1', 'Zed', 'z@example.com', 'Mug', 5.0, 'delivered', '2026-01-01')"
    )
    first = services.sql.run(insert, tool_call_id="c1")
    again = services.sql.run(insert, tool_call_id="c1")
    assert (first["rowcount"], again["rowcount"], services.sql.writes()) == (1, 1, 1)
    with pytest.raises(BusinessRuleError, match="UNIQUE"):
        services.sql.run(insert, tool_call_id="c2")


@pytest.mark.parametrize("path", ["../secret.txt", "~/secret.txt", "tmp/../../secret.txt", "C:/secret.txt"])
def test_paths_outside_the_workspace_are_refused(tmp_path, path):
    """fence: traversal, home and drive paths never resolve outside the root."""
    with pytest.raises(BusinessRuleError, match="outside the workspace"):
        Workspace(tmp_path / "ws").resolve(path)


def test_a_symlink_out_of_the_workspace_is_refused(tmp_path):
    """fence: a link inside the workspace that points outside it is refused."""
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("s")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(BusinessRuleError, match="outside the workspace"):
        Workspace(root).resolve("link.txt")


def test_a_deletion_is_done_once_per_tool_call(services, tmp_path):
    """idempotency: the replayed deletion returns the first one; another call on the gone file is refused."""
    workspace = Workspace(tmp_path / "ws")
    (workspace.root / "tmp").mkdir(parents=True)
    (workspace.root / "tmp" / "old.log").write_text("x")
    first = services.file_deletions.delete(workspace, "tmp/old.log", tool_call_id="c1")
    virtual = "/" + "tmp/old.log"  # a workspace path, not the host's /tmp
    assert services.file_deletions.delete(workspace, virtual, tool_call_id="c1") == first
    assert first["path"] == virtual
    with pytest.raises(BusinessRuleError, match="no file"):
        services.file_deletions.delete(workspace, "tmp/old.log", tool_call_id="c2")
    assert services.file_deletions.count() == 1


def test_read_data_names_what_exists(services):
    """records: an unknown table or column is refused with the ones that exist."""
    with pytest.raises(BusinessRuleError, match=r"Tables: .*orders"):
        services.records.read("customers")
    with pytest.raises(BusinessRuleError, match="Columns: order_id"):
        services.records.read("orders", [{"column": "created", "op": "<", "value": "2025"}])


def test_a_booking_is_written_once_and_cancelled_once(services):
    """bookings: replaying book or cancel returns the first row; a second cancellation is refused."""
    booking = services.bookings.book(
        tool_call_id="b1", flight_id="TP541", seat_class="premium", insurance=False
    )
    assert (
        services.bookings.book(tool_call_id="b1", flight_id="TP541", seat_class="economy", insurance=True)
        == booking
    )
    assert (
        services.bookings.cancel(tool_call_id="x1", booking_id=booking["booking_id"])["status"] == "cancelled"
    )
    assert (
        services.bookings.cancel(tool_call_id="x1", booking_id=booking["booking_id"])["cancelled_by"] == "x1"
    )
    with pytest.raises(BusinessRuleError, match="already cancelled"):
        services.bookings.cancel(tool_call_id="x2", booking_id=booking["booking_id"])
    assert services.bookings.count() == 1
