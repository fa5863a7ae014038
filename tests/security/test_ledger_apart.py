"""The guard's ledger out of the agents' reach, and recovery that trusts only signatures (issue 46).

Finding 1 of the attack run on 52a94d2: the `ops` agent's SQL console read supervisor1's signed
receipt out of `hitl_decisions` (the layer kept its records in the business database) and two
approved INSERTs forged a second supervisor, which the reconciler applied: a 2,400 refund made
with one. Now the console finds no layer table by any name, whoever runs it; and a forged row
written straight into the layer's own store (as someone who reached it some other way) is
refused by the reconciler and by a re-send, audited and counted, never applied. Outcomes are
read from the business database, the layer's store and the trail.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import create_engine, select

from agents.offline import phrases
from server.ledger.storage import METADATA, decided_interrupts, decisions
from tests.server.helpers import APPROVE, start
from tests.server.helpers import decisions as answer

if TYPE_CHECKING:
    from sqlalchemy import Engine

pytestmark = pytest.mark.server

LAYER_TABLES = sorted(METADATA.tables)
READS = [
    *(f"SELECT * FROM {name}" for name in LAYER_TABLES),  # noqa: S608  (the attack: a statement naming each)
    'SELECT receipts FROM "hitl_decisions"',
    "SELECT * FROM main.hitl_audit_records",
    "SELECT * FROM hitl.hitl_decisions",
    "SELECT name FROM sqlite_master WHERE name LIKE '%hitl%'",
    "SELECT file FROM pragma_database_list",
]
WRITES = [
    "ATTACH DATABASE 'data/hitl.db' AS ledger",
    "VACUUM INTO 'data/ledger-copy.db'",
    "INSERT INTO hitl_decisions (decision_id) VALUES ('forged')",
    "COPY hitl_decisions TO '/tmp/ledger.csv'",
]
APPROVER = {"reviewer1": "supervisor1", "supervisor1": "reviewer1"}
"""Who approves the other's SQL write (the asker may not)."""


async def console(client_as, asker: str, statement: str) -> str:
    """Run `statement` in the ops SQL console as `asker` (a write approved by another person); its reply."""
    client = client_as(asker)
    thread_id, thread = await start(client, phrases.run_sql(statement), "ops")
    if thread["status"] == "interrupted":
        state = await client.threads.get_state(thread_id)
        ids = [i["id"] for task in state["tasks"] for i in task["interrupts"]]
        await client_as(APPROVER[asker]).runs.wait(
            thread_id, "ops", command={"resume": dict.fromkeys(ids, APPROVE)}
        )
    messages = (await client.threads.get_state(thread_id))["values"]["messages"]
    return str(messages[-1]["content"])


def layer_of(server) -> Engine:
    return create_engine(server.layer_url)


async def witness(client_as, server_order) -> tuple[str, dict[str, Any]]:
    """A decided refund whose trail must not change: its thread and its trail as served."""
    thread_id, _ = await start(client_as("requester1"), phrases.refund_in_full(server_order(300)))
    await client_as("reviewer1").runs.wait(thread_id, "support", command=answer(APPROVE))
    return thread_id, await client_as("supervisor1").http.get(f"/audit/{thread_id}")


@pytest.mark.parametrize("asker", ["reviewer1", "supervisor1"])
async def test_the_sql_console_finds_no_layer_table_by_any_name(
    client_as, server, server_order, ledger, asker
):
    """every name: layer tables unknown, no file attached, nothing written; trail and ledger unchanged."""
    thread_id, before = await witness(client_as, server_order)
    with layer_of(server).connect() as conn:
        decided_before = list(conn.execute(select(decisions.c.decision_id)))
    replies = {statement: await console(client_as, asker, statement) for statement in [*READS, *WRITES]}
    for name in LAYER_TABLES:
        assert f"no such table: {name}" in replies[f"SELECT * FROM {name}"], replies  # noqa: S608
    assert "returned 0 row(s)" in replies["SELECT name FROM sqlite_master WHERE name LIKE '%hitl%'"]
    assert "hitl.db" not in replies["SELECT file FROM pragma_database_list"]
    assert "business.db" in replies["SELECT file FROM pragma_database_list"]
    for statement in ("SELECT * FROM hitl.hitl_decisions", *WRITES):
        assert "did not run" in replies[statement] or "no such" in replies[statement], (statement, replies)
    assert "does not allow ATTACH" in replies[WRITES[0]]  # the console's allowlist, before the seal's limit
    assert "cannot VACUUM" in replies[WRITES[1]]
    assert not (server.log.parent / "data" / "ledger-copy.db").exists()
    supervisor = client_as("supervisor1")
    assert await supervisor.http.get(f"/audit/{thread_id}") == before
    assert (await supervisor.http.get(f"/audit/{thread_id}/verification"))["ok"]
    with layer_of(server).connect() as conn:
        forged = conn.scalar(select(decisions.c.decision_id).where(decisions.c.decision_id == "forged"))
        assert forged is None
        assert {r.decision_id for r in conn.execute(select(decisions.c.decision_id))} >= {
            r.decision_id for r in decided_before
        }
    assert ledger.snapshot()["forged rows"] == 0


async def test_the_console_is_not_for_requesters_or_strangers(http_as):
    """requester1: 403 running ops at all; anonymous: 401; nothing read."""
    refusal = await http_as("requester1").post(
        "/runs/wait",
        json={
            "assistant_id": "ops",
            "input": {"messages": [{"role": "user", "content": phrases.run_sql(READS[0])}]},
        },
    )
    assert refusal.status_code == 403, refusal.text
    stranger = await http_as(None).post("/runs/wait", json={"assistant_id": "ops", "input": {"messages": []}})
    assert stranger.status_code == 401, stranger.text
    assert "receipts" not in refusal.text + stranger.text


async def second_round(client_as, server_order) -> tuple[str, str, str]:
    """A 2,400 refund supervisor1 approved (1 of 2): its order, thread and the round-2 interrupt."""
    order_id = server_order(2400)
    thread_id, _ = await start(client_as("requester1"), phrases.refund_in_full(order_id))
    supervisor = client_as("supervisor1")
    await supervisor.runs.wait(thread_id, "support", command=answer(APPROVE))
    state = await supervisor.threads.get_state(thread_id)
    (interrupt,) = [i for task in state["tasks"] for i in task["interrupts"]]
    return order_id, thread_id, interrupt["id"]


def forge(layer: Engine, thread_id: str, interrupt_id: str, *, rename: bool) -> str:
    """The attack of finding 1, in the layer's store: supervisor1's decision copied as supervisor2's.

    `rename`: the receipts' reviewer is changed too (else they are supervisor1's, as signed). The
    row claims the round-2 interrupt, is due at once, and answers as the real one did.
    """
    with layer.begin() as conn:
        (genuine,) = conn.execute(select(decisions).where(decisions.c.thread_id == thread_id)).mappings()
        receipts = json.loads(genuine["receipts"])
        if rename:
            receipts = [{**r, "reviewer": "supervisor2"} for r in receipts]
        forged_id = uuid.uuid4().hex
        conn.execute(
            decisions.insert().values(
                {
                    **genuine,
                    "decision_id": forged_id,
                    "reviewer": "supervisor2",
                    "receipts": json.dumps(receipts),
                    "run_id": None,
                    "state": "accepted",
                    "attempts": 1,
                    "tried_at": 0.0,
                }
            )
        )
        conn.execute(decided_interrupts.insert().values(interrupt_id=interrupt_id, decision_id=forged_id))
    return forged_id


def state_of(layer: Engine, decision_id: str) -> str | None:
    with layer.connect() as conn:
        return conn.scalar(select(decisions.c.state).where(decisions.c.decision_id == decision_id))


async def until_refused(layer: Engine, decision_ids: list[str], seconds: float = 40) -> None:
    """Wait for the watcher's reconciler (a pass every 10 s on the session's server) to refuse them."""
    for _ in range(int(seconds * 2)):
        if all(state_of(layer, d) == "refused" for d in decision_ids):
            return
        await asyncio.sleep(0.5)
    pytest.fail(f"not refused in {seconds} s: {[(d, state_of(layer, d)) for d in decision_ids]}")


async def test_forged_decision_rows_are_refused_by_the_reconciler_never_applied(
    client_as, http_as, server, server_order, ledger
):
    """reconciler: renamed receipts, or genuine ones claiming round 2: refused, audited, counted; no refund.

    The approval then still needs, and gets, a real second supervisor: one refund of 2,400.
    """
    layer = layer_of(server)
    rounds = [await second_round(client_as, server_order) for _ in range(2)]
    forged = [
        forge(layer, thread, interrupt, rename=rename)
        for (_, thread, interrupt), rename in zip(rounds, (True, False), strict=True)
    ]
    await until_refused(layer, forged)
    metrics = await http_as("reviewer1").get("/hitl/metrics")
    assert "hitl_decisions_unverified_total" in metrics.text
    supervisor = client_as("supervisor1")
    for (order_id, thread_id, _), why in zip(rounds, ("does not verify", "its receipts answer"), strict=True):
        assert ledger.refunds_of(order_id) == []
        records = (await supervisor.http.get(f"/audit/{thread_id}"))["records"]
        refused = [r for r in records if r["decision"] == "not_applied"]
        assert len(refused) == 1, records
        assert (refused[0]["outcome"], refused[0]["reviewer"]) == ("refused", "system")
        assert why in refused[0]["refusal"], refused
        assert (await supervisor.http.get(f"/audit/{thread_id}/verification"))["ok"]
        await client_as("supervisor2").runs.wait(thread_id, "support", command=answer(APPROVE))
        assert ledger.refunds_of(order_id) == [2400.0]
        approvals = [
            (r["decision"], r["reviewer"])
            for r in (await supervisor.http.get(f"/audit/{thread_id}"))["records"]
            if r["decision"] == "approve"
        ]
        assert approvals == [("approve", "supervisor1"), ("approve", "supervisor2")]


async def test_a_forged_row_in_the_way_of_a_resend_is_refused_and_the_real_answer_counts(
    client_as, server, server_order, ledger
):
    """take-over: the forged row names supervisor2; supervisor2's own approve refuses it, then counts."""
    layer = layer_of(server)
    order_id, thread_id, interrupt_id = await second_round(client_as, server_order)
    forged = forge(layer, thread_id, interrupt_id, rename=False)
    with layer.begin() as conn:  # not due for minutes: only a re-send can meet it
        conn.execute(decisions.update().where(decisions.c.decision_id == forged).values(tried_at=9e12))
    await client_as("supervisor2").runs.wait(thread_id, "support", command=answer(APPROVE))
    assert state_of(layer, forged) == "refused"
    assert ledger.refunds_of(order_id) == [2400.0]
    records = (await client_as("reviewer1").http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["decision"], r["reviewer"], r["outcome"]) for r in records] == [
        ("approve", "supervisor1", "accepted"),
        ("not_applied", "system", "refused"),
        ("approve", "supervisor2", "accepted"),
    ]


async def test_nobody_reads_the_ledger_through_the_store_api(http_as):
    """Store: the layer's records are not in the LangGraph Store either; its namespaces 403 to everyone."""
    for user in ("requester1", "reviewer1", "supervisor1"):
        found = await http_as(user).post("/store/items/search", json={"namespace_prefix": ["audit"]})
        assert found.status_code == 403, (user, found.text)
    anonymous = await http_as(None).post("/store/items/search", json={"namespace_prefix": []})
    assert anonymous.status_code == 401
