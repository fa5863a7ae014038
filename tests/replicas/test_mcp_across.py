"""An MCP server's tool on two replicas: paused on one, approved and asked about on the other, run once.

The demo's billing server runs beside the replicas on their shared PostgreSQL business database; the
replicas reach it over streamable HTTP. A void paused through replica 0 is approved through replica 1
and voids the invoice once; a credit note approved on one replica asks its questions, answered on
the other replica each time: no MCP session is held across a pause, so any replica goes on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from agents.offline import phrases
from server.runtime.replicas import LANGHOST, ReplicaSet, free_port, stop
from tests.devserver import TEST_USERS, dev_users
from tests.replicas.conftest import http, inbox_threads, until

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = [pytest.mark.server, pytest.mark.long]

BILLING_PORT = free_port()
AUTHORIZATION = "Bearer replica-billing-token"


@pytest.fixture(scope="module")
def replicas(tmp_path_factory) -> Iterator[ReplicaSet]:
    """Two replicas (as tests/replicas/conftest.py starts them), billing first on their business database."""
    if not LANGHOST.exists():
        pytest.fail(f"{LANGHOST} is missing: `make .venv-replicas/.installed` installs the replica engine")
    env = {
        "HITL_USERS": f"{dev_users()},{TEST_USERS}",
        "HITL_DEV_MODE": "true",
        "MODEL": "scripted",
        "BILLING_MCP_URL": f"http://127.0.0.1:{BILLING_PORT}/mcp",
        "BILLING_MCP_AUTHORIZATION": AUTHORIZATION,
    }
    workdir = tmp_path_factory.mktemp("replicas")
    running = ReplicaSet(f"hitl_test_{uuid.uuid4().hex[:8]}", workdir, env=env)
    running.create_databases(fresh=True)
    billing = None
    try:
        with (workdir / "billing.log").open("wb") as out:
            billing = subprocess.Popen(
                [sys.executable, "-m", "services.billing_mcp", "--port", str(BILLING_PORT)],
                env={
                    **os.environ,
                    "DATABASE_URL": running.business_url,
                    "BILLING_MCP_AUTHORIZATION": AUTHORIZATION,
                },
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        running.start(2)
        yield running
    finally:
        running.stop()
        if billing is not None:
            stop(billing)
        running.drop_databases()


def invoice(business, owner: str = "requester1", amount: float = 150) -> str:
    invoice_id = f"INV-{uuid.uuid4().int % 10**9:09d}"
    business.invoices.add(invoice_id, order_id="A1024", amount=amount, owner=owner)
    return invoice_id


async def ask(client, text: str) -> tuple[str, dict[str, Any]]:
    """As `client`, send `text` to support and wait; the thread id and its one pending interrupt."""
    thread_id = (await client.post("/threads", json={})).raise_for_status().json()["thread_id"]
    body = {"assistant_id": "support", "input": {"messages": [{"role": "user", "content": text}]}}
    (await client.post(f"/threads/{thread_id}/runs/wait", json=body)).raise_for_status()
    return thread_id, await one_pending(client, thread_id)


async def one_pending(client, thread_id: str) -> dict[str, Any]:
    thread = (await client.get(f"/threads/{thread_id}")).raise_for_status().json()
    [pending] = [i for batch in (thread.get("interrupts") or {}).values() for i in batch]
    return pending


async def answer(client, thread_id: str, interrupt_id: str, value: Any) -> None:
    body = {"assistant_id": "support", "command": {"resume": {interrupt_id: value}}}
    (await client.post(f"/threads/{thread_id}/runs/wait", json=body)).raise_for_status()


async def test_an_mcp_void_paused_on_one_replica_is_approved_on_the_other_and_runs_once(replicas, business):
    """void_invoice: paused on 0 (invoice open), in 1's inbox, approved on 1: void once; again: 409."""
    invoice_id = invoice(business)
    async with (
        http(replicas.urls[0], "requester1") as asking,
        http(replicas.urls[1], "reviewer1") as reviewing,
    ):
        thread_id, pending = await ask(asking, phrases.void_invoice(invoice_id))
        assert pending["value"]["action_requests"][0]["mcp"]["server"] == "billing"
        assert business.invoices.get(invoice_id)["status"] == "open"

        async def listed() -> bool:
            return thread_id in await inbox_threads(reviewing)

        await until(listed)
        await answer(reviewing, thread_id, pending["id"], {"decisions": [{"type": "approve"}]})
        assert business.invoices.get(invoice_id)["status"] == "void"
        body = {
            "assistant_id": "support",
            "command": {"resume": {pending["id"]: {"decisions": [{"type": "approve"}]}}},
        }
        again = await reviewing.post(f"/threads/{thread_id}/runs/wait", json=body)
        assert again.status_code == 409
        report = (await reviewing.get(f"/audit/{thread_id}/verification")).json()
        assert report["ok"], report


async def test_billings_questions_are_answered_on_the_other_replica_each_time(replicas, business):
    """issue_credit_note: approved on 1, its two questions answered on 0 then 1; one credit note, verified."""
    invoice_id = invoice(business, amount=90)
    async with (
        http(replicas.urls[0], "requester1") as owner_0,
        http(replicas.urls[1], "requester1") as owner_1,
        http(replicas.urls[1], "reviewer1") as reviewing,
    ):
        thread_id, pending = await ask(owner_0, phrases.credit_invoice(15, invoice_id))
        await answer(reviewing, thread_id, pending["id"], {"decisions": [{"type": "approve"}]})
        why = await one_pending(owner_0, thread_id)
        assert why["value"]["type"] == "mcp_elicitation"
        await answer(owner_0, thread_id, why["id"], {"action": "accept", "content": {"reason": "Scratched"}})
        confirm = await one_pending(owner_1, thread_id)
        assert confirm["value"]["message"] == f"Credit 15 on {invoice_id} (invoice 90)?"
        await answer(owner_1, thread_id, confirm["id"], {"action": "accept", "content": {"confirm": True}})
        [note] = business.invoices.credit_notes(invoice_id)
        assert (note["amount"], note["reason"]) == (15, "Scratched")
        report = (await owner_1.get(f"/audit/{thread_id}/verification")).json()
        assert report["ok"], report
