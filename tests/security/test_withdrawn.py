"""A supervisor's state write that takes a pending approval away is a decision on record: `withdrawn`, signed.

Issue 29, finding 7: `POST /threads/{id}/state` by a supervisor dropped a pending refund with
only a `state_write` in the audit. Now each approval that waited before the write and not
after it has a receipt (decision `withdrawn`, by whom, why) signed by the server and chained
into the thread's trail; the refund is never written. A requester and a reviewer may not
write state (403), an anonymous caller is 401; their attempts leave the approval waiting.
"""

from __future__ import annotations

import pytest

from agents.offline import phrases
from tests.security.outcomes import headers
from tests.server.helpers import only_pending, start

pytestmark = pytest.mark.server


@pytest.mark.parametrize("user", ["requester1", "reviewer1", None])
async def test_only_a_supervisor_may_write_state_over_a_pending_approval(
    client_as, http_as, server_order, ledger, user
):
    """requester/reviewer 403, anonymous 401: the refund still waits on the same interrupt, not refunded."""
    requester = client_as("requester1")
    order_id = server_order(300)
    thread_id, thread = await start(requester, phrases.refund_amount(300, order_id))
    interrupt_id = only_pending(thread)["id"]
    answer = await http_as(user).post(f"/threads/{thread_id}/state", json={"values": {"messages": []}})
    assert answer.status_code == (401 if user is None else 403), answer.text
    after = await requester.threads.get(thread_id)
    assert (after["status"], only_pending(after)["id"]) == ("interrupted", interrupt_id)
    assert ledger.refunds_of(order_id) == []
    assert headers(user) == ({} if user is None else headers(user))


async def test_a_supervisors_state_write_records_a_signed_withdrawal(
    client_as, http_as, server_order, ledger
):
    """supervisor: accepted; the refund is withdrawn on record (who, why, signed, chained); never run."""
    requester = client_as("requester1")
    order_id = server_order(300)
    thread_id, thread = await start(requester, phrases.refund_amount(300, order_id))
    interrupt_id = only_pending(thread)["id"]
    supervisor = http_as("supervisor1")
    written = await supervisor.post(
        f"/threads/{thread_id}/state",
        json={"values": {"messages": [{"role": "user", "content": "never mind"}]}},
    )
    assert written.status_code == 200, written.text
    records = (await supervisor.get(f"/audit/{thread_id}")).json()["records"]
    withdrawn = [r for r in records if r["decision"] == "withdrawn"]
    assert len(withdrawn) == 1, records
    [record] = withdrawn
    assert (record["interrupt_id"], record["tool"], record["reviewer"]) == (
        interrupt_id,
        "issue_refund",
        "supervisor1",
    )
    assert record["requested_args"]["amount"] == 300
    assert "state write" in record["message"]
    assert record["signed"].count(".") == 2  # a compact JWS
    assert record["prev_hash"], "chained after the state_write record"
    check = (await supervisor.get(f"/audit/{thread_id}/verification")).json()
    assert check["trail_problems"] == [], check
    assert [r["verified"] for r in check["receipts"] if r["decision"] == "withdrawn"] in ([], [True]), check
    assert ledger.refunds_of(order_id) == []
    state = await requester.threads.get_state(thread_id)
    assert not [i for t in state["tasks"] for i in t["interrupts"] if i["id"] == interrupt_id]
