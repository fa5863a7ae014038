"""The `hitl` CLI end to end: a subprocess against the real server, as a reviewer would use it."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from agents.offline import phrases

pytestmark = pytest.mark.server

HITL = Path(sys.executable).parent / "hitl"


def hitl(server, token: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {"HITL_URL": server.url, "HITL_TOKEN": token, "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    done = subprocess.run(
        [str(HITL), *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def run_json(server, message: str) -> dict:
    return json.loads(hitl(server, "dev-requester1", "run", "support", message, "--json").stdout)


def test_run_then_approve_from_the_terminal(server, server_order, server_services):
    """run + inbox + approve: the refund waits, shows in the supervisor's inbox, then happens once."""
    order_id = server_order(640)
    started = run_json(server, phrases.refund_in_full(order_id))
    assert started["status"] == "interrupted"
    thread = started["thread_id"]

    listed = json.loads(hitl(server, "dev-supervisor1", "inbox", "--json", "--limit", "500").stdout)
    assert thread in {item["thread_id"] for item in listed["items"]}
    table = hitl(server, "dev-supervisor1", "inbox").stdout
    assert "issue_refund" in table

    done = hitl(server, "dev-supervisor1", "approve", thread)
    assert f"Refunded 640 on order {order_id}" in done.stdout
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [640.0]


def test_two_supervisors_approve_a_dual_control_refund_from_the_terminal(
    server, server_order, server_services
):
    """2,400: supervisor1 approves 1 of 2 (approve, show, inbox say so); again: 403; supervisor2 ends it."""
    order_id = server_order(2400)
    thread = run_json(server, phrases.refund_in_full(order_id))["thread_id"]

    first = hitl(server, "dev-supervisor1", "approve", thread).stdout
    assert "waits again: 1 approval pending; issue_refund 1 of 2 approvals: supervisor1" in first
    assert "[1 of 2 approvals: supervisor1]" in hitl(server, "dev-supervisor1", "show", thread).stdout
    assert (
        "1 of 2 approvals: supervisor1" in hitl(server, "dev-supervisor2", "inbox", "--limit", "500").stdout
    )
    again = hitl(server, "dev-supervisor1", "approve", thread, check=False)
    assert again.returncode != 0
    assert "supervisor1 already approved this issue_refund" in again.stderr
    assert server_services.payments.refunds_for(order_id) == []

    done = hitl(server, "dev-supervisor2", "approve", thread)
    assert f"Refunded 2400 on order {order_id}" in done.stdout
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [2400.0]


def test_the_inbox_by_group_by_what_waits_for_me_by_asker_and_by_deadline(server, server_order):
    """hitl inbox's filters: each narrows what the server lists; the counts stay the whole inbox's.

    supervisor1 approved the 2,400 refund (1 of 2): --group supervisor lists it, --mine does not;
    the 300 one is the reviewers'; --asked-by and --deadline-before keep exactly the rows they name.
    The table's first line counts each group; a deadline without its timezone is a one-line 400.
    """
    small = run_json(server, phrases.refund_in_full(server_order(300)))["thread_id"]
    dual = run_json(server, phrases.refund_in_full(server_order(2400)))["thread_id"]
    hitl(server, "dev-supervisor1", "approve", dual)

    def inbox(*args: str) -> tuple[dict, dict[str, dict]]:
        page = json.loads(hitl(server, "dev-supervisor1", "inbox", "--json", "--limit", "500", *args).stdout)
        return page, {item["thread_id"]: item for item in page["items"]}

    whole, everyone = inbox()
    assert (everyone[small]["group"], everyone[dual]["group"]) == ("reviewer", "supervisor")
    assert whole["counts"]["reviewer"] >= 1
    assert whole["counts"]["supervisor"] >= 1
    supervisors, rows = inbox("--group", "supervisor")
    assert dual in rows
    assert small not in rows
    assert {item["group"] for item in supervisors["items"]} == {"supervisor"}
    assert supervisors["total"] == whole["counts"]["supervisor"]
    assert supervisors["counts"] == whole["counts"]
    _, rows = inbox("--group", "supervisor", "--mine")
    assert dual not in rows
    _, rows = inbox("--mine")
    assert small in rows
    assert dual not in rows
    _, rows = inbox("--asked-by", "requester1")
    assert {small, dual} <= rows.keys()
    _, rows = inbox("--asked-by", "requester2")
    assert {small, dual}.isdisjoint(rows)
    due = datetime.fromisoformat(everyone[small]["deadline"])
    _, rows = inbox("--deadline-before", (due - timedelta(seconds=1)).isoformat())
    assert small not in rows, due
    _, rows = inbox("--deadline-before", (due + timedelta(seconds=1)).isoformat())
    assert small in rows

    table = hitl(server, "dev-supervisor1", "inbox", "--group", "supervisor", "--mine").stdout
    counted = ", ".join(f"{group} {count}" for group, count in whole["counts"].items())
    assert table.splitlines()[0] == f"waiting per group: {counted}", table
    assert dual not in table

    naive = hitl(server, "dev-supervisor1", "inbox", "--deadline-before", "2026-12-06T09:00:00", check=False)
    assert naive.returncode == 1
    assert naive.stderr.startswith("error: 400: "), naive.stderr
    assert "deadline_before" in naive.stderr
    assert len(naive.stderr.strip().splitlines()) == 1, naive.stderr


def test_edit_reject_and_respond(server, server_order, server_services):
    """edit with --args, reject with --rest, respond to ask_user: each does exactly what it says."""
    edited = server_order(400)
    thread = run_json(server, phrases.refund_in_full(edited))["thread_id"]
    hitl(server, "dev-reviewer1", "edit", thread, "issue_refund", "--args", '{"amount": 250}')
    assert [r["amount"] for r in server_services.payments.refunds_for(edited)] == [250.0]

    both = server_order(300)
    thread = run_json(server, phrases.refund_and_email(both))["thread_id"]
    hitl(server, "dev-reviewer1", "reject", thread, "send_email", "--message", "not yet", "--rest", "approve")
    assert [r["amount"] for r in server_services.payments.refunds_for(both)] == [300.0]
    assert server_services.outbox.sent_to(f"{both.lower()}@example.com") == []
    shown = json.loads(hitl(server, "dev-reviewer1", "show", thread, "--json").stdout)
    assert [(r["tool"], r["decision"]) for r in shown["receipts"]] == [
        ("issue_refund", "approve"),
        ("send_email", "reject"),
    ]

    asked = server_order(70)
    thread = run_json(server, "Please refund 70 on my order, it arrived broken.")["thread_id"]
    hitl(server, "dev-requester1", "respond", thread, "--message", f"It is {asked}")
    assert [r["amount"] for r in server_services.payments.refunds_for(asked)] == [70.0]


def test_mistakes_are_one_clear_line_and_change_nothing(server, server_order, server_services):
    """bad JSON, a partial batch, a wrong role, a wrong token: exit 1, one line, approval still pending."""
    order_id = server_order(300)
    thread = run_json(server, phrases.refund_and_email(order_id))["thread_id"]

    bad_json = hitl(
        server, "dev-reviewer1", "edit", thread, "issue_refund", "--args", "{amount: 1", check=False
    )
    partial = hitl(server, "dev-reviewer1", "approve", thread, "issue_refund", check=False)
    wrong_role = hitl(
        server, "dev-requester1", "approve", thread, "issue_refund", "--rest", "approve", check=False
    )
    wrong_token = hitl(server, "nope", "inbox", check=False)

    assert (bad_json.returncode, "not valid JSON" in bad_json.stderr) == (1, True)
    assert (partial.returncode, "decide these too" in partial.stderr) == (1, True), partial.stderr
    assert (wrong_role.returncode, "403" in wrong_role.stderr) == (1, True)
    assert (wrong_token.returncode, "401" in wrong_token.stderr) == (1, True)
    for failed in (bad_json, partial, wrong_role, wrong_token):
        assert len(failed.stderr.strip().splitlines()) == 1, failed.stderr
        assert "Traceback" not in failed.stderr
    assert server_services.payments.refunds_for(order_id) == []
    assert (
        json.loads(hitl(server, "dev-reviewer1", "show", thread, "--json").stdout)["status"] == "interrupted"
    )


def test_show_lists_a_forms_fields_and_answer_fills_it_in(server, server_services):
    """flight-booking form: `hitl show` prints each field's choices and default; `hitl answer` books once."""
    asked = json.loads(
        hitl(server, "dev-requester1", "run", "travel", phrases.FIND_AND_BOOK_CHEAPEST, "--json").stdout
    )
    thread, [form] = asked["thread_id"], asked["pending"]
    shown = hitl(server, "dev-requester1", "show", thread).stdout
    assert "to fill in: Book Berlin → Lisbon on 2026-12-18" in shown
    assert f"hitl answer {thread} {form['id']} --json" in shown
    fields = {line.split()[0]: " ".join(line.split()[1:]) for line in shown.splitlines()[-3:]}
    assert fields == {
        "decision": "one of approve, cancel, required Book the flight, or book nothing.",
        "seat_class": 'one of economy, premium, business, default "economy" Cabin to book.',
        "insurance": "yes/no, default false Add travel insurance.",
    }, shown
    answer = json.dumps({"decision": "approve", "seat_class": "business", "insurance": False})
    done = hitl(server, "dev-requester1", "answer", thread, form["id"], "--json", answer).stdout
    assert thread in done
    value = form["value"]
    booked = server_services.bookings.for_flight(value["context"]["flight_id"])
    mine = [b["seat_class"] for b in booked if b["tool_call_id"] == value["tool_call_id"]]
    assert mine == ["business"], done
