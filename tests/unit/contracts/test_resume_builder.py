"""`hitl.contracts.asks`: decisions bound to tool call ids, whatever order they come in."""

from __future__ import annotations

import pytest

from hitl.contracts.asks import ResumeError, build_resume

BATCH = {
    "id": "a" * 32,
    "value": {
        "action_requests": [
            {"name": "issue_refund", "tool_call_id": "call_refund", "args": {}},
            {"name": "send_email", "tool_call_id": "call_email", "args": {}},
        ]
    },
}
PER_CALL = [
    {"id": "b" * 32, "value": {"type": "tool_approval", "tool_call_id": "call_write"}},
    {"id": "c" * 32, "value": {"type": "tool_approval", "tool_call_id": "call_sql"}},
]
APPROVE = {"type": "approve"}
REJECT = {"type": "reject", "message": "no"}


def test_a_batch_follows_its_own_order_not_the_callers():
    """batched: decisions given email-first still land refund-first, each on its own call."""
    resume = build_resume([BATCH], {"call_email": REJECT, "call_refund": APPROVE})
    assert resume == {"a" * 32: {"decisions": [APPROVE, REJECT]}}


def test_per_call_answers_are_keyed_by_interrupt_id():
    """per-call: each decision goes to the interrupt of its call; undecided ones stay pending."""
    assert build_resume(PER_CALL, {"call_sql": REJECT}) == {"c" * 32: REJECT}


@pytest.mark.parametrize(
    ("decided", "match"),
    [({"call_refund": APPROVE}, "call_email"), ({"call_nope": APPROVE}, "call_nope")],
)
def test_partial_batches_and_unknown_calls_are_refused(decided, match):
    """mistakes: a half-decided batch or an unknown call id is an error naming the call."""
    with pytest.raises(ResumeError, match=match):
        build_resume([BATCH, *PER_CALL], decided)
