"""The shared inbox table repaired from the runtime when a replica died between a pause and its row.

A replica that lets a run through marks its thread and writes the thread's rows once the run
pauses; killed in between, it leaves the runtime paused, no row, and the watchers' shared
watermark (`hitl_inbox_seen`) before the pause. That state is made here as such a kill leaves it:
the pause through A, A killed with SIGKILL, its rows and the watermark's advance undone in the
layer's store. B's next watcher pass lists the approval again; it is answered once.
"""

from __future__ import annotations

import signal
from datetime import UTC, datetime

import pytest
from sqlalchemy import delete, text

from server.ledger import inbox_counts
from server.ledger.storage import inbox, inbox_read
from tests.conftest import add_order
from tests.replicas.conftest import approve, http, inbox_threads, pause_refund, until

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def replica_env() -> dict[str, str]:
    return {"HITL_WATCH_INTERVAL": "1"}


def rows(layer, thread_id: str) -> int:
    with layer.connect() as conn:
        return conn.scalar(text("SELECT count(*) FROM hitl_inbox WHERE thread_id = :t"), {"t": thread_id})


def unwritten(layer, thread_id: str, before: str) -> int:
    """Undo what A wrote of the pause (rows, their counts, which record they came from) and the watermark.

    B may list the thread again at any moment (A's mark reached it; its watcher passes every second).
    The first statement takes the thread's `hitl_inbox_read` row, the one every writer of its rows
    upserts first (`inbox_table_rows.replace_rows`): a write of B's under way is waited for and its
    rows deleted next, and B's next one waits for this transaction. The rows left are counted inside it.
    """
    with layer.begin() as conn:
        conn.execute(delete(inbox_read).where(inbox_read.c.thread_id == thread_id))
        gone = (
            conn.execute(
                delete(inbox)
                .where(inbox.c.thread_id == thread_id)
                .returning(inbox.c.decided_by, inbox.c.owner, inbox.c.tool)
            )
            .mappings()
            .all()
        )
        inbox_counts.changed(conn, [], gone)
        conn.execute(text("UPDATE hitl_inbox_seen SET seen_until = :s"), {"s": before})
        return conn.scalar(text("SELECT count(*) FROM hitl_inbox WHERE thread_id = :t"), {"t": thread_id})


async def test_a_pause_whose_replica_died_before_its_row_is_listed_by_the_next_watcher_pass(
    replicas, business, layer
):
    """repair: no row, watermark before the pause, A dead: B lists it within seconds; one refund."""
    a, b = replicas.urls
    order_id = add_order(business, 650)
    before = datetime.now(UTC).isoformat()
    async with http(a, "requester1") as requester:
        thread_id, interrupt_id = await pause_refund(requester, order_id)
    replicas.stop(0, signal.SIGKILL)
    assert unwritten(layer, thread_id, before) == 0
    async with http(b, "supervisor1") as on_b:

        async def listed() -> bool:
            return thread_id in await inbox_threads(on_b)

        await until(listed, seconds=20, every=0.2)
        assert rows(layer, thread_id) == 1
        (await on_b.post(f"/threads/{thread_id}/runs", json=approve(interrupt_id))).raise_for_status()
        assert rows(layer, thread_id) == 0

        async def refunded() -> list:
            return business.payments.refunds_for(order_id)

        refunds = await until(refunded, seconds=30)
    assert [r["amount"] for r in refunds] == [650.0]
