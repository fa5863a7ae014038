"""Pause notices and approval deadlines, through a real server with deadlines of a few seconds.

A second `langgraph dev` (this module's own, via `start_dev_server`) runs with short
deadlines, a fast watcher and `HITL_NOTIFY_URL` pointing at a small HTTP receiver on
loopback. Waiting is bounded polling, never a timing assertion. Escalations are server
records (`server.records.threads`), never the thread's owner-writable metadata.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime

import httpx
import pytest

from agents.offline import phrases
from services.database import orders
from tests.conftest import add_order
from tests.devserver import TEST_USERS, dev_users, sdk_client, start_dev_server, stop, user_clients
from tests.notices import Receiver
from tests.server.helpers import APPROVE, decisions, refused, start
from tests.server.test_groups_server import TEAM_USERS, TEAMS, TOKENS

pytestmark = [pytest.mark.server, pytest.mark.long]

SHORT = {
    "REFUND_DEADLINE_SECONDS": "4",
    "ESCALATION_DEADLINE_SECONDS": "4",
    "EMAIL_DEADLINE_SECONDS": "3",
    "HITL_WATCH_INTERVAL": "0.3",
}


@pytest.fixture(scope="module")
def receiver():
    running = Receiver(failures=2)
    yield running
    running.http.shutdown()
    running.http.server_close()


@pytest.fixture(scope="module")
def short_server(tmp_path_factory, receiver):
    running = start_dev_server(
        tmp_path_factory.mktemp("deadlines"), {**SHORT, "HITL_NOTIFY_URL": receiver.url}
    )
    yield running
    stop(running.process)


@pytest.fixture(scope="module")
def teams_short_server(tmp_path_factory):
    """Short deadlines with refunds given to teams: finance decides, an overdue one goes to finance-leads."""
    env = {
        **SHORT,
        "ESCALATION_DEADLINE_SECONDS": "600",  # the escalated refund waits for its new team's answer
        **TEAMS,
        "HITL_USERS": f"{dev_users()},{TEST_USERS},{TEAM_USERS}",
    }
    running = start_dev_server(tmp_path_factory.mktemp("team-deadlines"), env)
    yield running
    stop(running.process)


@pytest.fixture
async def as_user(short_server):
    async with user_clients(short_server.url) as make:
        yield make


async def until(check, seconds: float = 60):
    """Poll `check` until it returns something truthy (bounded)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := await check():
            return result
        await asyncio.sleep(0.2)
    pytest.fail("condition not reached in time")


async def until_idle(client, thread_id: str) -> None:
    """Wait (bounded) until the thread has finished running."""

    async def idle():
        return (await client.threads.get(thread_id))["status"] == "idle"

    await until(idle)


async def test_a_pause_sends_a_notice_after_retries(as_user, short_server, receiver):
    """notice: the receiver fails twice, the third attempt delivers thread, agent, tool and links."""
    services = short_server.services
    order_id = add_order(services, 700)
    thread_id, _ = await start(as_user("requester1"), phrases.refund_in_full(order_id))

    async def noticed():
        return [
            n for n in receiver.notices if n["thread_id"] == thread_id and n["event"] == "approval_pending"
        ]

    [notice] = await until(noticed)
    assert (notice["agent"], notice["tool"]) == ("support", "issue_refund")
    assert notice["link"].endswith(f"/app/#/threads/{thread_id}")
    assert notice["inbox"].endswith("/inbox")
    assert receiver.attempts >= 3


async def test_an_unanswered_email_is_rejected_and_never_sent(as_user, short_server):
    """reject at deadline: the e-mail is not sent, the model says it expired, the audit names `system`."""
    requester = as_user("requester1")
    order_id = add_order(short_server.services, 40)
    thread_id, thread = await start(requester, phrases.email_customer(order_id))
    assert next(iter(thread["interrupts"].values()))[0]["value"]["on_expiry"] == "reject"

    async def finished():
        state = await requester.threads.get(thread_id)
        return state if state["status"] == "idle" else None

    await until(finished)
    final = (await requester.threads.get_state(thread_id))["values"]["messages"][-1]["content"]
    assert "Expired" in final
    assert short_server.services.outbox.sent_to(f"{order_id.lower()}@example.com") == []
    records = (await requester.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["reviewer"], r["decision"]) for r in records] == [("system", "reject")]


async def test_an_escalated_refund_needs_a_supervisor(as_user, short_server):
    """escalate: after the deadline a reviewer's approve is refused; a supervisor's is taken, once."""
    requester, reviewer, supervisor = as_user("requester1"), as_user("reviewer1"), as_user("supervisor1")
    order_id = add_order(short_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))

    async def escalated():
        rows = (await supervisor.http.get("/inbox", params={"limit": 500}))["items"]
        return [r for r in rows if r["thread_id"] == thread_id and r["escalated"]]

    await until(escalated)
    assert "escalations" not in ((await requester.threads.get(thread_id))["metadata"] or {})
    reviewer_rows = (await reviewer.http.get("/inbox", params={"limit": 500}))["items"]
    supervisor_rows = (await supervisor.http.get("/inbox", params={"limit": 500}))["items"]
    assert thread_id not in {r["thread_id"] for r in reviewer_rows}
    [row] = [r for r in supervisor_rows if r["thread_id"] == thread_id]
    assert (row["escalated"], row["required_role"]) == (True, "supervisor")
    with refused(403, "needs a supervisor"):
        await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in short_server.services.payments.refunds_for(order_id)] == [300.0]
    records = (await requester.http.get(f"/audit/{thread_id}"))["records"]
    assert [r["decision"] for r in records] == ["escalated", "refused", "approve"]


async def test_an_escalation_that_also_expires_is_rejected(as_user, short_server):
    """escalation deadline: nobody answers at all, so the refund is escalated, then rejected; no refund."""
    requester = as_user("requester1")
    order_id = add_order(short_server.services, 310)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))

    await until_idle(requester, thread_id)
    assert short_server.services.payments.refunds_for(order_id) == []
    records = (await requester.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["reviewer"], r["decision"]) for r in records] == [
        ("system", "escalated"),
        ("system", "reject"),
    ]


async def test_a_quorum_left_at_one_of_two_expires_on_the_round_that_is_pending(as_user, short_server):
    """dual control: supervisor1 approves 2,400, nobody else: round 2 escalates, then is rejected."""
    requester, supervisor = as_user("requester1"), as_user("supervisor1")
    order_id = add_order(short_server.services, 2400)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))

    await until_idle(requester, thread_id)
    assert short_server.services.payments.refunds_for(order_id) == []
    records = (await requester.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["reviewer"], r["decision"]) for r in records] == [
        ("supervisor1", "approve"),
        ("system", "escalated"),
        ("system", "reject"),
    ]
    assert records[0]["approvals"] == {"required": 2, "approved_by": ["supervisor1"]}


async def test_an_answer_racing_the_expiry_has_one_outcome(as_user, short_server):
    """race: a person answers as the e-mail expires; exactly one accepted decision, at most one e-mail."""
    requester, reviewer = as_user("requester1"), as_user("reviewer1")
    order_id = add_order(short_server.services, 50)
    thread_id, thread = await start(requester, phrases.email_customer(order_id))
    deadline = next(iter(thread["interrupts"].values()))[0]["value"]["deadline"]
    await asyncio.sleep(max(0.0, (datetime.fromisoformat(deadline) - datetime.now(UTC)).total_seconds()))
    with contextlib.suppress(httpx.HTTPStatusError):  # losing the race to the watcher is one outcome
        await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))

    await until_idle(requester, thread_id)
    records = [
        r for r in (await requester.http.get(f"/audit/{thread_id}"))["records"] if r["outcome"] == "accepted"
    ]
    assert len(records) == 1, records
    sent = short_server.services.outbox.sent_to(f"{order_id.lower()}@example.com")
    assert len(sent) == (1 if records[0]["decision"] == "approve" else 0)


async def test_a_deadline_that_passed_while_stopped_is_handled_at_start(tmp_path):
    """restart: the e-mail's deadline passes while the server is down; after start it is rejected."""
    workdir = tmp_path / "down"
    workdir.mkdir()
    first = start_dev_server(workdir, SHORT)
    try:
        async with sdk_client(url=first.url, headers={"Authorization": "Bearer dev-requester1"}) as requester:
            order_id = add_order(first.services, 45)
            thread_id, thread = await start(requester, phrases.email_customer(order_id))
    finally:
        stop(first.process)
    deadline = datetime.fromisoformat(next(iter(thread["interrupts"].values()))[0]["value"]["deadline"])
    await asyncio.sleep(
        max(0.0, (deadline - datetime.now(UTC)).total_seconds()) + 0.5
    )  # it passes while down
    second = start_dev_server(workdir, SHORT)
    try:
        async with sdk_client(
            url=second.url, headers={"Authorization": "Bearer dev-requester1"}
        ) as requester:
            await until_idle(requester, thread_id)
            records = (await requester.http.get(f"/audit/{thread_id}"))["records"]
            assert [(r["reviewer"], r["decision"]) for r in records][-1] == ("system", "reject")
        assert second.services.outbox.sent_to(f"{order_id.lower()}@example.com") == []
    finally:
        stop(second.process)


async def test_escalations_an_owner_writes_into_metadata_change_nothing(as_user, short_server):
    """owner PATCHes metadata.escalations (an owner decider, garbage) and graph_id: refused, none honoured.

    The requester still may not approve their own 899 refund, the inbox answers 200 with the
    policy's decider, and the watcher still escalates that refund and expires another thread
    whose metadata names another graph (resumed with the graph the server knows, not "ops").
    """
    requester, supervisor = as_user("requester1"), as_user("supervisor1")
    big_order, mail_order = add_order(short_server.services, 899), add_order(short_server.services, 30)
    big, thread = await start(requester, phrases.refund_in_full(big_order))
    interrupt_id = next(iter(thread["interrupts"].values()))[0]["id"]
    mail, _ = await start(requester, phrases.email_customer(mail_order))
    with refused(403, "the server owns these keys"):
        await requester.threads.update(
            big,
            metadata={
                "escalations": {interrupt_id: {"required_role": "owner"}, "x": 5, "y": [1, {"z": None}]},
            },
        )
    with refused(403, "the server owns these keys"):
        await requester.threads.update(mail, metadata={"escalations": "garbage", "graph_id": "ops"})
    with refused(403):
        await requester.runs.wait(big, "support", command=decisions(APPROVE))
    assert big not in {r["thread_id"] for r in (await requester.http.get("/inbox"))["items"]}
    rows = (await supervisor.http.get("/inbox", params={"limit": 500}))["items"]
    [row] = [r for r in rows if r["thread_id"] == big]
    assert (row["required_role"], row["escalated"]) == ("supervisor", False)

    async def mail_expired():
        return (await requester.threads.get(mail))["status"] == "idle"

    await until(mail_expired)
    records = (await requester.http.get(f"/audit/{mail}"))["records"]
    assert [(r["reviewer"], r["decision"]) for r in records][-1] == ("system", "reject")
    assert short_server.services.outbox.sent_to(f"{mail_order.lower()}@example.com") == []

    async def big_escalated():
        records = (await requester.http.get(f"/audit/{big}"))["records"]
        return [r for r in records if r["decision"] == "escalated"]

    await until(big_escalated)
    assert short_server.services.payments.refunds_for(big_order) == []


async def test_the_servers_records_are_closed_to_clients(as_user):
    """store: no client, a supervisor included, reads or writes the hitl_records namespace."""
    for user in ("requester1", "supervisor1"):
        client = as_user(user)
        with refused(403, "server's own"):
            await client.store.put_item(("hitl_records", "escalations", "t"), "i", {"required_role": "owner"})
        with refused(403, "server's own"):
            await client.store.search_items(("hitl_records",))


async def test_an_email_beside_a_question_is_rejected_at_its_deadline_and_the_question_stays(
    as_user, short_server
):
    """e-mail + ask_user: at the e-mail's deadline the watcher rejects it alone; the question stays.

    The owner then answers it; the turn ends once, and no e-mail is sent.
    """
    requester = as_user("requester1")
    order_id = add_order(short_server.services, 40)
    thread_id, _ = await start(requester, phrases.email_and_ask(order_id))

    async def only_the_question_left():
        state = await requester.threads.get_state(thread_id)
        waiting = [i["value"]["name"] for task in state["tasks"] for i in task.get("interrupts") or []]
        return waiting if waiting == ["ask_user"] else None

    await until(only_the_question_left)
    records = (await requester.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["tool"], r["decision"], r["reviewer"]) for r in records] == [
        ("send_email", "reject", "system")
    ]
    state = await requester.threads.get_state(thread_id)
    (question,) = [i for task in state["tasks"] for i in task.get("interrupts") or []]
    await requester.runs.wait(
        thread_id,
        "support",
        command={"resume": {question["id"]: {"type": "respond", "message": "Home, please"}}},
    )
    await until_idle(requester, thread_id)
    final = (await requester.threads.get_state(thread_id))["values"]["messages"][-1]["content"]
    assert "You answered: Home, please" in final
    assert short_server.services.outbox.sent_to(f"{order_id.lower()}@example.com") == []


def move_order(server, order_id: str, owner: str) -> None:
    """Give `order_id` to another customer, straight in the business database (as a back office would)."""
    with server.services.engine.begin() as conn:
        conn.execute(orders.update().where(orders.c.order_id == order_id).values(owner=owner))


async def test_an_expirys_run_works_on_the_owners_records_only(as_user, short_server):
    """the watcher's run (issue 54): it acts for requester1, so an order moved to requester2 is not refunded.

    The refund of 45 (under the auto-approve limit) waits beside the gated e-mail and runs in the run
    the e-mail's expiry starts; the order went to requester2 meanwhile: the refund is refused, no
    row; the run names requester1 as whom it works for; the trail holds the expiry alone.
    """
    requester = as_user("requester1")
    order_id = add_order(short_server.services, 45)
    thread_id, thread = await start(requester, phrases.refund_and_email(order_id))
    [pending] = [i for batch in thread["interrupts"].values() for i in batch]
    assert [a["name"] for a in pending["value"]["action_requests"]] == ["send_email"]
    move_order(short_server, order_id, "requester2")

    await until_idle(requester, thread_id)
    assert short_server.services.payments.refunds_for(order_id) == []
    assert short_server.services.outbox.sent_to(f"{order_id.lower()}@example.com") == []
    final = (await requester.threads.get_state(thread_id))["values"]["messages"][-1]["content"]
    assert f"I did not refund order {order_id}" in final, final
    records = (await requester.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["reviewer"], r["decision"], r["tool"]) for r in records] == [
        ("system", "reject", "send_email")
    ]
    [run, *_] = await requester.runs.list(thread_id)
    told = run["kwargs"]["config"]["configurable"]
    assert told["hitl_acting_for"] == {"identity": "requester1", "roles": ["requester"]}


async def test_a_refund_escalated_to_finance_leads_runs_once_on_their_approve(teams_short_server):
    """escalation to a team (issue 54, finding 6): the server and the gate read one decider.

    300 is finance's; past its deadline it escalates to finance-leads. finance1 (the old team) is
    refused (403, nothing written); lead2 (finance-leads only) approves and the refund runs once.
    The trail: escalated, refused, approve, and no `not_run`.
    """
    async with user_clients(teams_short_server.url) as make:
        opened = {
            name: sdk_client(url=teams_short_server.url, headers={"Authorization": f"Bearer {TOKENS[name]}"})
            for name in ("finance1", "lead2")
        }
        requester = make("requester1")
        order_id = add_order(teams_short_server.services, 300)
        thread_id, thread = await start(requester, phrases.refund_in_full(order_id))
        [pending] = [i for batch in thread["interrupts"].values() for i in batch]
        assert pending["value"]["review_configs"][0]["required_role"] == "finance"

        async def escalated():
            records = (await requester.http.get(f"/audit/{thread_id}"))["records"]
            return [r for r in records if r["decision"] == "escalated"]

        await until(escalated)
        with refused(403, "it needs someone in finance-leads"):
            await opened["finance1"].runs.wait(thread_id, "support", command=decisions(APPROVE))
        assert teams_short_server.services.payments.refunds_for(order_id) == []
        await opened["lead2"].runs.wait(thread_id, "support", command=decisions(APPROVE))
        await until_idle(requester, thread_id)
        assert [r["amount"] for r in teams_short_server.services.payments.refunds_for(order_id)] == [300.0]
        records = (await requester.http.get(f"/audit/{thread_id}"))["records"]
        assert [(r["decision"], r["reviewer"]) for r in records] == [
            ("escalated", "system"),
            ("refused", "finance1"),
            ("approve", "lead2"),
        ]
        for client in opened.values():
            await client.aclose()
