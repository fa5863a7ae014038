"""OIDC identities through a real server: JWTs from a stand-in issuer on loopback.

This module's own `langgraph dev` trusts the test's issuer (`tests/oidc_issuer.py`) beside
the dev users of HITL_USERS. A supervisor's JWT decides a refund; forged, expired and
misdirected tokens get 401 everywhere and change nothing.
"""

from __future__ import annotations

import time

import httpx
import pytest

from agents.offline import phrases
from server.http.outgoing import tls
from tests.conftest import add_order
from tests.devserver import sdk_client, start_dev_server, stop
from tests.oidc_issuer import Issuer
from tests.server.helpers import APPROVE, decisions, only_pending, pending_list, refused, start

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def issuer():
    running = Issuer()
    running.add_key("k1")
    yield running
    running.close()


@pytest.fixture(scope="module")
def oidc_server(tmp_path_factory, issuer):
    running = start_dev_server(tmp_path_factory.mktemp("oidc"), issuer.env())
    yield running
    stop(running.process)


@pytest.fixture
async def as_token(oidc_server):
    """`as_token(jwt)` gives a langgraph-sdk client sending that bearer token."""
    opened = []

    def make(token: str):
        sdk = sdk_client(url=oidc_server.url, headers={"Authorization": f"Bearer {token}"})
        opened.append(sdk)
        return sdk

    yield make
    for sdk in opened:
        await sdk.aclose()


async def pending_refund(as_token, issuer, oidc_server, amount: float = 899) -> tuple[str, str]:
    """alice (a `customers` JWT) asks for a full refund of her own order; the run waits."""
    order_id = add_order(oidc_server.services, amount, owner="alice")
    alice = as_token(issuer.token("alice", ["customers"]))
    thread_id, thread = await start(alice, phrases.refund_in_full(order_id))
    assert only_pending(thread)["value"]["action_requests"][0]["name"] == "issue_refund"
    return thread_id, order_id


async def test_a_supervisor_jwt_lists_the_inbox_and_approves_a_refund(as_token, issuer, oidc_server):
    """approve: the requester's own JWT is refused (403); a supervisor's long JWT sees it and refunds once."""
    thread_id, order_id = await pending_refund(as_token, issuer, oidc_server)
    alice = as_token(issuer.token("alice", ["customers"]))
    with refused(403):
        await alice.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert oidc_server.services.payments.refunds_for(order_id) == []

    many_groups = [f"team-{n:03d}-of-a-large-organisation" for n in range(200)]
    long_jwt = issuer.token("boss", [*many_groups, "support", "finance-approvers"])
    assert len(long_jwt) > 8_000  # what a pasted token from a large directory can look like
    boss = as_token(long_jwt)
    rows = (await boss.http.get("/inbox", params={"limit": 500}))["items"]
    [row] = [r for r in rows if r["thread_id"] == thread_id]
    assert row["required_role"] == "supervisor"
    await boss.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in oidc_server.services.payments.refunds_for(order_id)] == [899.0]
    records = (await boss.http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["reviewer"], r["decision"]) for r in records][-1] == ("boss", "approve")


async def test_bad_tokens_get_401_and_change_nothing(as_token, issuer, oidc_server):
    """refuse: expired, wrong-audience, alg-none, HS256-forged and unmapped JWTs, and no token: 401."""
    thread_id, order_id = await pending_refund(as_token, issuer, oidc_server, amount=650)
    supervisor_groups = ["finance-approvers"]
    bad = {
        "expired": issuer.token("boss", supervisor_groups, exp=int(time.time()) - 600),
        "another audience": issuer.token("boss", supervisor_groups, aud="another-api"),
        "algorithm 'none' is refused": issuer.unsigned("boss", supervisor_groups),
        "algorithm 'HS256' is refused": issuer.hs256_with_public_key("boss", supervisor_groups),
        "maps to no role": issuer.token("boss", ["staff"]),
    }
    async with httpx.AsyncClient(base_url=oidc_server.url, timeout=30, verify=tls()) as http:
        for reason, token in bad.items():
            headers = {"Authorization": f"Bearer {token}"}
            for response in (
                await http.post("/threads/search", json={}, headers=headers),
                await http.get("/inbox", headers=headers),
                await http.post(
                    f"/threads/{thread_id}/runs/wait",
                    json={"assistant_id": "support", "command": decisions(APPROVE)},
                    headers=headers,
                ),
            ):
                assert response.status_code == 401, (reason, response.request.url, response.text)
                assert reason in response.json()["detail"], (reason, response.text)
        for response in (await http.post("/threads/search", json={}), await http.get("/inbox")):
            assert response.status_code == 401, response.text
    assert oidc_server.services.payments.refunds_for(order_id) == []
    boss = as_token(issuer.token("boss", supervisor_groups))
    assert only_pending(await boss.threads.get(thread_id))["value"]["action_requests"][0]["name"] == (
        "issue_refund"
    )


async def test_static_tokens_still_work_beside_oidc(oidc_server):
    """HITL_USERS first: a dev token (over loopback, in dev mode) still reads the inbox."""
    async with sdk_client(url=oidc_server.url, headers={"Authorization": "Bearer dev-reviewer1"}) as reviewer:
        assert "items" in await reviewer.http.get("/inbox")


async def test_a_staff_oidc_users_approved_refund_runs_for_them(as_token, issuer, oidc_server):
    """act for the owner: rita (a reviewer by JWT, in no directory) refunds alice's order; boss approves.

    The approved run works for rita as the reviewer she was when she asked (her role is kept with
    the thread): the refund is made, once. A customer's JWT asking the same gets no such reach.
    """
    order_id = add_order(oidc_server.services, 300, owner="alice")
    rita = as_token(issuer.token("rita", ["support"]))
    thread_id, thread = await start(rita, phrases.refund_in_full(order_id))
    assert only_pending(thread)["value"]["action_requests"][0]["args"]["order_id"] == order_id
    assert thread["metadata"]["hitl_owner_role"] == "reviewer"

    boss = as_token(issuer.token("boss", ["finance-approvers"]))
    await boss.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in oidc_server.services.payments.refunds_for(order_id)] == [300.0]

    mallory = as_token(issuer.token("mallory", ["customers"]))
    other = add_order(oidc_server.services, 300, owner="alice")
    _, asked = await start(mallory, phrases.refund_in_full(other))
    assert asked["metadata"]["hitl_owner_role"] == "requester"
    assert not pending_list(asked)  # not her order: nothing to approve
    assert oidc_server.services.payments.refunds_for(other) == []


@pytest.mark.parametrize("who", ["customers", "support", "finance-approvers", None])
async def test_nobody_writes_the_owner_role(as_token, issuer, oidc_server, who):
    """attack: `hitl_owner_role` in metadata is refused to every role (403) and to no token (401).

    Thread, update, run and config metadata alike; the requester's reach stays her own: another
    customer's order is never refunded.
    """
    victim_order = add_order(oidc_server.services, 300, owner="alice")
    forged = {"hitl_owner_role": "supervisor"}
    mallory = as_token(issuer.token("mallory", ["customers"]))
    thread = await mallory.threads.create()
    message = {"messages": [{"role": "user", "content": phrases.refund_in_full(victim_order)}]}
    headers = {"Authorization": f"Bearer {issuer.token('eve', [who])}"} if who else {}
    async with httpx.AsyncClient(base_url=oidc_server.url, timeout=60, headers=headers, verify=tls()) as http:
        tid = thread["thread_id"]
        attempts = [
            http.post("/threads", json={"metadata": forged}),
            http.patch(f"/threads/{tid}", json={"metadata": forged}),
            http.post(
                f"/threads/{tid}/runs/wait",
                json={"assistant_id": "support", "input": message, "metadata": forged},
            ),
            http.post(
                f"/threads/{tid}/runs/wait",
                json={"assistant_id": "support", "input": message, "config": {"metadata": forged}},
            ),
            http.post("/runs/wait", json={"assistant_id": "support", "input": message, "metadata": forged}),
        ]
        for attempt in attempts:
            response = await attempt
            assert response.status_code == (403 if who else 401), response.text
    assert (await mallory.threads.get(tid))["metadata"]["hitl_owner_role"] == "requester"
    _, asked = await start(mallory, phrases.refund_in_full(victim_order))
    assert not pending_list(asked)
    assert oidc_server.services.payments.refunds_for(victim_order) == []


async def test_a_thread_a_supervisor_hands_on_runs_with_its_new_owners_role(as_token, issuer):
    """owner change: to reviewer1 (in the directory) it takes their role; to alice (unknown) a requester's."""
    rita = as_token(issuer.token("rita", ["support"]))
    boss = as_token(issuer.token("boss", ["finance-approvers"]))
    thread_id = (await rita.threads.create())["thread_id"]
    for owner, role in (("reviewer1", "reviewer"), ("alice", "requester")):
        metadata = (await boss.threads.update(thread_id, metadata={"owner": owner}))["metadata"]
        assert (metadata["owner"], metadata["hitl_owner_role"]) == (owner, role)
    copy = await boss.threads.copy(thread_id)  # only a supervisor copies; the copy keeps owner and role
    assert (copy["metadata"]["owner"], copy["metadata"]["hitl_owner_role"]) == ("alice", "requester")
    for mine in (rita, as_token(issuer.token("mallory", ["customers"]))):
        with refused(403, "Only a supervisor may copy"):
            await mine.threads.copy(thread_id)


@pytest.mark.parametrize("name", ["System", "SYSTEM", "\uff53ystem", " system", "\u0455ystem"])
@pytest.mark.parametrize("groups", [["customers"], ["support"], ["finance-approvers"]])
async def test_no_spelling_of_the_system_actor_signs_in(as_token, issuer, oidc_server, name, groups):
    """reserved: `System`, `SYSTEM`, full-width or Cyrillic `system` is refused (401) in every role.

    Its reject would be recorded as the watcher's expiry; the refund stays pending, no record is made.
    """
    thread_id, order_id = await pending_refund(as_token, issuer, oidc_server, amount=650)
    token = issuer.token(name, groups)
    async with httpx.AsyncClient(base_url=oidc_server.url, timeout=30, verify=tls()) as http:
        headers = {"Authorization": f"Bearer {token}"}
        answer = await http.post(
            f"/threads/{thread_id}/runs/wait",
            json={"assistant_id": "support", "command": decisions({"type": "reject", "message": "expired"})},
            headers=headers,
        )
        assert answer.status_code == 401, answer.text
        assert "cannot name a user" in answer.json()["detail"]
    boss = as_token(issuer.token("boss", ["finance-approvers"]))
    assert (await boss.http.get(f"/audit/{thread_id}"))["records"] == []
    assert oidc_server.services.payments.refunds_for(order_id) == []
