"""Signed receipts and the chained audit trail through the real server (`server.records.receipts`).

Every accepted decision's receipt carries a JWS that verifies against the public
`/.well-known/jwks.json`; the trail is chained; `/audit/{thread_id}/verification` says so to
whoever may read the thread, and nothing to anyone else.
"""

from __future__ import annotations

import uuid

import httpx
import jsonschema_rs
import pytest

from agents.offline import phrases
from hitl.contracts.publish import contracts_schema
from hitl.policy import quorum
from hitl.proof.receipt_check import RECEIPTS_KEY
from hitl.proof.signed_receipts import check, signed_claims
from hitl.proof.verification import Evidence, verify
from server.http.outgoing import tls
from tests.devserver import TOKENS
from tests.server.helpers import APPROVE, decisions, refused, start

pytestmark = pytest.mark.server


async def jwks_of(server) -> dict:
    async with httpx.AsyncClient(base_url=server.url, verify=tls()) as anonymous:
        answer = await anonymous.get("/.well-known/jwks.json")
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_an_approval_yields_a_signed_receipt_anyone_can_verify(
    server, requester, reviewer, server_order, server_services
):
    """receipt: bound to thread, interrupt, call, args, decider, policy and the audit head; it verifies."""
    order_id = server_order(450)
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id))
    (pending,) = [i for batch in thread["interrupts"].values() for i in batch]
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [450.0]

    jwks = await jwks_of(server)
    (receipt,) = (await reviewer.threads.get_state(thread_id))["values"]["approval_receipts"]
    assert check(receipt, jwks, thread_id) == []
    claims = signed_claims(receipt["signed"], jwks)
    assert (claims["thread_id"], claims["interrupt_id"], claims["tool"], claims["decision"]) == (
        thread_id,
        pending["id"],
        "issue_refund",
        "approve",
    )
    assert claims["approver"] == {"identity": "reviewer1", "roles": ["reviewer"]}
    assert claims["final_args_sha256"] == claims["requested_args_sha256"]
    assert len(claims["policy_revision"]) == 64
    assert check({**receipt, "final_args": {**receipt["final_args"], "amount": 4500}}, jwks, thread_id)

    audit = await reviewer.http.get(f"/audit/{thread_id}")
    (record,) = audit["records"]
    assert record["signed"] == receipt["signed"]
    assert (record["prev_hash"], audit["head"]["hash"]) == ("", record["hash"])
    report = await reviewer.http.get(f"/audit/{thread_id}/verification")
    assert report["ok"], report
    for name, body in (("AuditVerification", report), ("AuditLog", audit)):
        schema = {**contracts_schema(), "$ref": f"#/$defs/{name}"}
        assert [e.message for e in jsonschema_rs.validator_for(schema).iter_errors(body)] == []
    assert [(r["tool_call_id"], r["verified"]) for r in report["receipts"]] == [
        (receipt["tool_call_id"], True)
    ]


async def test_refused_and_accepted_records_chain_and_the_receipt_names_the_head(
    server, requester, reviewer, supervisor, server_order
):
    """chain: a refused attempt, then an approval: two chained records; the receipt names the first."""
    order_id = server_order(450)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    with refused(403):
        await requester.runs.wait(thread_id, "support", command=decisions(APPROVE))
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))

    audit = await supervisor.http.get(f"/audit/{thread_id}")
    first, second = audit["records"]
    assert (first["outcome"], second["outcome"]) == ("refused", "accepted")
    assert second["prev_hash"] == first["hash"]
    jwks = await jwks_of(server)
    assert signed_claims(second["signed"], jwks)["audit_head"] == first["hash"]

    state = await supervisor.threads.get_state(thread_id)
    evidence = Evidence(
        thread_id, jwks, audit["records"], audit["head"], state["values"]["approval_receipts"]
    )
    assert verify(evidence).ok
    tampered = [first, {**second, "reviewer": "requester1"}]
    report = verify(Evidence(thread_id, jwks, tampered, audit["head"]))
    assert not report.ok
    assert any(second["key"] in p for p in report.trail_problems)


async def test_the_jwks_is_public_read_only_and_holds_no_private_key(server, client_as):
    """attack: anonymous, requester and reviewer all read the same public keys; none can change them."""
    jwks = await jwks_of(server)
    assert jwks["keys"]
    assert all(k["kty"] == "OKP" and k["alg"] == "EdDSA" and "d" not in k for k in jwks["keys"])
    for user in ("requester1", "reviewer1"):
        assert await client_as(user).http.get("/.well-known/jwks.json") == jwks
    async with httpx.AsyncClient(base_url=server.url, verify=tls()) as anonymous:
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            answer = await anonymous.request(method, "/.well-known/jwks.json", json={"keys": []})
            assert answer.status_code in {401, 404, 405}, (method, answer.status_code)
        for path in (
            "/.well-known/openid-configuration",
            "/.well-known/jwks.json/../../audit/x",
            "/.well-known/",
        ):
            answer = await anonymous.get(path)
            assert answer.status_code in {401, 404}, (path, answer.status_code)
    headers = {"Authorization": f"Bearer {TOKENS['requester1']}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, verify=tls()) as requester:
        answer = await requester.post("/.well-known/jwks.json", json={"keys": []})
        assert answer.status_code in {404, 405}
    assert await jwks_of(server) == jwks


async def test_verification_is_for_who_may_read_the_thread(server, client_as, server_order):
    """attack: another requester gets 404, anonymous 401; the owner and a reviewer get the verdict."""
    owner = client_as("requester1")
    thread_id, _ = await start(owner, phrases.refund_in_full(server_order(450)))
    await client_as("reviewer1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    path = f"/audit/{thread_id}/verification"
    with refused(404, "not found"):
        await client_as("requester2").http.get(path)
    async with httpx.AsyncClient(base_url=server.url, verify=tls()) as anonymous:
        assert (await anonymous.get(path)).status_code == 401
        assert (await anonymous.get(f"/audit/{thread_id}")).status_code == 401
    assert (await owner.http.get(path))["ok"]
    assert (await client_as("reviewer1").http.get(path))["ok"]
    with refused(404, "not found"):
        await client_as("reviewer1").http.get("/audit/no-such-thread/verification")
    for store_namespace in (["hitl_records", "audit_head", thread_id], ["audit", thread_id]):
        with refused(403):
            await client_as("requester1").store.put_item(store_namespace, "head", {"hash": ""})


async def test_an_edit_runs_under_its_receipt_for_the_edited_args(
    server, requester, supervisor, server_order, server_services
):
    """bound to the call: the edited 120 runs (the gate found the receipt for exactly those args)."""
    order_id = server_order(400)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    edit = {"name": "issue_refund", "args": {"order_id": order_id, "amount": 120, "reason": "Partial"}}
    await supervisor.runs.wait(
        thread_id, "support", command=decisions({"type": "edit", "edited_action": edit})
    )
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [120.0]
    (receipt,) = (await supervisor.threads.get_state(thread_id))["values"]["approval_receipts"]
    claims = signed_claims(receipt["signed"], await jwks_of(server))
    assert claims["final_args_sha256"] == quorum.digest(edit["args"]) != claims["requested_args_sha256"]


@pytest.mark.parametrize("user", ["requester1", "reviewer1", "supervisor1", None])
async def test_nobody_can_plant_receipts_in_a_run(server, client_as, server_order, server_services, user):
    """attack: hitl_receipts is the server's word: planted in config or context by anyone, it is refused."""
    order_id = server_order(450)
    thread_id, thread = await start(client_as("requester1"), phrases.refund_in_full(order_id))
    (pending,) = [i for batch in thread["interrupts"].values() for i in batch]
    planted = {pending["value"]["action_requests"][0]["tool_call_id"]: "e30.e30.AAAA"}
    headers = {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=60, verify=tls()) as http:
        for extra in (
            {"config": {"configurable": {RECEIPTS_KEY: planted}}},
            {"context": {RECEIPTS_KEY: planted}},
        ):
            body = {"assistant_id": "support", "command": decisions(APPROVE)}
            answer = await http.post(f"/threads/{thread_id}/runs/wait", json={**body, **extra})
            assert answer.status_code == (401 if user is None else 422), answer.text
    assert server_services.payments.refunds_for(order_id) == []


@pytest.mark.parametrize("user", ["requester1", "reviewer1", "supervisor1", None])
async def test_a_genuine_receipt_the_server_recalls_runs_no_other_call(
    server, client_as, server_order, server_services, user
):
    """attack: the server signed A's receipt (so it recalls the token): planted for B's call it is refused.

    As config, context or a sealed receipt in `command.update`, by every role and anonymously, and A's
    approval resent from A's paused checkpoint; then B's own approval runs B once, A stays refunded once
    and B's receipt binds B's call, not A's.
    """
    supervisor = client_as("supervisor1")
    order_a, order_b = server_order(450), server_order(450)
    thread_a, _ = await start(client_as("requester1"), phrases.refund_in_full(order_a))
    await supervisor.runs.wait(thread_a, "support", command=decisions(APPROVE))
    (genuine,) = (await supervisor.threads.get_state(thread_a))["values"]["approval_receipts"]
    thread_b, thread = await start(client_as("requester1"), phrases.refund_in_full(order_b))
    (pending,) = [i for batch in thread["interrupts"].values() for i in batch]
    call_b = pending["value"]["action_requests"][0]["tool_call_id"]
    planted = {call_b: genuine["signed"]}
    history = await supervisor.threads.get_history(thread_a, limit=50)
    paused_at = next(h["checkpoint"]["checkpoint_id"] for h in history if h["interrupts"])
    headers = {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=60, verify=tls()) as http:
        for extra in (
            {"config": {"configurable": {RECEIPTS_KEY: planted}}},
            {"context": {RECEIPTS_KEY: planted}},
            {
                "command": {
                    **decisions(APPROVE),
                    "update": {"approval_receipts": [{**genuine, "tool_call_id": call_b}]},
                }
            },
        ):
            body = {"assistant_id": "support", "command": decisions(APPROVE), **extra}
            answer = await http.post(f"/threads/{thread_b}/runs/wait", json=body)
            assert answer.status_code in ({401} if user is None else {403, 422}), answer.text
        fork = {"assistant_id": "support", "command": decisions(APPROVE), "checkpoint_id": paused_at}
        answer = await http.post(f"/threads/{thread_a}/runs/wait", json=fork)  # A's decision, again
        assert answer.status_code in ({401} if user is None else {403, 409, 422}), answer.text
    assert server_services.payments.refunds_for(order_b) == []
    await supervisor.runs.wait(thread_b, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_b)] == [450.0]
    assert [r["amount"] for r in server_services.payments.refunds_for(order_a)] == [450.0]
    receipts_b = (await supervisor.threads.get_state(thread_b))["values"]["approval_receipts"]
    assert [signed_claims(r["signed"], await jwks_of(server))["thread_id"] for r in receipts_b] == [thread_b]


async def test_a_batch_of_two_decisions_chains_two_signed_records(
    server, requester, supervisor, server_order, server_services
):
    """batch: refund approved, e-mail rejected: two receipts in one write, chained, each verified."""
    order_id = server_order(450)
    thread_id, _ = await start(requester, phrases.refund_and_email(order_id))
    reject = {"type": "reject", "message": "No e-mail yet"}
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE, reject))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [450.0]

    records = (await supervisor.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["tool"], r["decision"]) for r in records] == [
        ("issue_refund", "approve"),
        ("send_email", "reject"),
    ]
    assert records[1]["prev_hash"] == records[0]["hash"]
    report = await supervisor.http.get(f"/audit/{thread_id}/verification")
    assert report["ok"], report
    assert [(r["tool"], r["verified"]) for r in report["receipts"]] == [
        ("issue_refund", True),
        ("send_email", True),
    ]
    claims = signed_claims(records[1]["signed"], await jwks_of(server))
    assert claims["final_args_sha256"] is None


async def test_per_call_approvals_and_form_answers_are_signed_and_verify(
    server, client_as, requester, server_services
):
    """per-call (ops delete_file) and a form (travel booking): signed receipts that verify."""
    root = server.log.parent / "workspace" / "tmp"
    root.mkdir(parents=True, exist_ok=True)
    log = root / f"{uuid.uuid4().hex[:8]}.log"
    log.write_text("old\n")
    operator, reviewer = client_as("supervisor1"), client_as("reviewer1")
    thread_id, thread = await start(operator, phrases.delete_files(f"tmp/{log.name}"), "ops")
    (pending,) = [i for batch in thread["interrupts"].values() for i in batch]
    await reviewer.runs.wait(thread_id, "ops", command={"resume": {pending["id"]: APPROVE}})
    assert not log.exists()
    report = await reviewer.http.get(f"/audit/{thread_id}/verification")
    assert report["ok"], report
    assert [(r["tool"], r["decision"], r["verified"]) for r in report["receipts"]] == [
        ("delete_file", "approve", True)
    ]

    thread_id, thread = await start(requester, phrases.FIND_AND_BOOK_CHEAPEST, "travel")
    (form,) = [i for batch in thread["interrupts"].values() for i in batch]
    answer = {"decision": "approve", "seat_class": "premium", "insurance": True}
    await requester.runs.wait(thread_id, "travel", command={"resume": {form["id"]: answer}})
    booked = server_services.bookings.for_flight("FR8364")
    assert [b for b in booked if b["tool_call_id"] == form["value"]["tool_call_id"]]
    report = await requester.http.get(f"/audit/{thread_id}/verification")
    assert report["ok"], report
    assert [(r["interrupt_id"], r["verified"]) for r in report["receipts"]] == [(form["id"], True)]
