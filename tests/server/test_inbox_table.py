"""The inbox served from the layer's own table, through the real server: its filters, counts and rows.

Each row is a row of `hitl_inbox` in the layer's store (`HITL_DATABASE_URL`), read here as the
operator would; a decision takes it out in its own transaction, before its run has finished.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import create_engine, text

from agents.offline import phrases
from tests.conftest import add_order
from tests.server.helpers import APPROVE, decisions, start

pytestmark = pytest.mark.server
DUAL = 2400


async def inbox(client, **params):
    return await client.http.get("/inbox", params={k: v for k, v in params.items() if v is not None})


def ids(page) -> set[str]:
    return {item["thread_id"] for item in page["items"]}


@pytest.fixture(scope="module")
def layer(server):
    engine = create_engine(server.layer_url)
    yield engine
    engine.dispose()


def rows_of(layer, thread_id: str) -> list[dict]:
    with layer.connect() as conn:
        found = conn.execute(
            text("SELECT interrupt_id, decided_by, owner, tool FROM hitl_inbox WHERE thread_id = :t"),
            {"t": thread_id},
        )
        return [dict(zip(found.keys(), r, strict=True)) for r in found]


async def listed(layer, thread_id: str, seconds: float = 60) -> list[dict]:
    """The thread's rows, once the server wrote them (it reads a marked thread every 0.25 s).

    How soon is the benchmarks' to measure; a loaded machine may take seconds, so this waits for
    the rows, not for a time.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := rows_of(layer, thread_id):
            return found
        await asyncio.sleep(0.05)
    return rows_of(layer, thread_id)


async def test_a_pause_is_a_row_of_the_table_and_a_decision_takes_it_out_in_its_own_transaction(
    requester, reviewer, server_order, server_services, layer
):
    """row: written for the pause (group, owner, tool); gone once the approve is accepted; one refund."""
    order_id = server_order(300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    [row] = await listed(layer, thread_id)
    assert (row["decided_by"], row["owner"], row["tool"]) == ("reviewer", "requester1", "issue_refund")
    run = await reviewer.runs.create(thread_id, "support", command=decisions(APPROVE))
    assert rows_of(layer, thread_id) == []  # out with the decision, whether or not its run has finished
    await reviewer.runs.join(thread_id, run["run_id"])
    assert rows_of(layer, thread_id) == []
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [300.0]


async def test_counts_per_group_and_each_row_once_for_a_person_in_two_groups(
    requester, reviewer, supervisor, server_order
):
    """counts: a supervisor (groups reviewer and supervisor) sees each row once; counts add up to total."""
    small, _ = await start(requester, phrases.refund_in_full(server_order(310)))
    big, _ = await start(requester, phrases.refund_in_full(server_order(910)))
    page = await inbox(supervisor, limit=500)
    listed = [(item["thread_id"], item["interrupt_id"], item["action_index"]) for item in page["items"]]
    assert len(listed) == len(set(listed))
    assert {small, big} <= ids(page)
    assert set(page["counts"]) <= {"reviewer", "supervisor"}
    assert sum(page["counts"].values()) == page["total"]
    assert {item["group"] for item in page["items"] if item["thread_id"] == small} == {"reviewer"}
    assert {item["group"] for item in page["items"] if item["thread_id"] == big} == {"supervisor"}
    only_supervisors = await inbox(supervisor, group="supervisor", limit=500)
    assert big in ids(only_supervisors)
    assert small not in ids(only_supervisors)
    assert only_supervisors["total"] == page["counts"]["supervisor"]
    as_reviewer = await inbox(reviewer, limit=500)
    assert set(as_reviewer["counts"]) == {"reviewer"}
    assert big not in ids(as_reviewer)
    assert (await inbox(reviewer, group="supervisor"))["items"] == []  # not a group of theirs: nothing


async def test_waiting_for_me_leaves_out_a_quorum_i_approved(client_as, server_order):
    """mine: after supervisor1's approval of a 2,400 refund, it waits for supervisor2, not for supervisor1."""
    thread_id, _ = await start(client_as("requester1"), phrases.refund_in_full(server_order(DUAL)))
    supervisor1, supervisor2 = client_as("supervisor1"), client_as("supervisor2")
    assert thread_id in ids(await inbox(supervisor1, mine="true", limit=500))
    await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert thread_id in ids(await inbox(supervisor1, limit=500))
    assert thread_id not in ids(await inbox(supervisor1, mine="true", limit=500))
    assert thread_id in ids(await inbox(supervisor2, mine="true", limit=500))
    [row] = [i for i in (await inbox(supervisor2, limit=500))["items"] if i["thread_id"] == thread_id]
    assert row["approvals"] == {"required": 2, "approved_by": ["supervisor1"]}


async def test_asked_by_and_deadline_before_narrow_within_what_the_caller_may_decide(
    client_as, supervisor, server_order, server_services
):
    """asked_by and deadline_before: filters inside the caller's scope, never a way around it."""
    mine, _ = await start(client_as("requester1"), phrases.refund_in_full(server_order(320)))
    their_order = add_order(server_services, 330, owner="requester2")
    theirs, _ = await start(client_as("requester2"), phrases.refund_in_full(their_order))
    by_two = await inbox(supervisor, asked_by="requester2", limit=500)
    assert theirs in ids(by_two)
    assert mine not in ids(by_two)
    assert all(item["owner"] == "requester2" for item in by_two["items"])
    assert (await inbox(client_as("requester1"), asked_by="requester2", limit=500))["items"] == []
    soon = (datetime.now(UTC) + timedelta(days=365)).isoformat()
    past = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    assert {mine, theirs} <= ids(await inbox(supervisor, deadline_before=soon, limit=500))
    assert {mine, theirs}.isdisjoint(ids(await inbox(supervisor, deadline_before=past, limit=500)))


async def test_the_owner_sees_their_own_question_under_group_owner(requester, client_as):
    """group=owner: the caller's own questions; another requester's filter finds none of them."""
    question, _ = await start(requester, "Please refund 80 on my order, it arrived broken.")
    page = await inbox(requester, group="owner", limit=500)
    assert question in ids(page)
    assert page["counts"]["owner"] >= 1
    assert question not in ids(await inbox(client_as("requester2"), group="owner", limit=500))


async def test_the_new_parameters_without_a_token_are_401(server):
    async with httpx.AsyncClient(base_url=server.url) as anonymous:
        answer = await anonymous.get("/inbox", params={"group": "supervisor", "asked_by": "requester1"})
    assert answer.status_code == 401
