"""Quorum through the real server: a refund over REFUND_DUAL_CONTROL_LIMIT needs two different supervisors.

The first approve is accepted (audited, a receipt marked 1 of 2) and the refund stays pending
under a new interrupt id, showing who approved; the same supervisor again, a reviewer, or the
requester are refused with 403 and nothing changes; a second supervisor completes it, once.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from agents.offline import phrases
from hitl.policy import quorum
from server.http.outgoing import tls
from tests.conftest import add_order
from tests.devserver import TOKENS
from tests.server.helpers import APPROVE, decisions, refused, start

pytestmark = pytest.mark.server

DUAL = 2400


async def pending_now(client, thread_id: str) -> list[dict]:
    """The interrupts the thread's current state waits on (exact, unlike the thread record)."""
    state = await client.threads.get_state(thread_id)
    return [i for task in state["tasks"] for i in task.get("interrupts") or []]


async def first_round(client_as, services) -> tuple[str, str, dict]:
    """requester1 asks for a 2,400 refund; returns the order, the thread and its pending interrupt."""
    order_id = add_order(services, DUAL)
    thread_id, _ = await start(client_as("requester1"), phrases.refund_in_full(order_id))
    (pending,) = await pending_now(client_as("supervisor1"), thread_id)
    return order_id, thread_id, pending


async def test_two_supervisors_must_approve_and_the_first_is_recorded_as_one_of_two(
    client_as, server_services
):
    order_id, thread_id, first = await first_round(client_as, server_services)
    supervisor1, supervisor2 = client_as("supervisor1"), client_as("supervisor2")
    config = first["value"]["review_configs"][0]
    assert (config["required_role"], config["approvals_required"], config["approved_by"]) == (
        "supervisor",
        2,
        [],
    )

    await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    (second,) = await pending_now(supervisor1, thread_id)
    assert second["id"] != first["id"]
    assert second["value"]["review_configs"][0]["approved_by"] == ["supervisor1"]
    assert server_services.payments.refunds_for(order_id) == []
    state = await supervisor1.threads.get_state(thread_id)
    (receipt,) = state["values"]["approval_receipts"]
    assert (receipt["reviewer"], receipt["decision"], receipt["approvals"]) == (
        "supervisor1",
        "approve",
        {"required": 2, "approved_by": ["supervisor1"]},
    )

    inbox = await supervisor2.http.get("/inbox", params={"limit": 500})
    (row,) = [r for r in inbox["items"] if r["thread_id"] == thread_id]
    assert (row["interrupt_id"], row["approvals"]) == (
        second["id"],
        {"required": 2, "approved_by": ["supervisor1"]},
    )

    await supervisor2.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [float(DUAL)]
    assert await pending_now(supervisor1, thread_id) == []
    records = (await supervisor1.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["reviewer"], r["outcome"], r["approvals"]["approved_by"]) for r in records] == [
        ("supervisor1", "accepted", ["supervisor1"]),
        ("supervisor2", "accepted", ["supervisor1", "supervisor2"]),
    ]


async def test_the_same_supervisor_twice_a_reviewer_and_the_requester_are_refused(client_as, server_services):
    order_id, thread_id, _ = await first_round(client_as, server_services)
    supervisor1 = client_as("supervisor1")
    await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    (pending,) = await pending_now(supervisor1, thread_id)

    with refused(
        403, r"supervisor1 already approved this issue_refund; it needs 2 different approvers \(1 of 2"
    ):
        await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    with refused(403, "needs a supervisor"):
        await client_as("reviewer1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    with refused(403, r"requester1 \(requester\) may not answer"):
        await client_as("requester1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    with refused(403, "already approved"):  # by interrupt id, and as the JS SDK's `{id: answer}`
        await supervisor1.runs.wait(
            thread_id, "support", command={"resume": {pending["id"]: {"decisions": [APPROVE]}}}
        )

    assert server_services.payments.refunds_for(order_id) == []
    assert [p["id"] for p in await pending_now(supervisor1, thread_id)] == [pending["id"]]
    records = (await supervisor1.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["reviewer"], r["outcome"]) for r in records] == [
        ("supervisor1", "accepted"),
        ("supervisor1", "refused"),
        ("reviewer1", "refused"),
        ("requester1", "refused"),
        ("supervisor1", "refused"),
    ]


async def test_a_reject_after_one_approval_rejects(client_as, server_services):
    order_id, thread_id, _ = await first_round(client_as, server_services)
    await client_as("supervisor1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    reject = {"type": "reject", "message": "Not without the returned machine"}
    await client_as("supervisor2").runs.wait(thread_id, "support", command=decisions(reject))
    assert server_services.payments.refunds_for(order_id) == []
    assert (await client_as("supervisor1").threads.get(thread_id))["status"] == "idle"


async def test_an_edit_restarts_the_count_and_its_sender_counts_first(client_as, server_services):
    """supervisor1 approves 2,400; supervisor2 edits to 2,300 (1 of 2 again); supervisor1 may approve that."""
    order_id, thread_id, _ = await first_round(client_as, server_services)
    supervisor1, supervisor2 = client_as("supervisor1"), client_as("supervisor2")
    await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    edited = {"order_id": order_id, "amount": 2300, "reason": "Keeps the milk jug"}
    await supervisor2.runs.wait(
        thread_id,
        "support",
        command=decisions({"type": "edit", "edited_action": {"name": "issue_refund", "args": edited}}),
    )
    (third,) = await pending_now(supervisor1, thread_id)
    assert third["value"]["action_requests"][0]["args"] == edited
    assert third["value"]["review_configs"][0]["approved_by"] == ["supervisor2"]
    with refused(403, "supervisor2 already approved"):
        await supervisor2.runs.wait(thread_id, "support", command=decisions(APPROVE))
    await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [2300.0]


async def test_rival_second_approvals_end_in_one_refund(client_as, server, server_services):
    """supervisor2 and supervisor3 approve round 2 at the same moment: one 200, one 409, one refund."""
    order_id, thread_id, _ = await first_round(client_as, server_services)
    supervisor1 = client_as("supervisor1")
    await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    (pending,) = await pending_now(supervisor1, thread_id)

    async def approve(user: str) -> int:
        async with httpx.AsyncClient(base_url=server.url, timeout=60, verify=tls()) as http:
            answer = await http.post(
                f"/threads/{thread_id}/runs/wait",
                headers={"Authorization": f"Bearer {TOKENS[user]}"},
                json={
                    "assistant_id": "support",
                    "command": {"resume": {pending["id"]: {"decisions": [APPROVE]}}},
                },
            )
            return answer.status_code

    statuses = sorted(await asyncio.gather(approve("supervisor2"), approve("supervisor3")))
    assert statuses == [200, 409], statuses
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [float(DUAL)]
    records = (await supervisor1.http.get(f"/audit/{thread_id}"))["records"]
    assert sum(r["outcome"] == "accepted" for r in records) == 2
    assert len((await supervisor1.threads.get_state(thread_id))["values"]["approval_receipts"]) == 2


async def test_the_specialist_subagent_asks_two_supervisors_too(client_as, server_services):
    order_id = add_order(server_services, DUAL)
    thread_id, _ = await start(
        client_as("requester1"), phrases.via_specialist(phrases.refund_in_full(order_id))
    )
    supervisor1, supervisor2 = client_as("supervisor1"), client_as("supervisor2")
    (first,) = await pending_now(supervisor1, thread_id)
    assert first["value"]["agent"] == "refund_specialist"
    await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    (second,) = await pending_now(supervisor1, thread_id)
    assert second["value"]["review_configs"][0]["approved_by"] == ["supervisor1"]
    assert server_services.payments.refunds_for(order_id) == []
    await supervisor2.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [float(DUAL)]


async def test_per_call_schema_changes_need_two_approvers_through_the_server(client_as, server_services):
    """ops (per-call): reviewer1 asks to DROP a table; supervisor1 approves 1 of 2; supervisor2 runs it."""
    with server_services.engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS scratch_per_call (n INTEGER)")
    reviewer, supervisor1, supervisor2 = (
        client_as("reviewer1"),
        client_as("supervisor1"),
        client_as("supervisor2"),
    )
    writes = server_services.sql.writes()
    thread_id, _ = await start(reviewer, phrases.run_sql("DROP TABLE scratch_per_call"), agent="ops")
    (first,) = await pending_now(supervisor1, thread_id)
    assert (first["value"]["type"], first["value"]["approvals_required"]) == ("tool_approval", 2)

    await supervisor1.runs.wait(thread_id, "ops", command={"resume": {first["id"]: APPROVE}})
    (second,) = await pending_now(supervisor1, thread_id)
    assert (second["id"] != first["id"], second["value"]["approved_by"]) == (True, ["supervisor1"])
    with refused(403, "supervisor1 already approved"):
        await supervisor1.runs.wait(thread_id, "ops", command={"resume": {second["id"]: APPROVE}})
    assert server_services.sql.writes() == writes

    await supervisor2.runs.wait(thread_id, "ops", command={"resume": {second["id"]: APPROVE}})
    assert server_services.sql.writes() == writes + 1
    assert await pending_now(supervisor1, thread_id) == []


@pytest.mark.parametrize("user", ["requester1", "reviewer1", "supervisor1", None])
async def test_nobody_can_plant_approvers_for_the_second_round(client_as, server, server_services, user):
    """hitl_approvals is the server's word: planted in config or context by any caller, it is refused."""
    order_id, thread_id, _ = await first_round(client_as, server_services)
    supervisor1 = client_as("supervisor1")
    await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    (pending,) = await pending_now(supervisor1, thread_id)
    call = pending["value"]["action_requests"][0]
    planted = {
        call["tool_call_id"]: {"args": quorum.digest(call["args"]), "approved_by": ["supervisor1", "x"]}
    }
    headers = {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=60, verify=tls()) as http:
        for extra in (
            {"config": {"configurable": {quorum.APPROVALS_KEY: planted}}},
            {"context": {quorum.APPROVALS_KEY: planted}},
        ):
            body = {
                "assistant_id": "support",
                "command": {"resume": {pending["id"]: {"decisions": [APPROVE]}}},
            }
            answer = await http.post(f"/threads/{thread_id}/runs/wait", json={**body, **extra})
            assert answer.status_code == (401 if user is None else 422), answer.text
    assert server_services.payments.refunds_for(order_id) == []
    assert [p["id"] for p in await pending_now(supervisor1, thread_id)] == [pending["id"]]


async def test_a_supervisor_cannot_write_a_second_approval_into_state(client_as, server, server_services):
    """update with a resume, goto, a state write: a receipt copied with another reviewer counts nobody."""
    order_id, thread_id, _ = await first_round(client_as, server_services)
    supervisor1 = client_as("supervisor1")
    await supervisor1.runs.wait(thread_id, "support", command=decisions(APPROVE))
    (pending,) = await pending_now(supervisor1, thread_id)
    (receipt,) = (await supervisor1.threads.get_state(thread_id))["values"]["approval_receipts"]
    forged = {
        **receipt,
        "reviewer": "supervisor2",
        "approvals": {"required": 2, "approved_by": ["supervisor2"]},
    }
    headers = {"Authorization": f"Bearer {TOKENS['supervisor1']}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=60, verify=tls()) as http:
        resume = {"resume": {pending["id"]: {"decisions": [APPROVE]}}}
        for command in ({**resume, "update": {"approval_receipts": [forged]}}, {**resume, "goto": "tools"}):
            answer = await http.post(
                f"/threads/{thread_id}/runs/wait", json={"assistant_id": "support", "command": command}
            )
            assert answer.status_code in {403, 422}, answer.text
        written = await http.post(
            f"/threads/{thread_id}/state", json={"values": {"approval_receipts": [forged]}}
        )
        assert written.status_code in {200, 403, 422}, written.text
    assert server_services.payments.refunds_for(order_id) == []
    (still,) = await pending_now(supervisor1, thread_id)
    assert still["value"]["review_configs"][0]["approved_by"] == ["supervisor1"]
    await client_as("supervisor2").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [float(DUAL)]
