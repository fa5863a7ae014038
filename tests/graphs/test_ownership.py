"""Business data has owners: a requester's tools act only on their own orders and bookings.

The caller comes from the run's config (`langgraph_auth_user_id`, `langgraph_auth_permissions`),
as the server puts it there; each test gives it explicitly and checks the database rows. A run
that names nobody works on nothing (issue 54): inside the server always, in-process unless it
says so (`hitl.gate.caller.in_process`).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda
from langgraph.types import Command

from agents.offline import phrases
from agents.support_policy import describe_refund
from agents.travel_policy import describe_cancellation
from hitl.gate.caller import IN_PROCESS_KEY, in_process
from services.database import DEMO_ORDERS
from services.workspace import Workspace
from tests.conftest import add_order
from tests.graphs.layer.threads import SERVER_RUN
from tools.ops import build_ops_tools
from tools.support import build_support_tools
from tools.travel import build_travel_tools


def as_user(identity: str, *roles: str) -> dict[str, Any]:
    """A run config as the server writes it for `identity` with `roles`."""
    return {
        "configurable": {
            "thread_id": str(uuid.uuid4()),
            "langgraph_auth_user_id": identity,
            "langgraph_auth_permissions": list(roles),
        }
    }


REQUESTER1 = ("requester1", "requester")
REQUESTER2 = ("requester2", "requester")
REVIEWER = ("reviewer1", "reviewer")


def call(tools, name: str, args: dict[str, Any], user: tuple[str, ...] | None, config=None) -> Any:
    """Invoke tool `name` as a model's call would, as `user` (None: in-process, said so), or with `config`."""
    (tool,) = [t for t in tools if t.name == name]
    tool_call = {"type": "tool_call", "id": f"call-{uuid.uuid4().hex[:8]}", "name": name, "args": args}
    return tool.invoke(tool_call, config=config or (as_user(*user) if user else in_process()))


def book(services, owner: str | None) -> str:
    booking = services.bookings.book(
        tool_call_id=f"seed-{uuid.uuid4()}",
        flight_id="TP541",
        seat_class="economy",
        insurance=False,
        owner=owner,
    )
    return booking["booking_id"]


def test_a_traveller_cannot_cancel_another_travellers_booking(services):
    """cancel_booking by requester1 of requester2's booking: a tool error saying why; the row is unchanged."""
    tools = build_travel_tools(lambda: services)
    theirs = book(services, "requester2")

    result = call(tools, "cancel_booking", {"booking_id": theirs}, REQUESTER1)

    assert result.status == "error"
    assert f"Booking {theirs} is not a booking of requester1" in result.content
    row = services.bookings.get(theirs)
    assert (row["status"], row["cancelled_by"], row["owner"]) == ("confirmed", None, "requester2")


def test_a_traveller_cancels_their_own_and_staff_cancel_any(services):
    """cancel_booking: the owner's call cancels their booking; a reviewer's cancels anyone's."""
    tools = build_travel_tools(lambda: services)
    mine, theirs = book(services, "requester1"), book(services, "requester2")

    assert call(tools, "cancel_booking", {"booking_id": mine}, REQUESTER1).status == "success"
    assert call(tools, "cancel_booking", {"booking_id": theirs}, REVIEWER).status == "success"

    assert [services.bookings.get(b)["status"] for b in (mine, theirs)] == ["cancelled", "cancelled"]


def test_in_process_said_so_the_tools_are_unrestricted(services):
    """in-process, said so (`in_process()`, no caller): cancel_booking acts on any booking, owned or not."""
    tools = build_travel_tools(lambda: services)
    theirs, nobodys = book(services, "requester2"), book(services, None)
    for booking_id in (theirs, nobodys):
        assert call(tools, "cancel_booking", {"booking_id": booking_id}, None).status == "success"
        assert services.bookings.get(booking_id)["status"] == "cancelled"


NOBODY_NAMED = {
    "in-process, not said so": {"configurable": {"thread_id": "t-1"}},
    "server run, nobody named": {"configurable": {"thread_id": "t-1", **SERVER_RUN}},
    "server run, only a caller": {
        "configurable": {
            "thread_id": "t-1",
            **SERVER_RUN,
            "langgraph_auth_user_id": "reviewer1",
            "langgraph_auth_permissions": ["reviewer"],
        }
    },
    "server run, in-process said": {"configurable": {"thread_id": "t-1", **SERVER_RUN, IN_PROCESS_KEY: True}},
}
"""Runs that name nobody whose records they work on: inside the server the caller and the in-process
key do not count, only the server's `hitl_acting_for`."""


@pytest.mark.parametrize("config", NOBODY_NAMED.values(), ids=list(NOBODY_NAMED))
def test_a_run_that_names_nobody_reads_and_writes_no_record(services, config):
    """Tools on owned records (orders, refunds, bookings, read_data, SQL): errors saying why; no change."""
    order_id = add_order(services, 45.0, owner="requester2")
    booking_id = book(services, "requester2")
    support, travel = build_support_tools(lambda: services), build_travel_tools(lambda: services)
    ops = build_ops_tools(lambda: services, Workspace(Path("/nonexistent-workspace")))
    results = [
        call(support, "get_order", {"order_id": order_id}, None, config),
        call(support, "issue_refund", {"order_id": order_id, "amount": 20, "reason": "x"}, None, config),
        call(travel, "cancel_booking", {"booking_id": booking_id}, None, config),
        call(ops, "read_data", {"table": "orders"}, None, config),
        call(ops, "execute_sql", {"query": "SELECT * FROM orders"}, None, config),
    ]
    for result in results:
        assert result.status == "error", result
        said = result.content
        assert "names nobody whose records" in said or "does not name whose records" in said, said
        assert "Ines" not in said
        assert "requester2" not in said
    assert services.payments.refunds_for(order_id) == []
    assert services.bookings.get(booking_id)["status"] == "confirmed"


def test_a_server_run_acts_for_the_owner_it_names_not_its_caller(services):
    """server run: a reviewer's resume on requester1's thread reads requester1's order, not requester2's."""
    mine = add_order(services, 45.0, owner="requester1")
    theirs = add_order(services, 45.0, owner="requester2")
    config = {
        "configurable": {
            "thread_id": "t-1",
            **SERVER_RUN,
            "langgraph_auth_user_id": "reviewer1",
            "langgraph_auth_permissions": ["reviewer"],
            "hitl_acting_for": {"identity": "requester1", "roles": ["requester"]},
        }
    }
    tools = build_support_tools(lambda: services)
    assert call(tools, "get_order", {"order_id": mine}, None, config).status == "success"
    refused = call(tools, "get_order", {"order_id": theirs}, None, config)
    assert refused.status == "error"
    assert f"There is no order {theirs} for requester1" in refused.content


def test_a_booking_made_in_a_run_belongs_to_its_caller_and_is_priced_by_class(travel_agent, services):
    """book_flight as requester2: the form's answer books business + insurance for requester2 at 234.5."""
    chat = travel_agent()
    config = as_user(*REQUESTER2)
    (form,) = chat.graph.invoke(
        {"messages": [{"role": "user", "content": phrases.FIND_AND_BOOK_CHEAPEST}]}, config, version="v2"
    ).interrupts
    chat.graph.invoke(
        Command(resume={form.id: {"decision": "approve", "seat_class": "business", "insurance": True}}),
        config,
        version="v2",
    )

    [booking] = services.bookings.for_flight("FR8364")
    assert (booking["owner"], booking["seat_class"], booking["insurance"]) == ("requester2", "business", True)
    assert booking["price"] == 234.5  # FR8364's 89 x 2.5, + 12 insurance


def test_a_requester_sees_and_refunds_only_their_own_orders(services):
    """get_order / issue_refund as requester2 on requester1's order: tool errors and no refund row."""
    tools = build_support_tools(lambda: services)
    order_id = add_order(services, 50.0)  # requester1's

    looked_up = call(tools, "get_order", {"order_id": order_id}, REQUESTER2)
    refunded = call(tools, "issue_refund", {"order_id": order_id, "amount": 20, "reason": "x"}, REQUESTER2)

    assert (looked_up.status, refunded.status) == ("error", "error")
    assert looked_up.content == refunded.content == f"There is no order {order_id} for requester2."
    assert services.payments.refunds_for(order_id) == []

    assert (
        json.loads(call(tools, "get_order", {"order_id": order_id}, REQUESTER1).content)["owner"]
        == "requester1"
    )
    assert (
        json.loads(call(tools, "get_order", {"order_id": order_id}, REVIEWER).content)["order_id"] == order_id
    )
    assert call(
        tools, "issue_refund", {"order_id": order_id, "amount": 20, "reason": "x"}, REQUESTER1
    ).status == ("success")
    assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [20.0]


def test_the_demo_orders_belong_to_the_dev_requesters(services):
    """seed: the demo orders are split between requester1 and requester2."""
    owners = {o: services.orders.get(o)["owner"] for o in ("A1024", "A2048", "A3072", "A0412", "A0733")}
    assert owners == {
        "A1024": "requester1",
        "A2048": "requester1",
        "A3072": "requester2",
        "A0412": "requester1",
        "A0733": "requester2",
    }


def test_read_data_shows_a_requester_only_their_rows(services, tmp_path):
    """read_data as requester2: only their orders; staff-only tables refused; a reviewer sees every order."""
    tools = build_ops_tools(lambda: services, Workspace(tmp_path / "ws"))
    mine = json.loads(call(tools, "read_data", {"table": "orders"}, REQUESTER2).content)
    assert {r["order_id"] for r in mine["rows"]} == {"A3072", "A0733"}

    refunds = call(tools, "read_data", {"table": "refunds"}, REQUESTER2)
    assert refunds.status == "error"
    assert "is for staff" in refunds.content

    every = json.loads(call(tools, "read_data", {"table": "orders"}, REVIEWER).content)
    assert every["count"] == len(DEMO_ORDERS)


def test_ad_hoc_sql_reads_are_for_staff(services, tmp_path):
    """execute_sql SELECT as a requester: refused (no owner filter can follow raw SQL); a reviewer's runs."""
    tools = build_ops_tools(lambda: services, Workspace(tmp_path / "ws"))
    query = {"query": "SELECT order_id FROM orders"}
    refused = call(tools, "execute_sql", query, REQUESTER1)
    assert refused.status == "error"
    assert "SQL reads are for staff" in refused.content
    assert len(json.loads(call(tools, "execute_sql", query, REVIEWER).content)["rows"]) == len(DEMO_ORDERS)


def describe_as(describer, args: dict[str, Any], user: tuple[str, ...] | None) -> str:
    """The review text `describer` writes inside a run of `user` (None: no caller)."""
    run = RunnableLambda(lambda _: describer("tool", args))
    return run.invoke(None, config=as_user(*user) if user else in_process())


def test_refund_review_text_names_the_customer(services):
    """describe_refund: the customer's identity and name; another customer's order is flagged, never named."""
    describe = describe_refund(lambda: services)
    args = {"order_id": "A3072", "amount": 300, "reason": "Broken"}
    full = (
        "Refund 300 to order A3072 (customer: requester2, Ines Duarte; paid 300, delivered 2026-11-20): "
        "Broken"
    )
    assert describe_as(describe, args, REVIEWER) == full
    assert describe_as(describe, args, REQUESTER2) == full
    assert describe_as(describe, args, None) == full
    assert (
        describe_as(describe, args, REQUESTER1)
        == "Refund 300 to order A3072 (not an order of requester1): Broken"
    )
    unknown = {"order_id": "Z99999999", "amount": 300, "reason": "Broken"}
    assert describe_as(describe, unknown, REQUESTER1) == "Refund 300 to order Z99999999: Broken"


def test_cancellation_review_text_names_the_traveller_and_flight(services):
    """describe_cancellation: traveller, flight, class, price; another traveller's booking is flagged only."""
    booking = services.bookings.book(
        tool_call_id="seed", flight_id="FR8364", seat_class="premium", insurance=True, owner="requester2"
    )
    describe = describe_cancellation(lambda: services)
    args = {"booking_id": booking["booking_id"]}
    full = (
        f"Cancel booking {booking['booking_id']} of traveller requester2 (FR8364 Berlin → Lisbon on "
        "2026-12-18, premium, insured, paid 154.4, confirmed)"
    )
    assert describe_as(describe, args, REVIEWER) == full
    assert describe_as(describe, args, REQUESTER2) == full
    assert describe_as(describe, args, REQUESTER1) == (
        f"Cancel booking {booking['booking_id']} (not a booking of requester1)"
    )
    assert describe_as(describe, {"booking_id": "BK-NONE"}, REQUESTER1) == "Cancel booking BK-NONE"
    assert describe_cancellation(None)("cancel_booking", args) == f"Cancel booking {booking['booking_id']}"


@pytest.mark.parametrize("user", [REQUESTER1, None])
def test_a_nul_byte_in_a_path_is_a_tool_error(services, tmp_path, user):
    """delete_file with a NUL byte in the path: a tool error saying so, not an exception; nothing deleted."""
    workspace = Workspace(tmp_path / "ws")
    (workspace.root / "tmp").mkdir(parents=True)
    (workspace.root / "tmp" / "old.log").write_text("x")
    tools = build_ops_tools(lambda: services, workspace)

    result = call(tools, "delete_file", {"path": "tmp/old.log\x00.txt"}, user)

    assert (result.status, result.content) == ("error", "path must not contain a NUL byte")
    assert (workspace.root / "tmp" / "old.log").exists()
    assert services.file_deletions.count() == 0
