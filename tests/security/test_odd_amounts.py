"""Money is finite, positive, in whole cents and at most what was paid: odd amounts are a 422 naming `amount`.

Issue 29, finding 5: a reviewer's edit to `amount: 1e-300` was written as a refund, and the
order then counted as refunded. Each odd edit below is sent by every role at one pending
refund (raw JSON, so NaN, infinities and huge numbers reach the server as typed) and must be
refused before anything is saved: no refund row, the same approval still waiting; then the
real refund goes through.
"""

from __future__ import annotations

import json

import pytest

from agents.offline import phrases
from tests.server.helpers import APPROVE, decisions, only_pending, start

pytestmark = pytest.mark.server

ODD_AMOUNTS = [
    "1e-300",
    "0.001",
    "0.30000000000000004",
    "-0",
    "-0.0",
    "0",
    "-5",
    "1" + "0" * 30,
    '"1e999"',
    '"NaN"',
    "true",
    '"0.001"',
    '"300 "',  # text a lax schema would read as 300: only the canonical form `300` is
    '"3e2"',
    '"+300"',
    '" 300"',
    '"300.00e0"',
    "[1]",
    "{}",
]
"""As raw JSON text: odd amounts a JSON parser takes, which the amount's own rule must refuse."""
NOT_JSON = ["NaN", "Infinity", "-Infinity", "1e400", "9" * 400]
"""Amounts no JSON parser of the server takes: refused as a malformed body (422) before anything else."""


def raw_edit(order_id: str, amount_json: str) -> str:
    """A batched resume editing the refund to `amount_json`, as raw JSON text."""
    args = f'{{"order_id": {json.dumps(order_id)}, "amount": {amount_json}, "reason": "odd"}}'
    edit = f'{{"type": "edit", "edited_action": {{"name": "issue_refund", "args": {args}}}}}'
    return f'{{"assistant_id": "support", "command": {{"resume": {{"decisions": [{edit}]}}}}}}'


@pytest.mark.parametrize("user", ["reviewer1", "supervisor1", "requester1", None])
async def test_odd_amount_edits_refund_nothing_and_the_approval_still_waits(
    client_as, http_as, server_order, ledger, user
):
    """every odd amount: 422 naming amount (requester 403, anonymous 401); no refund; then 300 is refunded."""
    requester = client_as("requester1")
    order_id = server_order(300)
    thread_id, thread = await start(requester, phrases.refund_amount(300, order_id))
    interrupt_id = only_pending(thread)["id"]
    http = http_as(user)
    for amount in ODD_AMOUNTS + NOT_JSON:
        response = await http.post(
            f"/threads/{thread_id}/runs/wait",
            content=raw_edit(order_id, amount),
            headers={"content-type": "application/json"},
        )
        said = f"{user} amount={amount[:40]}: {response.status_code} {response.text[:300]}"
        if user is None:
            assert response.status_code == 401, said
        elif amount in NOT_JSON:
            assert response.status_code == 422, said
        elif user == "requester1":
            assert response.status_code == 403, said
        else:
            assert response.status_code == 422, said
            assert "amount" in response.text, said
        assert ledger.refunds_of(order_id) == [], said
    after = await requester.threads.get(thread_id)
    assert (after["status"], only_pending(after)["id"]) == ("interrupted", interrupt_id)
    await client_as("supervisor1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert ledger.refunds_of(order_id) == [300.0]


@pytest.mark.parametrize("user", ["reviewer1", "supervisor1"])
async def test_an_edit_above_what_was_paid_is_422_naming_amount(
    client_as, http_as, server_order, ledger, user
):
    """edit to 350 on an order paid 300: 422 naming amount and what was paid; nothing refunded."""
    requester = client_as("requester1")
    order_id = server_order(300)
    thread_id, _ = await start(requester, phrases.refund_amount(200, order_id))
    edit = {
        "type": "edit",
        "edited_action": {
            "name": "issue_refund",
            "args": {"order_id": order_id, "amount": 350, "reason": "more"},
        },
    }
    response = await http_as(user).post(
        f"/threads/{thread_id}/runs/wait", json={"assistant_id": "support", "command": decisions(edit)}
    )
    assert response.status_code == 422, response.text
    assert "amount 350 is more than order" in response.text, response.text
    assert "was paid (300)" in response.text, response.text
    assert ledger.refunds_of(order_id) == []
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"
    fine = {
        "type": "edit",
        "edited_action": {
            "name": "issue_refund",
            "args": {"order_id": order_id, "amount": 299.99, "reason": "in cents"},
        },
    }
    await client_as(user).runs.wait(thread_id, "support", command=decisions(fine))
    assert ledger.refunds_of(order_id) == [299.99]
