"""Who decides is server data: metadata patches cannot change the decider, the graph or the owner.

Class 1 of issue 15. Every test asserts the outcome in the business database (no refund)
and that the approval still waits for the person the policy names.
"""

from __future__ import annotations

import pytest
from sqlalchemy import select

from agents.offline import phrases
from server.ledger.storage import thread_graphs
from tests.security.outcomes import REFUSED, human, refusal_of, refused_with
from tests.server.helpers import APPROVE, decisions, only_pending, start

pytestmark = pytest.mark.server

RESERVED = {
    "escalations": {"0" * 32: {"required_role": "owner"}},
    "graph_id": "ops",
    "assistant_id": "ops",
    "owner": "requester2",
}
"""Metadata keys the server owns, each with a forged value."""


async def escalate(client, thread_id: str, interrupt_id: str, role: str) -> None:
    """PATCH the thread's metadata so its pending refund reads as escalated to `role`; a refusal is fine."""
    record = {
        "required_role": role,
        "escalated_at": "2026-01-01T00:00:00+00:00",
        "deadline": "2099-01-01T00:00:00+00:00",
    }
    refusal = await refusal_of(
        client.threads.update(thread_id, metadata={"escalations": {interrupt_id: record}})
    )
    assert refusal is None or refusal.status_code in REFUSED | {404}, refusal.text


@pytest.mark.parametrize(
    ("patcher", "role", "approver"),
    [
        ("requester1", "owner", "requester1"),
        ("requester1", "reviewer", "reviewer1"),
        ("reviewer1", "reviewer", "reviewer1"),
    ],
)
async def test_patched_escalations_do_not_change_who_approves_899(
    client_as, server_order, ledger, patcher, role, approver
):
    """escalations via PATCH: the 899 refund still needs a supervisor (403 to others), nothing refunded."""
    requester = client_as("requester1")
    order_id = server_order(899)
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id))
    interrupt_id = only_pending(thread)["id"]
    await escalate(client_as(patcher), thread_id, interrupt_id, role)

    with refused_with({403}):
        await client_as(approver).runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert ledger.refunds_of(order_id) == []
    after = await requester.threads.get(thread_id)
    assert (after["status"], only_pending(after)["id"]) == ("interrupted", interrupt_id)

    await client_as("supervisor1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert ledger.refunds_of(order_id) == [899.0]


@pytest.mark.parametrize("key", sorted(RESERVED))
@pytest.mark.parametrize("user", ["requester1", "reviewer1"])
async def test_reserved_metadata_keys_are_refused_on_patch(client_as, server_order, key, user):
    """PATCH of a reserved key (escalations, graph_id, assistant_id, owner): 403/422, metadata unchanged."""
    requester = client_as("requester1")
    thread_id, _ = await start(requester, phrases.refund_in_full(server_order(899)))
    before = (await requester.threads.get(thread_id))["metadata"]
    with refused_with(REFUSED):
        await client_as(user).threads.update(thread_id, metadata={key: RESERVED[key]})
    assert (await requester.threads.get(thread_id))["metadata"].get(key) == before.get(key)


@pytest.mark.parametrize("key", sorted(RESERVED))
async def test_reserved_metadata_keys_are_refused_on_create(requester, key):
    """threads.create with a reserved metadata key: 403/422, or (assistant_id) dropped by the server.

    langgraph-api itself strips `assistant_id`, `thread_id` and `run_id` from client metadata.
    """
    if key != "assistant_id":
        with refused_with(REFUSED):
            await requester.threads.create(metadata={key: RESERVED[key]})
        return
    thread = await requester.threads.create(metadata={key: RESERVED[key]})
    assert (await requester.threads.get(thread["thread_id"]))["metadata"].get(key) != RESERVED[key]


async def test_anonymous_cannot_patch_metadata(requester, server_order, http_as):
    """no token: PATCH /threads/{id} is 401 and the metadata stays as it was."""
    thread_id, _ = await start(requester, phrases.refund_in_full(server_order(899)))
    before = (await requester.threads.get(thread_id))["metadata"]
    answer = await http_as(None).patch(f"/threads/{thread_id}", json={"metadata": {"escalations": {}}})
    assert answer.status_code == 401, answer.text
    assert (await requester.threads.get(thread_id))["metadata"] == before


@pytest.mark.parametrize(
    "malformed",
    ["garbage", ["a", 1], {"x": "y"}, {"0" * 32: {"required_role": 5, "deadline": "soon"}}, {"0" * 32: None}],
    ids=["string", "list", "record-not-dict", "bad-fields", "null"],
)
async def test_malformed_escalations_never_break_the_inbox(client_as, server_order, http_as, malformed):
    """a malformed escalations value (refused or not): GET /inbox still answers 200 to staff."""
    requester = client_as("requester1")
    thread_id, thread = await start(requester, phrases.refund_in_full(server_order(300)))
    if isinstance(malformed, dict) and "0" * 32 in malformed:
        malformed = {only_pending(thread)["id"]: malformed["0" * 32]}
    refusal = await refusal_of(requester.threads.update(thread_id, metadata={"escalations": malformed}))
    assert refusal is None or refusal.status_code in REFUSED, refusal.text
    for user in ("reviewer1", "supervisor1"):
        answer = await http_as(user).get("/inbox")
        assert answer.status_code == 200, answer.text
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"


def recorded_graph(ledger, thread_id: str) -> list[str]:
    """The graphs the layer's database records for `thread_id` (one, written at its first run)."""
    row = thread_graphs.c
    with ledger.layer.connect() as conn:
        return list(conn.scalars(select(row.graph_id).where(row.thread_id == thread_id)))


async def test_a_paused_thread_runs_only_with_its_recorded_graph(client_as, server_order, ledger, http_as):
    """The graph is server data too: a run of another agent on a paused support thread is refused.

    supervisor1 (who may run ops) answering or writing with ops: 422 naming the support agent;
    reviewer1 and requester1 with ops: 403/422; anonymous: 401. The record stays `support`, nothing
    is refunded, and the approval with support then refunds once.
    """
    requester = client_as("requester1")
    order_id = server_order(300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    assert recorded_graph(ledger, thread_id) == ["support"]
    with refused_with({422}, "belongs to the support agent"):
        await client_as("supervisor1").runs.wait(thread_id, "ops", command=decisions(APPROVE))
    with refused_with({422}, "belongs to the support agent"):
        await client_as("supervisor1").runs.wait(thread_id, "ops", input={"messages": [human("List files")]})
    for user in ("reviewer1", "requester1"):
        with refused_with(REFUSED):
            await client_as(user).runs.wait(thread_id, "ops", command=decisions(APPROVE))
    anonymous = await http_as(None).post(
        f"/threads/{thread_id}/runs/wait", json={"assistant_id": "ops", "command": decisions(APPROVE)}
    )
    assert anonymous.status_code == 401, anonymous.text
    assert (recorded_graph(ledger, thread_id), ledger.refunds_of(order_id)) == (["support"], [])

    await client_as("supervisor1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert (recorded_graph(ledger, thread_id), ledger.refunds_of(order_id)) == (["support"], [300.0])
