"""Every pending approval has someone who may answer it, through the real server (issue 47).

A turn that mixes deciders (a reviewer's refund beside the owner's question, a supervisor's refund
beside a reviewer's e-mail) is two interrupts: each party's inbox lists its own part, with the
other shown as waiting for whom; each answers its part, in either order; the other party's part
is refused to them (403); the refund is made once. A served agent whose policy names a decider
nobody can be does not start; a question whose owner was removed is escalated by the watcher.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from agents.offline import phrases
from tests.devserver import start_dev_server, stop, user_clients
from tests.server.helpers import refused, start

pytestmark = pytest.mark.server


async def parts(client, thread_id: str) -> dict[str, dict]:
    """The thread's pending interrupts by tool name (its current state, exact)."""
    state = await client.threads.get_state(thread_id)
    return {i["value"]["name"]: i for task in state["tasks"] for i in task.get("interrupts") or []}


async def inbox_of(client, thread_id: str) -> list[dict]:
    return [
        r
        for r in (await client.http.get("/inbox", params={"limit": 500}))["items"]
        if r["thread_id"] == thread_id
    ]


@pytest.mark.parametrize("owner_first", [True, False])
async def test_a_refund_beside_a_question_is_answered_by_each_party_in_either_order(
    client_as, server_order, server_services, owner_first
):
    """refund + ask_user: reviewer1 sees the refund (the question waits for its owner); requester1 it."""
    requester, reviewer = client_as("requester1"), client_as("reviewer1")
    order_id = server_order(300)
    thread_id, thread = await start(requester, phrases.refund_and_ask(order_id))
    assert thread["status"] == "interrupted"
    asked = await parts(reviewer, thread_id)
    assert {n: i["value"]["required_role"] for n, i in asked.items()} == {
        "issue_refund": "reviewer",
        "ask_user": "owner",
    }

    (row,) = await inbox_of(reviewer, thread_id)
    assert (row["tool"], row["also_waiting"]) == (
        "issue_refund",
        [{"interrupt_id": asked["ask_user"]["id"], "tool": "ask_user", "required_role": "owner"}],
    )
    (mine,) = await inbox_of(requester, thread_id)
    assert (mine["tool"], [w["tool"] for w in mine["also_waiting"]]) == ("ask_user", ["issue_refund"])

    respond = {"type": "respond", "message": "Store credit is fine"}
    with refused(403, "needs the thread's owner"):
        await reviewer.runs.wait(thread_id, "support", command={"resume": {asked["ask_user"]["id"]: respond}})
    with refused(403, "needs a reviewer"):
        await requester.runs.wait(
            thread_id, "support", command={"resume": {asked["issue_refund"]["id"]: {"type": "approve"}}}
        )
    answers = [
        (requester, asked["ask_user"]["id"], respond),
        (reviewer, asked["issue_refund"]["id"], {"type": "approve"}),
    ]
    for client, interrupt_id, answer in answers if owner_first else answers[::-1]:
        await client.runs.wait(thread_id, "support", command={"resume": {interrupt_id: answer}})
    assert (await requester.threads.get(thread_id))["status"] == "idle"
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [300.0]
    final = (await requester.threads.get_state(thread_id))["values"]["messages"][-1]["content"]
    assert "You answered: Store credit is fine" in final
    records = (await reviewer.http.get(f"/audit/{thread_id}"))["records"]
    accepted = [r for r in records if r["outcome"] == "accepted"]
    assert [r["refusal"] for r in records if r["outcome"] == "refused"] != []  # the wrong party's tries
    assert sorted((r["tool"], r["decision"], r["reviewer"]) for r in accepted) == [
        ("ask_user", "respond", "requester1"),
        ("issue_refund", "approve", "reviewer1"),
    ]


async def test_a_supervisors_refund_beside_a_reviewers_email_is_two_parts(
    client_as, server_order, server_services
):
    """refund 600 + e-mail: the reviewer answers the e-mail, a supervisor the refund; one of each."""
    requester, reviewer, supervisor = (
        client_as("requester1"),
        client_as("reviewer1"),
        client_as("supervisor1"),
    )
    order_id = server_order(600)
    thread_id, _ = await start(requester, phrases.refund_and_email(order_id))
    asked = await parts(reviewer, thread_id)
    assert {n: i["value"]["required_role"] for n, i in asked.items()} == {
        "issue_refund": "supervisor",
        "send_email": "reviewer",
    }
    assert [r["tool"] for r in await inbox_of(reviewer, thread_id)] == ["send_email"]
    await reviewer.runs.wait(
        thread_id, "support", command={"resume": {asked["send_email"]["id"]: {"type": "approve"}}}
    )
    await supervisor.runs.wait(
        thread_id, "support", command={"resume": {asked["issue_refund"]["id"]: {"type": "approve"}}}
    )
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [600.0]
    assert len(server_services.outbox.sent_to(f"{order_id.lower()}@example.com")) == 1


def test_a_policy_nobody_can_decide_stops_the_start(tmp_path):
    """HITL_USERS without a supervisor: refunds over 500 could never be decided; the start fails so."""
    users = "requester1:requester:dev-requester1,reviewer1:reviewer:dev-reviewer1"
    with pytest.raises(pytest.fail.Exception) as failed:
        start_dev_server(tmp_path, {"HITL_USERS": users})
    said = str(failed.value)
    assert "Some approvals could never be answered" in said
    assert "support: issue_refund may be decided (by its arguments) by a supervisor" in said


async def test_a_question_whose_owner_was_removed_is_escalated(tmp_path):
    """owner gone: restarted without requester2, the watcher escalates its question; a supervisor answers."""
    from tests.devserver import TEST_USERS, dev_users  # noqa: PLC0415  (only this test's own servers)

    fast = {"HITL_WATCH_INTERVAL": "0.3"}
    first = start_dev_server(tmp_path, fast)
    try:
        async with user_clients(first.url) as client_as:
            thread_id, _ = await start(client_as("requester2"), phrases.REFUND_WITHOUT_ORDER)
    finally:
        stop(first.process)
    without = ",".join(e for e in f"{dev_users()},{TEST_USERS}".split(",") if not e.startswith("requester2:"))
    second = start_dev_server(tmp_path, {**fast, "HITL_USERS": without})
    try:
        async with user_clients(second.url) as client_as:
            supervisor = client_as("supervisor1")
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                rows = await inbox_of(supervisor, thread_id)
                if rows and rows[0]["escalated"]:
                    break
                await asyncio.sleep(0.3)
            (row,) = rows
            assert (row["tool"], row["required_role"], row["escalated"]) == ("ask_user", "supervisor", True)
            answer = {"decisions": [{"type": "respond", "message": "A3072"}]}  # a batch of one question
            await supervisor.runs.wait(
                thread_id, "support", command={"resume": {row["interrupt_id"]: answer}}
            )
            records = (await supervisor.http.get(f"/audit/{thread_id}"))["records"]
            assert [(r["decision"], r["reviewer"]) for r in records] == [
                ("escalated", "system"),
                ("respond", "supervisor1"),
            ]
    finally:
        stop(second.process)


async def test_the_cli_inbox_says_what_else_waits_for_whom(server, client_as, server_order):
    """hitl inbox (a reviewer): the refund's row says the question waits for the thread's owner."""
    from tests.server.test_cli import hitl  # noqa: PLC0415  (the CLI's own runner)

    thread_id, _ = await start(client_as("requester1"), phrases.refund_and_ask(server_order(300)))
    listed = hitl(server, "dev-reviewer1", "inbox", "--limit", "500")
    line = " ".join(listed.stdout.split())
    assert "also waiting" in line, listed.stdout
    assert "ask_user (owner)" in line, listed.stdout
    assert thread_id[:8] in listed.stdout
