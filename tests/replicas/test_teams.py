"""Teams from the identity provider on two replicas: each team's inbox on either replica, none of the other's.

The replicas serve the demo with its refunds given to `finance` (`finance-leads` above 500) and its
ops calls to `sre`; people sign in with an OIDC token whose groups claim (`org.teams`) names their
team. A refund paused through A is in a finance member's inbox on B within a second and in no SRE
member's, an ops write the other way round; each is decided by its team, once.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from agents.offline import phrases
from server.http.outgoing import tls
from tests.conftest import add_order
from tests.oidc_issuer import Issuer
from tests.replicas.conftest import approve, http, pause_refund, until

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    running = Issuer()
    running.add_key("k1")
    yield running
    running.close()


@pytest.fixture(scope="module")
def replica_env(issuer) -> dict[str, str]:
    return {
        **issuer.env(),
        "HITL_OIDC_GROUPS_CLAIM": "org.teams",
        "REFUND_DECIDER_GROUP": "finance",
        "REFUND_LEAD_GROUP": "finance-leads",
        "OPS_DECIDER_GROUP": "sre",
    }


def signed_in(url: str, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60, verify=tls()
    )


async def inbox(client: httpx.AsyncClient) -> dict[str, Any]:
    return (await client.get("/inbox", params={"limit": 500})).raise_for_status().json()


async def threads_in(client: httpx.AsyncClient) -> set[str]:
    return {row["thread_id"] for row in (await inbox(client))["items"]}


async def test_finance_sees_refunds_and_sre_ops_on_either_replica_from_their_tokens(
    replicas, business, issuer
):
    """OIDC groups: the 300 refund in finance's inbox on A and B, never SRE's; the ops write the reverse."""
    a, b = replicas.urls
    finance = issuer.token("fatima", "support", org={"teams": ["finance"]})
    sre = issuer.token("sam", "support", org={"teams": ["sre"]})
    order_id = add_order(business, 300)
    async with http(a, "requester1") as requester:
        thread_id, interrupt_id = await pause_refund(requester, order_id)
    paused = time.monotonic()
    async with signed_in(b, finance) as finance_on_b, signed_in(a, finance) as finance_on_a:

        async def listed_on_b() -> bool:
            return thread_id in await threads_in(finance_on_b)

        await until(listed_on_b, seconds=10)
        assert time.monotonic() - paused < 1.5
        assert thread_id in await threads_in(finance_on_a)
        page = await inbox(finance_on_b)
        [row] = [item for item in page["items"] if item["thread_id"] == thread_id]
        assert (row["group"], row["tool"]) == ("finance", "issue_refund")
        assert page["counts"].get("finance", 0) >= 1
        assert set(page["counts"]) <= {"finance", "reviewer"}

    name = f"notes/{uuid.uuid4().hex[:8]}.txt"
    async with http(a, "supervisor1") as supervisor:
        ops_thread = (await supervisor.post("/threads", json={})).raise_for_status().json()["thread_id"]
        body = {
            "assistant_id": "ops",
            "input": {
                "messages": [{"role": "user", "content": phrases.write_file("Release 1.4 is live", name)}]
            },
        }
        (await supervisor.post(f"/threads/{ops_thread}/runs/wait", json=body)).raise_for_status()
    async with (
        signed_in(a, sre) as sre_on_a,
        signed_in(b, sre) as sre_on_b,
        signed_in(b, finance) as finance_on_b,
    ):

        async def ops_listed() -> bool:
            return ops_thread in await threads_in(sre_on_b)

        await until(ops_listed, seconds=10)
        for sre_inbox in (await threads_in(sre_on_a), await threads_in(sre_on_b)):
            assert ops_thread in sre_inbox
            assert thread_id not in sre_inbox
        assert ops_thread not in await threads_in(finance_on_b)
        assert (await sre_on_b.get("/inbox", params={"group": "finance"})).json()["items"] == []

        refused = await sre_on_b.post(f"/threads/{thread_id}/runs", json=approve(interrupt_id))
        assert refused.status_code == 403
        assert business.payments.refunds_for(order_id) == []
        (await finance_on_b.post(f"/threads/{thread_id}/runs", json=approve(interrupt_id))).raise_for_status()

    async def refunded() -> list:
        return business.payments.refunds_for(order_id)

    assert [r["amount"] for r in await until(refunded, seconds=30)] == [300.0]
