"""GET /inbox through the real server: who sees what, filters, and a cursor that stays stable."""

from __future__ import annotations

import jsonschema_rs
import pytest

from agents.offline import phrases
from hitl.contracts.publish import contracts_schema
from tests.server.helpers import APPROVE, decisions, refused, start

pytestmark = pytest.mark.server


async def inbox(client, **params):
    return await client.http.get("/inbox", params={k: v for k, v in params.items() if v is not None})


async def test_each_user_sees_only_what_they_may_decide(
    requester, client_as, reviewer, supervisor, server_order
):
    """visibility: 899 only for supervisors, 300 for reviewers too, ask_user only for its owner."""
    big, _ = await start(requester, phrases.refund_in_full(server_order(899)))
    small, _ = await start(requester, phrases.refund_in_full(server_order(300)))
    question, _ = await start(requester, "Please refund 80 on my order, it arrived broken.")

    def threads(page):
        return {item["thread_id"] for item in page["items"]}

    seen_by_supervisor = threads(await inbox(supervisor, limit=500))
    seen_by_reviewer = threads(await inbox(reviewer, limit=500))
    seen_by_owner = threads(await inbox(requester, limit=500))
    seen_by_other = threads(await inbox(client_as("requester2"), limit=500))
    assert {big, small} <= seen_by_supervisor
    assert question not in seen_by_supervisor
    assert small in seen_by_reviewer
    assert big not in seen_by_reviewer
    assert question in seen_by_owner
    assert {big, small}.isdisjoint(seen_by_owner)
    assert {big, small, question}.isdisjoint(seen_by_other)


async def test_an_item_says_what_waits_and_for_whom(requester, supervisor, server_order):
    """row contents: thread, agent, tool, args, description, decisions, interrupt id, owner, age."""
    order_id = server_order(640)
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id))
    page = await inbox(supervisor, tool="issue_refund", limit=500)
    [row] = [item for item in page["items"] if item["thread_id"] == thread_id]
    assert row["agent"] == "support"
    assert row["args"]["order_id"] == order_id
    assert row["allowed_decisions"] == ["approve", "edit", "reject"]
    assert row["required_role"] == "supervisor"
    assert row["owner"] == "requester1"
    assert row["interrupt_id"] == next(iter(thread["interrupts"].values()))[0]["id"]
    assert row["age_seconds"] >= 0
    assert "Refund 640" in row["description"]
    assert row["deadline"] > row["created_at"]
    assert row["escalated"] is False
    assert all(item["tool"] == "issue_refund" for item in page["items"])
    assert (await inbox(supervisor, agent="no-such-agent"))["items"] == []


async def test_pages_stay_stable_while_approvals_are_resolved(requester, supervisor, server_order):
    """cursor: walking pages of 2 while resolving items already seen never skips or repeats one."""
    started = []
    for _ in range(6):
        thread_id, _ = await start(requester, phrases.refund_in_full(server_order(150)))
        started.append(thread_id)
    seen: list[str] = []
    cursor = None
    while True:
        page = await inbox(supervisor, tool="issue_refund", limit=2, cursor=cursor)
        for item in page["items"]:
            seen.append(item["thread_id"])
            if item["thread_id"] in started:
                await supervisor.runs.wait(item["thread_id"], "support", command=decisions(APPROVE))
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen))
    assert set(started) <= set(seen)


async def test_a_bad_cursor_or_limit_is_a_clear_400(supervisor):
    """bad input: an invented cursor and a zero limit get 400 and a message (see test_edges_inbox_params)."""
    with refused(400, "cursor"):
        await inbox(supervisor, cursor="not-a-cursor")
    with refused(400, "limit"):
        await inbox(supervisor, limit=0)


async def test_pages_of_one_walk_every_action_of_a_batch(requester, supervisor, server_order):
    """cursor: a batch of two actions (refund + e-mail) split by a page boundary loses neither."""
    thread_id, _ = await start(requester, phrases.refund_and_email(server_order(260)))
    tools, cursor = [], None
    while True:
        page = await inbox(supervisor, limit=1, cursor=cursor)
        tools += [item["tool"] for item in page["items"] if item["thread_id"] == thread_id]
        if (cursor := page["next_cursor"]) is None:
            break
    assert sorted(tools) == ["issue_refund", "send_email"]


async def test_a_withdrawn_or_answered_thread_leaves_the_inbox_at_once(requester, supervisor, server_order):
    """freshness: changes made through the server show on the next page, without waiting for a pass."""
    answered, _ = await start(requester, phrases.refund_in_full(server_order(150)))
    withdrawn, _ = await start(requester, phrases.refund_in_full(server_order(160)))
    listed = {item["thread_id"] for item in (await inbox(supervisor, limit=500))["items"]}
    assert {answered, withdrawn} <= listed
    await supervisor.runs.wait(answered, "support", command=decisions(APPROVE))
    await requester.http.post(f"/threads/{withdrawn}/withdraw", json={"reason": "bought elsewhere"})
    page = await inbox(supervisor, limit=500)
    assert {answered, withdrawn}.isdisjoint(item["thread_id"] for item in page["items"])
    assert page["total"] == len(page["items"])


async def test_rows_and_audit_logs_match_the_published_contracts(requester, supervisor, server_order):
    """contracts: /inbox pages (a quorum row too) and /audit logs validate against the published schema.

    hitl/contracts/schemas/contracts.json is what the web app's types are generated from.
    """
    await start(requester, phrases.refund_in_full(server_order(2400)))
    thread_id, _ = await start(requester, phrases.refund_in_full(server_order(300)))
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))
    published = contracts_schema()

    def check(name: str, body: dict) -> None:
        schema = {**published, "$ref": f"#/$defs/{name}"}
        errors = [e.message for e in jsonschema_rs.validator_for(schema).iter_errors(body)]
        assert errors == [], errors[:3]

    page = await inbox(supervisor, limit=500)
    assert any(row.get("approvals") for row in page["items"])
    check("InboxPage", page)
    check("AuditLog", await supervisor.http.get(f"/audit/{thread_id}"))
