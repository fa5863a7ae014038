"""One outcome per approval across replicas: the same approval sent to A and B at the same moment.

Claims are rows in the approval layer's shared database (`server.coordination.claims`), taken in the
transaction that records the decision: one answer wins, the other gets 409, and only the winner's decision
is recorded, receipted and carried out; both records join one chain (`server.records.trail`).
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from server.ledger.storage import decisions
from tests.conftest import add_order
from tests.replicas.conftest import approve, audit, http, pause_refund, until

pytestmark = [pytest.mark.server, pytest.mark.long]
ROUNDS = 50


async def test_the_same_approval_on_both_replicas_has_one_outcome(replicas, business, layer):
    """50 rounds: 200 once and 409 once; 1 refund, 1 accepted record and 1 receipt; every trail verifies.

    Each decision is then settled as applied by the watcher's leader, none sent again (2 runs a thread).

    The loser's refusal joins the same chain as the winner's decision (after it, never beside it:
    issue 28 saw both records carry one `prev_hash` in 24 to 44 of 50 rounds).
    """
    a, b = replicas.urls
    async with (
        http(a, "requester1") as requester,
        http(a, "supervisor1") as on_a,
        http(b, "supervisor1") as on_b,
    ):
        orders = [add_order(business, 600 + i) for i in range(ROUNDS)]
        paused = []
        for start in range(0, ROUNDS, 10):
            paused += await asyncio.gather(*(pause_refund(requester, o) for o in orders[start : start + 10]))
        statuses = []
        for thread_id, interrupt_id in paused:
            body = approve(interrupt_id)
            answers = await asyncio.gather(
                on_a.post(f"/threads/{thread_id}/runs", json=body),
                on_b.post(f"/threads/{thread_id}/runs", json=body),
            )
            statuses.append(sorted(r.status_code for r in answers))
        assert statuses == [[200, 409]] * ROUNDS

        async def settled(thread_id: str) -> bool:
            return (await on_a.get(f"/threads/{thread_id}")).json()["status"] == "idle"

        for thread_id, _ in paused:
            await until(lambda t=thread_id: settled(t))
        for order_id, (thread_id, interrupt_id) in zip(orders, paused, strict=True):
            assert len(business.payments.refunds_for(order_id)) == 1, order_id
            accepted = [r for r in await audit(on_b, thread_id) if r["outcome"] == "accepted"]
            assert [(r["interrupt_id"], r["decision"]) for r in accepted] == [(interrupt_id, "approve")]
            state = (await on_b.get(f"/threads/{thread_id}/state")).json()
            receipts = [
                r for r in state["values"].get("approval_receipts", []) if r["interrupt_id"] == interrupt_id
            ]
            assert len(receipts) == 1, receipts
            report = (await on_a.get(f"/audit/{thread_id}/verification")).json()
            assert report["ok"], report
            trail = await audit(on_a, thread_id)
            assert [r["prev_hash"] for r in trail[1:]] == [r["hash"] for r in trail[:-1]], trail

        async def all_settled() -> bool:  # the watcher's leader settles each decision its run applied
            with layer.connect() as conn:
                states = conn.execute(select(decisions.c.state).where(decisions.c.thread_id.in_(threads)))
                return sorted(states.scalars()) == ["applied"] * ROUNDS

        threads = [thread_id for thread_id, _ in paused]
        await until(all_settled, seconds=60, every=1)
        for thread_id in threads:  # settled, not sent again: the pause and the approval, no third run
            assert len((await on_a.get(f"/threads/{thread_id}/runs")).json()) == 2, thread_id


async def test_rival_second_approvals_of_a_quorum_on_both_replicas_have_one_outcome(replicas, business):
    """10 dual-control refunds, rival second approvals on A and B: 200 and 409, one refund each.

    supervisor1 approves on A and B's inbox lists "1 of 2"; then supervisor2 on A and supervisor3
    on B approve round 2 at the same moment. Two accepted records each: supervisor1's and the winner's.
    """
    a, b = replicas.urls
    async with (
        http(a, "requester1") as requester,
        http(a, "supervisor1") as first,
        http(a, "supervisor2") as on_a,
        http(b, "supervisor3") as on_b,
    ):
        orders = [add_order(business, 2400 + i) for i in range(10)]
        paused = await asyncio.gather(*(pause_refund(requester, o) for o in orders))
        statuses = []
        for thread_id, interrupt_id in paused:
            (
                await first.post(f"/threads/{thread_id}/runs/wait", json=approve(interrupt_id))
            ).raise_for_status()
            row = await until(lambda t=thread_id: _quorum_row(on_b, t))
            assert row["approvals"] == {"required": 2, "approved_by": ["supervisor1"]}
            body = approve(row["interrupt_id"])
            answers = await asyncio.gather(
                on_a.post(f"/threads/{thread_id}/runs", json=body),
                on_b.post(f"/threads/{thread_id}/runs", json=body),
            )
            statuses.append(sorted(r.status_code for r in answers))
        assert statuses == [[200, 409]] * len(orders)
        for order_id, (thread_id, _) in zip(orders, paused, strict=True):
            await until(lambda t=thread_id: _settled(on_a, t))
            assert len(business.payments.refunds_for(order_id)) == 1, order_id
            accepted = [r for r in await audit(on_b, thread_id) if r["outcome"] == "accepted"]
            assert [r["reviewer"] for r in accepted] in (
                ["supervisor1", "supervisor2"],
                ["supervisor1", "supervisor3"],
            ), accepted


async def _quorum_row(client, thread_id: str) -> dict | None:
    """The inbox row of `thread_id` once it shows a quorum under way (one approval in)."""
    response = await client.get("/inbox", params={"limit": 500})
    rows = [r for r in response.json()["items"] if r["thread_id"] == thread_id and r.get("approvals")]
    return next((r for r in rows if r["approvals"]["approved_by"]), None)


async def test_two_messages_on_one_thread_through_both_replicas_never_run_at_once(replicas, business):
    """20 rounds, a message sent to A and B at once on an idle thread: never two runs in flight.

    Mostly one is 409 (`server.coordination.run_starts`). When the machine delays one request past the end
    of the other's run, both are taken, one after the other: the later run starts after the
    earlier one finished.
    """
    a, b = replicas.urls
    body = {"assistant_id": "support", "input": {"messages": [{"role": "user", "content": "Hello"}]}}
    refused = 0
    async with http(a, "requester1") as on_a, http(b, "requester1") as on_b:
        for _ in range(20):
            thread_id = (await on_a.post("/threads", json={})).raise_for_status().json()["thread_id"]
            answers = await asyncio.gather(
                on_a.post(f"/threads/{thread_id}/runs", json=body),
                on_b.post(f"/threads/{thread_id}/runs", json=body),
            )
            statuses = sorted(r.status_code for r in answers)
            assert statuses in ([200, 409], [200, 200]), statuses
            await until(lambda t=thread_id: _settled(on_a, t))
            listed = (await on_a.get(f"/threads/{thread_id}/runs")).json()
            runs = sorted(listed, key=lambda r: r["created_at"])
            assert len(runs) == statuses.count(200)
            if len(runs) == 2:  # both taken: one after the other, never together
                assert runs[1]["created_at"] >= runs[0]["updated_at"], runs
            refused += statuses.count(409)
    assert refused >= 10, f"only {refused} of 20 simultaneous second messages were refused"


async def _settled(client, thread_id: str) -> bool:
    runs = (await client.get(f"/threads/{thread_id}/runs")).json()
    return bool(runs) and all(r["status"] not in {"pending", "running"} for r in runs)


async def test_a_bad_edit_is_refused_before_it_is_saved_and_the_approval_stays_answerable(replicas, business):
    """langgraph-api 0.11.1 sends no response_schema: the derived contract still refuses a bad edit (422)."""
    a, b = replicas.urls
    async with http(a, "requester1") as requester, http(b, "supervisor1") as supervisor:
        order_id = add_order(business, 620)
        thread_id, interrupt_id = await pause_refund(requester, order_id)
        edit = {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"amount": "lots"}}}
        body = {"assistant_id": "support", "command": {"resume": {interrupt_id: {"decisions": [edit]}}}}
        refused = await supervisor.post(f"/threads/{thread_id}/runs", json=body)
        assert refused.status_code == 422, refused.text
        assert "amount" in refused.json()["detail"]
        thread = (await supervisor.get(f"/threads/{thread_id}")).json()
        assert thread["status"] == "interrupted"
        approved = await supervisor.post(f"/threads/{thread_id}/runs/wait", json=approve(interrupt_id))
        approved.raise_for_status()
    assert [r["amount"] for r in business.payments.refunds_for(order_id)] == [620.0]


async def test_a_mixed_turn_is_answered_on_both_replicas_at_once_each_part_by_its_party(replicas, business):
    """refund + question: the owner answers on A while the reviewer approves on B; one refund, one answer.

    Two runs on one thread cannot start together: the one refused with 409 is sent again until taken.
    """
    from agents.offline import phrases  # noqa: PLC0415

    a, b = replicas.urls
    async with http(a, "requester1") as requester, http(b, "reviewer1") as reviewer:
        order_id = add_order(business, 300)
        thread_id = (await requester.post("/threads", json={})).raise_for_status().json()["thread_id"]
        body = {
            "assistant_id": "support",
            "input": {"messages": [{"role": "user", "content": phrases.refund_and_ask(order_id)}]},
        }
        (await requester.post(f"/threads/{thread_id}/runs/wait", json=body)).raise_for_status()
        state = (await requester.get(f"/threads/{thread_id}/state")).raise_for_status().json()
        asked = {i["value"]["name"]: i["id"] for task in state["tasks"] for i in task["interrupts"]}
        assert sorted(asked) == ["ask_user", "issue_refund"]

        async def answer(client, interrupt_id: str, decision: dict) -> int:
            command = {"assistant_id": "support", "command": {"resume": {interrupt_id: decision}}}
            for _ in range(100):
                sent = await client.post(f"/threads/{thread_id}/runs/wait", json=command)
                if sent.status_code != 409 or "already answered" in sent.text:
                    return sent.status_code
                await asyncio.sleep(0.1)
            return 409

        told = await asyncio.gather(
            answer(requester, asked["ask_user"], {"type": "respond", "message": "Store credit is fine"}),
            answer(reviewer, asked["issue_refund"], {"type": "approve"}),
        )
        assert told == [200, 200]

        async def finished() -> bool:
            thread = (await requester.get(f"/threads/{thread_id}")).json()
            return thread["status"] == "idle"

        await until(finished, seconds=60, every=0.2)
        final = (await requester.get(f"/threads/{thread_id}/state")).json()["values"]["messages"][-1][
            "content"
        ]
        assert "You answered: Store credit is fine" in final
        records = [r for r in await audit(reviewer, thread_id) if r["outcome"] == "accepted"]
        assert sorted((r["tool"], r["reviewer"]) for r in records) == [
            ("ask_user", "requester1"),
            ("issue_refund", "reviewer1"),
        ]
    assert [r["amount"] for r in business.payments.refunds_for(order_id)] == [300.0]
