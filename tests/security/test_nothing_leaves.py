"""Nothing pending or decided leaves without a signed record (issue 46, finding 2).

On 52a94d2 `DELETE /threads/{id}` (by the owner or a supervisor), `POST /threads/prune` and an
assistant's `delete_threads=true` removed threads with pending approvals, unaudited, and a deleted
thread's trail was 404 to staff. Now a pending approval is withdrawn first (`POST
/threads/{id}/withdraw`: a signed `withdrawn` decision, the agent told), each deletion is in the
trail, which staff (and `hitl verify`) still read, and a served agent's own assistant stays.
Every role and an anonymous caller try each door; refunds are read from the business database.
"""

from __future__ import annotations

import uuid

import pytest

from agents.offline import phrases
from tests.security.outcomes import REFUSED_OR_BUSY, human
from tests.server.helpers import start
from tests.server.test_cli import hitl

pytestmark = pytest.mark.server


async def pending_refund(client_as, server_order, amount: float = 899) -> tuple[str, str]:
    """requester1's refund waiting for a person: its order and thread."""
    order_id = server_order(amount)
    thread_id, thread = await start(client_as("requester1"), phrases.refund_in_full(order_id))
    assert thread["status"] == "interrupted"
    return order_id, thread_id


async def finished(client, thread_id: str) -> None:
    """Wait for the thread's latest run (a withdrawal's) to end."""
    (run,) = await client.runs.list(thread_id, limit=1)
    await client.runs.join(thread_id, run["run_id"])


async def test_a_pending_approval_is_not_deleted_by_anyone(client_as, http_as, server_order, ledger):
    """DELETE: owner and supervisor 409 naming the call; reviewer, other requester 404; anonymous 401."""
    order_id, thread_id = await pending_refund(client_as, server_order)
    expected = {"requester1": 409, "supervisor1": 409, "reviewer1": 404, "requester2": 404, None: 401}
    for user, status in expected.items():
        answer = await http_as(user).delete(f"/threads/{thread_id}")
        assert answer.status_code == status, (user, answer.text)
        if status == 409:
            assert "issue_refund" in answer.text
            assert f"/threads/{thread_id}/withdraw" in answer.text
    assert (await client_as("requester1").threads.get(thread_id))["status"] == "interrupted"
    assert ledger.refunds_of(order_id) == []
    trail = await client_as("supervisor1").http.get(f"/audit/{thread_id}")
    assert [r["decision"] for r in trail["records"]] == []


async def test_prune_and_an_assistants_delete_threads_spare_a_pending_approval(
    client_as, http_as, server_order
):
    """prune [pending, idle]: 409, both stay; delete_threads of a supervisor's assistant: 409; system: 409."""
    _, waiting = await pending_refund(client_as, server_order)
    requester = client_as("requester1")
    idle = (await requester.threads.create())["thread_id"]
    await requester.runs.wait(idle, "support", input={"messages": [human("Hello")]})
    for user in ("requester1", "supervisor1"):
        pruned = await http_as(user).post("/threads/prune", json={"thread_ids": [waiting, idle]})
        assert pruned.status_code == 409, (user, pruned.text)
    assert {(await requester.threads.get(t))["thread_id"] for t in (waiting, idle)} == {waiting, idle}

    supervisor = http_as("supervisor1")
    made = await supervisor.post(
        "/assistants", json={"graph_id": "support", "name": f"a-{uuid.uuid4().hex[:6]}"}
    )
    assistant = made.json()["assistant_id"]
    own, _ = await start(client_as("requester1"), phrases.refund_in_full(server_order(899)), assistant)
    swept = await supervisor.delete(f"/assistants/{assistant}", params={"delete_threads": "true"})
    assert swept.status_code == 409, swept.text
    assert (await requester.threads.get(own))["status"] == "interrupted"
    for user, status in (("requester1", 403), ("reviewer1", 403), (None, 401)):
        assert (await http_as(user).delete(f"/assistants/{assistant}")).status_code == status, user
    (system,) = (
        await supervisor.post(
            "/assistants/search", json={"graph_id": "support", "metadata": {"created_by": "system"}}
        )
    ).json()
    kept = await supervisor.delete(f"/assistants/{system['assistant_id']}")
    assert kept.status_code == 409, kept.text
    assert (await supervisor.get(f"/assistants/{system['assistant_id']}")).status_code == 200

    await requester.http.post(f"/threads/{own}/withdraw", json={"reason": "asked elsewhere"})
    await finished(requester, own)
    gone = await supervisor.delete(f"/assistants/{assistant}", params={"delete_threads": "true"})
    assert gone.status_code == 204, gone.text
    records = (await supervisor.get(f"/audit/assistants/{assistant}")).json()["records"]
    assert [(r["decision"], r["reviewer"]) for r in records][-1] == ("delete_assistant", "supervisor1")
    trail = (await supervisor.get(f"/audit/{own}")).json()["records"]
    assert [r["decision"] for r in trail] == ["withdrawn", "thread_deleted"]


@pytest.mark.parametrize(("user", "status"), [("reviewer1", 403), ("requester2", 404), (None, 401)])
async def test_only_the_owner_or_a_supervisor_withdraws(
    http_as, client_as, server_order, ledger, user, status
):
    """withdraw by a reviewer: 403; another requester: 404; anonymous: 401; the approval stays, no refund."""
    order_id, thread_id = await pending_refund(client_as, server_order)
    answer = await http_as(user).post(f"/threads/{thread_id}/withdraw", json={"reason": "no"})
    assert answer.status_code == status, answer.text
    assert (await client_as("requester1").threads.get(thread_id))["status"] == "interrupted"
    assert ledger.refunds_of(order_id) == []
    trail = (await http_as("supervisor1").get(f"/audit/{thread_id}")).json()["records"]
    expected = [("refused", user)] if status == 403 else []  # who may not see the thread learns nothing
    assert [(r["decision"], r["reviewer"]) for r in trail] == expected


@pytest.mark.parametrize(
    "body", [{"reason": 7}, {"reason": "x" * 501}, {"reason": "nul\u0000byte"}, {"why": "no"}, [1], "text"]
)
async def test_a_malformed_withdrawal_is_422_and_changes_nothing(http_as, client_as, server_order, body):
    """withdraw with a bad body: 422 saying what to send; the approval still waits."""
    _, thread_id = await pending_refund(client_as, server_order)
    answer = await http_as("requester1").post(f"/threads/{thread_id}/withdraw", json=body)
    assert answer.status_code == 422, answer.text
    assert "reason" in answer.json()["detail"]
    assert (await client_as("requester1").threads.get(thread_id))["status"] == "interrupted"


async def test_withdrawn_then_deleted_the_trail_still_verifies_for_staff(
    client_as, http_as, server, server_order, ledger
):
    """withdraw (owner): signed `withdrawn`, no refund, agent told; delete; staff and hitl verify read it."""
    order_id, thread_id = await pending_refund(client_as, server_order, 300)
    requester = client_as("requester1")
    withdrawn = await requester.http.post(
        f"/threads/{thread_id}/withdraw", json={"reason": "bought elsewhere"}
    )
    (receipt,) = withdrawn["withdrawn"]
    assert (receipt["decision"], receipt["reviewer"], bool(receipt["signed"])) == (
        "withdrawn",
        "requester1",
        True,
    )
    await finished(requester, thread_id)
    messages = (await requester.threads.get_state(thread_id))["values"]["messages"]
    assert "bought elsewhere" in str(messages[-2]["content"]) + str(messages[-1]["content"])
    assert ledger.refunds_of(order_id) == []
    again = await http_as("requester1").post(f"/threads/{thread_id}/withdraw", json={})
    assert again.status_code == 409, again.text

    deleted = await http_as("requester1").delete(f"/threads/{thread_id}")
    assert deleted.status_code == 204, deleted.text
    for user in ("reviewer1", "supervisor1"):
        trail = (await http_as(user).get(f"/audit/{thread_id}")).json()["records"]
        assert [(r["decision"], r["reviewer"]) for r in trail] == [
            ("withdrawn", "requester1"),
            ("refused", "requester1"),  # the second withdrawal: nothing waited any more
            ("thread_deleted", "requester1"),
        ]
        report = (await http_as(user).get(f"/audit/{thread_id}/verification")).json()
        assert report["ok"], report
    for user, status in (("requester1", 404), ("requester2", 404), (None, 401)):
        assert (await http_as(user).get(f"/audit/{thread_id}")).status_code == status, user
    verified = hitl(server, "dev-reviewer1", "verify", thread_id)
    assert "verified: 1 receipt(s) and the audit chain" in verified.stdout
    refused = await http_as("reviewer1").post(f"/threads/{thread_id}/runs", json={"assistant_id": "support"})
    assert refused.status_code in REFUSED_OR_BUSY | {404}


@pytest.mark.parametrize("user", ["reviewer1", "supervisor1"])
async def test_the_servers_own_trails_stay_behind_their_own_routes(http_as, user):
    """/audit/{name} of a trail that is no thread's (an assistant's, the Slack channel's): 404 there.

    An assistant's changes are read at /audit/assistants/{id}; the Slack channel's by supervisors only.
    """
    made = await http_as("supervisor1").post("/assistants", json={"graph_id": "support", "name": "trail"})
    assistant = made.json()["assistant_id"]
    assert (await http_as(user).get(f"/audit/assistants/{assistant}")).status_code == 200
    for name in (f"assistant-{assistant}", "slack-channel", "assistants"):
        answer = await http_as(user).get(f"/audit/{name}")
        assert answer.status_code == 404, (name, answer.text)


async def test_a_prune_of_too_many_threads_is_refused_before_any_is_read(http_as):
    """POST /threads/prune with 1,001 ids: 422 saying the limit; nothing deleted."""
    ids = [str(uuid.uuid4()) for _ in range(1001)]
    answer = await http_as("supervisor1").post("/threads/prune", json={"thread_ids": ids})
    assert answer.status_code == 422, answer.text
    assert "at most 1000" in answer.text


async def idle_thread(client) -> str:
    """A thread of `client`'s user that waits for nothing (one finished turn)."""
    thread_id = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread_id, "support", input={"messages": [human("Hello")]})
    return thread_id


async def trail_of(http_as, thread_id: str) -> list[tuple[str, str]]:
    """A thread's trail as staff read it: (decision, reviewer) of each record."""
    trail = (await http_as("supervisor1").get(f"/audit/{thread_id}")).json()["records"]
    return [(r["decision"], r["reviewer"]) for r in trail]


async def test_a_deletion_the_engine_refuses_is_not_recorded(client_as, http_as, server_order, ledger):
    """prune [own, another's]: 404; keep_latest: 422; DELETE another's: 404: threads stay, none recorded.

    Issue 54, finding 7: a refused prune left `thread_deleted` in the trail of a thread that still
    exists. Here the owner's thread holds a refund reviewer1 approved (refunded once): after the
    refusals its trail is still the approval alone; a real prune then records one deletion, by its
    owner, the trail (with the approval's receipt) verifies, and the refund is neither lost nor repeated.
    """
    order_id, own = await pending_refund(client_as, server_order, 300)
    await client_as("reviewer1").runs.wait(
        own, "support", command={"resume": {"decisions": [{"type": "approve"}]}}
    )
    assert ledger.refunds_of(order_id) == [300.0]
    approved = await trail_of(http_as, own)
    assert approved == [("approve", "reviewer1")]
    others = await idle_thread(client_as("requester2"))

    refused = await http_as("requester1").post("/threads/prune", json={"thread_ids": [own, others]})
    assert refused.status_code == 404, refused.text
    for user in ("requester1", "supervisor1"):
        kept = await http_as(user).post(
            "/threads/prune", json={"thread_ids": [own], "strategy": "keep_latest"}
        )
        assert kept.status_code == 422, (user, kept.text)
    assert (await http_as("requester1").delete(f"/threads/{others}")).status_code == 404
    for thread_id in (own, others):
        assert (await http_as("supervisor1").get(f"/threads/{thread_id}")).status_code == 200
    assert await trail_of(http_as, own) == approved
    assert await trail_of(http_as, others) == []

    pruned = await http_as("requester1").post("/threads/prune", json={"thread_ids": [own]})
    assert pruned.status_code == 200, pruned.text
    assert (await http_as("supervisor1").get(f"/threads/{own}")).status_code == 404
    assert await trail_of(http_as, own) == [*approved, ("thread_deleted", "requester1")]
    report = (await http_as("reviewer1").get(f"/audit/{own}/verification")).json()
    assert report["ok"], report
    assert ledger.refunds_of(order_id) == [300.0]
    assert await trail_of(http_as, others) == []
