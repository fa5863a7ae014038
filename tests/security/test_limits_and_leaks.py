"""Limits and leaks: sizes, parameters, public endpoints, who may run `ops`, whose data the tools show.

The medium and low findings of issue 15, through the real server: a 20 MB message is 413
naming the limit, a bad inbox cursor 400, a foreign thread's delete says nothing about
its approvals, the API's own pages need a token outside dev mode, and requesters see only
their own orders and bookings.
"""

from __future__ import annotations

import base64
import json
import re
import uuid

import httpx
import pytest

from agents.offline import phrases
from tests.security.outcomes import add_owned_order, human, refusal_of, refused_with, workspace
from tests.server.helpers import only_pending, start

pytestmark = pytest.mark.server

MB = 1024 * 1024


@pytest.mark.parametrize("where", ["thread", "stateless"])
async def test_a_20_mb_message_is_413_naming_the_limit(requester, http_as, where):
    """a 20 MB human message: 413 whose detail names the limit; the thread stores no message."""
    thread_id = (await requester.threads.create())["thread_id"]
    path = f"/threads/{thread_id}/runs/wait" if where == "thread" else "/runs/wait"
    body = {"assistant_id": "support", "input": {"messages": [human("x" * (20 * MB))]}}
    answer = await http_as("requester1").post(path, json=body)
    assert answer.status_code == 413, answer.text[:300]
    assert "limit" in answer.text.lower(), answer.text[:300]
    assert any(ch.isdigit() for ch in answer.text), answer.text[:300]
    state = await requester.threads.get_state(thread_id)
    assert not (state["values"] or {}).get("messages")


def cursor(raw: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(raw).encode()).decode()


BAD_CURSORS = {
    "garbage": "garbage",
    "not-base64": "%%%~~~",
    "object": cursor({"a": 1}),
    "huge-index": base64.urlsafe_b64encode(b'["2026", "t", "i", 1e999]').decode(),
    "nested": cursor([[1], {"x": 2}, None, [3]]),
    "long": "A" * 10_000,
}


@pytest.mark.parametrize("name", sorted(BAD_CURSORS))
async def test_a_bad_inbox_cursor_is_400(http_as, name):
    """GET /inbox?cursor=<not one the server made>: 400 with a message, never 500."""
    answer = await http_as("reviewer1").get("/inbox", params={"cursor": BAD_CURSORS[name]})
    assert answer.status_code == 400, answer.text[:300]
    assert answer.json().get("detail"), answer.text[:300]


@pytest.mark.parametrize("param", [{"limit": "ten"}, {"limit": "0"}, {"limit": "100000"}, {"limit": "1e3"}])
async def test_bad_inbox_parameters_are_400(http_as, param):
    """GET /inbox with a bad limit: 400, never 500."""
    answer = await http_as("reviewer1").get("/inbox", params=param)
    assert answer.status_code == 400, answer.text[:300]


async def test_deleting_another_users_thread_says_nothing_about_its_approvals(client_as, server_order):
    """requester2 deletes requester1's threads: one answer with or without a pending approval; both stay."""
    requester, other = client_as("requester1"), client_as("requester2")
    waiting, _ = await start(requester, phrases.refund_in_full(server_order(899)))
    idle = (await requester.threads.create())["thread_id"]
    await requester.runs.wait(idle, "support", input={"messages": [human("Hello")]})
    answers = []
    for thread_id in (waiting, idle):
        with pytest.raises(httpx.HTTPStatusError) as caught:
            await other.threads.delete(thread_id)
        response = caught.value.response
        answers.append((response.status_code, response.text.replace(thread_id, "<id>")))
    assert answers[0] == answers[1], answers
    assert answers[0][0] in {403, 404}, answers
    assert (await requester.threads.get(waiting))["status"] == "interrupted"
    assert (await requester.threads.get(idle))["thread_id"] == idle


@pytest.mark.parametrize("path", ["/metrics", "/docs", "/openapi.json", "/internal/truncate"])
async def test_the_apis_own_pages_need_a_token(http_as, path):
    """no token: the API's own pages answer 401 or 404, in dev mode too (the session's server).

    Outside dev mode, /app-config carrying no secret: tests/server/test_edges_dev_mode.py. /info is
    public, as langgraph-api's is, and tells no secret: tests/server/test_auth.py.
    """
    answer = await http_as(None).get(path)
    assert answer.status_code in {401, 404}, f"{path} → {answer.status_code} {answer.text[:200]}"


@pytest.mark.parametrize("where", ["thread", "stateless"])
@pytest.mark.parametrize("user", ["requester1", "requester2"])
async def test_requesters_may_not_run_the_ops_agent(client_as, server, ledger, user, where):
    """ops is for staff: a requester's run (SELECT or a delete) is 403 and the file stays."""
    client = client_as(user)
    name = f"tmp/ops-{uuid.uuid4().hex[:8]}.log"
    (workspace(server) / name).parent.mkdir(parents=True, exist_ok=True)
    (workspace(server) / name).write_text("keep me\n")
    thread_id = (await client.threads.create())["thread_id"] if where == "thread" else None
    for text in (phrases.run_sql("SELECT order_id FROM orders"), phrases.delete_files(name)):
        with refused_with({403}):
            await client.runs.wait(thread_id, "ops", input={"messages": [human(text)]})
    assert (workspace(server) / name).read_text() == "keep me\n"


async def test_a_requester_cannot_read_another_requesters_order(requester, server_services):
    """get_order on requester2's order, asked by requester1: the result says not found, nothing leaks."""
    order_id = add_owned_order(server_services, 120, "requester2")
    email = f"{order_id.lower()}@example.com"
    thread_id, thread = await start(requester, phrases.email_customer(order_id))
    state = await requester.threads.get_state(thread_id)
    results = [m for m in state["values"]["messages"] if m["type"] == "tool" and m.get("name") == "get_order"]
    assert results, state["values"]["messages"]
    for result in results:
        text = json.dumps(result["content"])
        assert email not in text, text
        assert "Test Customer" not in text, text
        assert re.search(r"\bno order\b|not found", text, re.IGNORECASE), text
    assert thread["status"] != "interrupted" or email not in json.dumps(only_pending(thread)["value"])


async def test_a_requester_cannot_cancel_another_travellers_booking(client_as, ledger, server_services):
    """requester1 asks to cancel requester2's booking: even after a reviewer's approve, it stays confirmed."""
    other, requester, reviewer = client_as("requester2"), client_as("requester1"), client_as("reviewer1")
    thread_id, thread = await start(other, phrases.FIND_AND_BOOK_CHEAPEST, agent="travel")
    form = only_pending(thread)
    await other.runs.wait(thread_id, "travel", command={"resume": {form["id"]: {"decision": "approve"}}})
    [booked] = server_services.records.read(
        "bookings", [{"column": "tool_call_id", "op": "=", "value": form["value"]["tool_call_id"]}]
    )
    booking_id = booked["booking_id"]
    thread_id, thread = await start(requester, phrases.cancel_booking(booking_id), agent="travel")
    if thread["status"] == "interrupted":  # the cancel paused: even a reviewer's approve must not cancel it
        approve = {"resume": {"decisions": [{"type": "approve"}]}}
        refusal = await refusal_of(reviewer.runs.wait(thread_id, "travel", command=approve))
        assert refusal is None or refusal.status_code in {403, 409, 422}, refusal.text
    assert ledger.booking_status(booking_id) == "confirmed"
