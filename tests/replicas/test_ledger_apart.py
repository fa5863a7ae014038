"""On PostgreSQL the layer's records are a database the business role may not even connect to.

Replicas keep the business data in `<set>_business`, owned by a role of its own (no superuser), and
the layer's records in `<set>_layer`, with `CONNECT` revoked from everyone else
(`server.runtime.replicas.ReplicaSet.create_databases`, as `deploy/` does). The ops agent's SQL console
runs as the business role: it finds no layer table, cannot read the server's files, copy out,
or load an extension that reaches another database (its allowlist refuses them first; the role's
privileges refuse them too), and a connection of its role to the layer's database is refused.
The trail of a decided refund is unchanged after every attempt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from agents.offline import phrases
from server.ledger.storage import METADATA, decisions
from tests.conftest import add_order
from tests.replicas.conftest import approve, audit, http, pause_refund

if TYPE_CHECKING:
    import httpx

pytestmark = pytest.mark.server

READS = [
    "SELECT * FROM hitl_decisions",
    'SELECT receipts FROM public."hitl_audit_records"',
    "SELECT tablename FROM pg_catalog.pg_tables WHERE tablename LIKE 'hitl%'",
    "SELECT pg_read_file('/etc/hostname')",
]
WRITES = [
    "COPY (SELECT 1) TO '/tmp/ledger.csv'",
    "CREATE EXTENSION dblink",
    "INSERT INTO hitl_decisions (decision_id) VALUES ('forged')",
]


async def console(asker: httpx.AsyncClient, approver: httpx.AsyncClient, statement: str) -> str:
    """Run `statement` in the ops console as `asker` (a write approved by `approver`); its reply."""
    thread_id = (await asker.post("/threads", json={})).raise_for_status().json()["thread_id"]
    body = {
        "assistant_id": "ops",
        "input": {"messages": [{"role": "user", "content": phrases.run_sql(statement)}]},
    }
    (await asker.post(f"/threads/{thread_id}/runs/wait", json=body)).raise_for_status()
    state = (await asker.get(f"/threads/{thread_id}/state")).raise_for_status().json()
    if ids := [i["id"] for task in state["tasks"] for i in task["interrupts"]]:
        resume = {"assistant_id": "ops", "command": {"resume": {i: {"type": "approve"} for i in ids}}}
        (await approver.post(f"/threads/{thread_id}/runs/wait", json=resume)).raise_for_status()
        state = (await asker.get(f"/threads/{thread_id}/state")).raise_for_status().json()
    return str(state["values"]["messages"][-1]["content"])


async def test_the_business_role_reaches_no_layer_table_file_or_database(replicas, business, layer):
    """every way out of the business database is closed; the decided refund's trail stays as it was."""
    a, b = replicas.urls
    async with (
        http(a, "requester1") as requester,
        http(b, "reviewer1") as reviewer,
        http(a, "supervisor1") as boss,
    ):
        order_id = add_order(business, 300)
        thread_id, interrupt_id = await pause_refund(requester, order_id)
        (
            await reviewer.post(f"/threads/{thread_id}/runs/wait", json=approve(interrupt_id))
        ).raise_for_status()
        before = await audit(boss, thread_id)
        replies = {s: await console(boss, reviewer, s) for s in [*READS, *WRITES]}
        assert 'relation "hitl_decisions" does not exist' in replies[READS[0]], replies
        assert 'relation "public.hitl_audit_records" does not exist' in replies[READS[1]], replies
        assert "returned 0 row(s)" in replies[READS[2]], replies
        assert "does not allow the function pg_read_file()" in replies[READS[3]], (
            replies
        )  # the console's list
        for statement in WRITES:
            assert "did not run" in replies[statement], replies
        assert "does not allow COPY" in replies[WRITES[0]], replies
        assert "does not allow CREATE EXTENSION" in replies[WRITES[1]], replies
        assert await audit(boss, thread_id) == before
        assert (await boss.get(f"/audit/{thread_id}/verification")).json()["ok"]
    assert [r["amount"] for r in business.payments.refunds_for(order_id)] == [300.0]
    with layer.connect() as conn:
        assert conn.scalar(select(func.count()).where(decisions.c.decision_id == "forged")) == 0
    with business.engine.connect() as conn, pytest.raises(DBAPIError, match="permission denied"):
        conn.exec_driver_sql(READS[3])  # and the role's own privileges, past the console
    with business.engine.connect() as conn:
        tables = set(
            conn.exec_driver_sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").scalars()
        )
    assert tables.isdisjoint(METADATA.tables), tables


def test_the_business_role_cannot_connect_to_the_layers_database(replicas):
    """A connection as the business role to `<set>_layer` (and to the runtime's database) is refused."""
    business = make_url(replicas.business_url)
    for database in (f"{replicas.name}_layer", f"{replicas.name}_runtime"):
        url = business.set(drivername="postgresql", database=database).render_as_string(hide_password=False)
        with pytest.raises(psycopg.OperationalError, match="permission denied for database"):
            psycopg.connect(url, connect_timeout=5).close()
