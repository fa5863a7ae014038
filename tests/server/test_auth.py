"""Who may decide, through the real server: tokens, ownership, roles, side doors, audit."""

from __future__ import annotations

import httpx
import pytest

from agents.offline import phrases
from server.http.outgoing import tls
from tests.devserver import TOKENS
from tests.server.helpers import APPROVE, decisions, only_pending, refused, start

pytestmark = pytest.mark.server


async def test_no_token_or_a_wrong_one_gets_401(server):
    """authentication: missing and unknown bearer tokens are refused with 401."""
    async with httpx.AsyncClient(base_url=server.url, verify=tls()) as http:
        assert (await http.post("/threads/search", json={})).status_code == 401
        wrong = {"Authorization": "Bearer not-a-token"}
        assert (await http.post("/threads/search", json={}, headers=wrong)).status_code == 401
        assert (await http.get("/audit/x", headers=wrong)).status_code == 401


async def test_x_api_key_is_the_same_token_under_the_same_rules(
    server, requester, server_order, server_services
):
    """x-api-key (LangGraph SDKs' apiKey) is the bearer token, under the same rules.

    It reads as its user; a requester's key still may not approve; two different tokens at
    once, or an unknown key, are 401; none of them refunds anything, the reviewer's key does.
    """
    order_id = server_order(300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body = {"assistant_id": "support", "command": decisions(APPROVE)}
    async with httpx.AsyncClient(base_url=server.url, timeout=60, verify=tls()) as http:
        as_key = {"x-api-key": "dev-reviewer1"}
        assert (await http.get("/inbox", headers=as_key)).status_code == 200
        assert (
            await http.post("/threads/search", json={}, headers={"x-api-key": "not-a-token"})
        ).status_code == 401
        both = {"x-api-key": "dev-requester1", "Authorization": "Bearer dev-reviewer1"}
        mixed = await http.post(f"/threads/{thread_id}/runs/wait", json=body, headers=both)
        assert (mixed.status_code, "different tokens" in mixed.text) == (401, True)
        own = await http.post(
            f"/threads/{thread_id}/runs/wait", json=body, headers={"x-api-key": "dev-requester1"}
        )
        assert own.status_code == 403, own.text
        assert server_services.payments.refunds_for(order_id) == []
        approved = await http.post(f"/threads/{thread_id}/runs/wait", json=body, headers=as_key)
        assert approved.status_code == 200, approved.text
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [300.0]


async def test_another_requester_cannot_read_search_or_resume(
    requester, client_as, server_order, server_services
):
    """ownership: requester2 gets no data about requester1's thread and cannot answer it."""
    order_id = server_order(300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    other = client_as("requester2")
    with refused(404):
        await other.threads.get(thread_id)
    found = await other.threads.search(limit=100)
    assert thread_id not in {t["thread_id"] for t in found}
    with refused(404, "not found"):
        await other.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert server_services.payments.refunds_for(order_id) == []
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"


async def test_a_requester_cannot_approve_their_own_refund(requester, server, server_order, server_services):
    """roles: the owner's approve is refused on runs/wait and on /commands; the approval stays."""
    order_id = server_order(300)
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id))
    interrupt_id = only_pending(thread)["id"]
    with refused(403, "needs a reviewer"):
        await requester.runs.wait(thread_id, "support", command=decisions(APPROVE))

    command = {
        "id": 1,
        "method": "input.respond",
        "params": {"interrupt_id": interrupt_id, "response": {"decisions": [APPROVE]}},
    }
    async with httpx.AsyncClient(
        base_url=server.url, headers={"Authorization": "Bearer dev-requester1"}, verify=tls()
    ) as http:
        answer = await http.post(f"/threads/{thread_id}/commands", json=command)
    assert answer.json()["type"] == "error"
    assert "403" in answer.json()["message"] or "reviewer" in answer.json()["message"]

    assert server_services.payments.refunds_for(order_id) == []
    after = await requester.threads.get(thread_id)
    assert (after["status"], only_pending(after)["id"]) == ("interrupted", interrupt_id)


async def test_the_owner_cannot_rewrite_the_pending_call(
    requester, supervisor, server_order, server_services
):
    """side door: a state update while an approval waits is refused to the owner, allowed to a supervisor."""
    order_id = server_order(300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    with refused(403, "Only a supervisor may write"):
        await requester.threads.update_state(thread_id, {"messages": []})
    with refused(409, "An approval waits on this thread: issue_refund"):
        await requester.runs.wait(
            thread_id, "support", input={"messages": [{"role": "user", "content": "hi"}]}
        )
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"
    assert server_services.payments.refunds_for(order_id) == []


async def test_reviewer_approves_300_but_not_899(
    requester, reviewer, supervisor, server_order, server_services
):
    """supervisor limit 500: a reviewer decides 300; 899 needs a supervisor, who then approves it."""
    small = server_order(300)
    thread_id, _ = await start(requester, phrases.refund_in_full(small))
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(small)] == [300.0]

    large = server_order(899)
    thread_id, _ = await start(requester, phrases.refund_in_full(large))
    with refused(403, "needs a supervisor"):
        await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert server_services.payments.refunds_for(large) == []
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"

    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(large)] == [899.0]


async def test_only_the_owner_answers_ask_user(requester, reviewer, server_order, server_services):
    """ask_user: a reviewer may not answer for the user; the owner's answer lets the refund run."""
    order_id = server_order(80)
    thread_id, thread = await start(requester, "Please refund 80 on my order, it arrived broken.")
    assert only_pending(thread)["value"]["action_requests"][0]["name"] == "ask_user"
    answer = decisions({"type": "respond", "message": f"It is {order_id}"})
    with refused(403, "owner"):
        await reviewer.runs.wait(thread_id, "support", command=answer)
    await requester.runs.wait(thread_id, "support", command=answer)
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [80.0]


async def test_the_audit_trail_shows_edit_reject_and_refusals_in_order(requester, reviewer, server_order):
    """audit: a refused attempt, then one edit and one reject, with who decided and the final args."""
    order_id = server_order(400)
    thread_id, _ = await start(requester, phrases.refund_and_email(order_id))
    with refused(403, "needs a reviewer"):
        await requester.runs.wait(thread_id, "support", command=decisions(APPROVE, APPROVE))
    edited = {"order_id": order_id, "amount": 150, "reason": "Partial"}
    await reviewer.runs.wait(
        thread_id,
        "support",
        command=decisions(
            {"type": "edit", "edited_action": {"name": "issue_refund", "args": edited}},
            {"type": "reject", "message": "Not yet"},
        ),
    )
    trail = await requester.http.get(f"/audit/{thread_id}")
    records = trail["records"]
    assert [(r["outcome"], r["decision"], r["reviewer"]) for r in records] == [
        ("refused", "refused", "requester1"),
        ("accepted", "edit", "reviewer1"),
        ("accepted", "reject", "reviewer1"),
    ]
    assert records[1]["tool"] == "issue_refund"
    assert records[1]["requested_args"]["amount"] == 400.0
    assert records[1]["final_args"] == edited
    assert (records[2]["tool"], records[2]["message"], records[2]["final_args"]) == (
        "send_email",
        "Not yet",
        None,
    )

    state = await requester.threads.get_state(thread_id)
    receipts = state["values"]["approval_receipts"]
    assert [(r["tool"], r["decision"]) for r in receipts] == [
        ("issue_refund", "edit"),
        ("send_email", "reject"),
    ]
    assert all(m.get("type") != "approval_receipt" for m in state["values"]["messages"])


async def test_audit_is_not_readable_by_other_requesters(requester, client_as, server_order):
    """audit access: requester2 gets 404 for requester1's trail."""
    thread_id, _ = await start(requester, phrases.refund_in_full(server_order(300)))
    with refused(404):
        await client_as("requester2").http.get(f"/audit/{thread_id}")


@pytest.mark.parametrize("user", [None, "requester1", "reviewer1", "supervisor1"])
def test_info_answers_as_langgraph_api_does_and_tells_no_secret(server, user):
    """GET /info: the same versions and flags for anyone (clients check it); no token or setting in it."""
    headers = {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}
    answer = httpx.get(f"{server.url}/info", headers=headers, timeout=10, verify=tls())
    assert answer.status_code == 200
    info = answer.json()
    assert set(info) == {"version", "langgraph_py_version", "flags", "host"}
    assert info["flags"]["assistants"] is True
    text = answer.text
    assert not any(token in text for token in TOKENS.values())
    assert "dev-" not in text
    assert httpx.post(f"{server.url}/info", headers=headers, timeout=10, verify=tls()).status_code in {
        401,
        404,
        405,
    }
