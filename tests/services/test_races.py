"""Two approvals of the same tool call at the same moment, or a replay: exactly one side effect.

Two reviewers approving one interrupt both resume the same node, which runs its tool again with
the same tool call id; a resumed node also runs again from its top. 100 rounds per backend, each
round two threads released together by a barrier.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agents import support
from agents.offline import phrases
from agents.settings import DemoSettings
from hitl.gate.caller import in_process
from services.errors import BusinessRuleError
from tests.conftest import add_order

if TYPE_CHECKING:
    from collections.abc import Callable

ROUNDS = 100
GRAPH_ROUNDS = 50


def together(*calls: Callable[[], Any]) -> list[Any]:
    """Run `calls` in threads released at the same instant; each result or the error it raised."""
    barrier = threading.Barrier(len(calls), timeout=30)

    def released(call: Callable[[], Any]) -> Any:
        barrier.wait()
        try:
            return call()
        except BusinessRuleError as refused:
            return refused

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(released, calls))


def test_two_approvals_of_one_refund_write_it_once(services):
    """refund race: both approvals get the same refund back, and the order has one refund row."""
    for _ in range(ROUNDS):
        order_id, call_id = add_order(services, 300), f"call-{uuid.uuid4().hex}"

        def approve(order_id=order_id, call_id=call_id):
            return services.payments.issue_refund(
                tool_call_id=call_id, order_id=order_id, amount=300, reason="x"
            )

        first, second = together(approve, approve)
        assert first == second, (first, second)
        assert [r["refund_id"] for r in services.payments.refunds_for(order_id)] == [first["refund_id"]]


def test_two_different_refunds_of_one_order_write_one(services):
    """refund race: of two tool calls refunding one order at once, one refunds and one is refused."""
    for _ in range(ROUNDS):
        order_id = add_order(services, 300)
        calls = [
            lambda call_id=call_id, order_id=order_id: services.payments.issue_refund(
                tool_call_id=call_id, order_id=order_id, amount=300, reason="x"
            )
            for call_id in (f"call-{uuid.uuid4().hex}", f"call-{uuid.uuid4().hex}")
        ]
        outcomes = together(*calls)
        refused = [o for o in outcomes if isinstance(o, BusinessRuleError)]
        assert len(refused) == 1, outcomes
        assert "already been refunded" in str(refused[0])
        assert len(services.payments.refunds_for(order_id)) == 1


def test_two_approvals_of_one_email_queue_it_once(services):
    """e-mail race: both approvals get the same e-mail back, and the outbox holds it once."""
    for _ in range(ROUNDS):
        to, call_id = f"{uuid.uuid4().hex[:12]}@example.com", f"mail-{uuid.uuid4().hex}"

        def approve(to=to, call_id=call_id):
            return services.outbox.send(tool_call_id=call_id, to=to, subject="Refund", body="On its way")

        first, second = together(approve, approve)
        assert first == second, (first, second)
        assert len(services.outbox.sent_to(to)) == 1


def test_two_reviewers_resuming_one_interrupt_refund_once(services):
    """graph race: two approves of one pending refund, sent to the support agent at once, refund once.

    The one refund is for the tool call the interrupt showed, and both runs report it.
    """
    agent = support.make_graph(checkpointer=InMemorySaver(), services=services, settings=DemoSettings())
    approve = Command(resume={"decisions": [{"type": "approve"}]})
    for _ in range(GRAPH_ROUNDS):
        order_id = add_order(services, 300)
        config = in_process(str(uuid.uuid4()))  # no server: said so
        paused = agent.invoke(
            {"messages": [{"role": "user", "content": phrases.refund_in_full(order_id)}]},
            config,
            version="v2",
        )
        (interrupt,) = paused.interrupts
        call_id = interrupt.value["action_requests"][0]["tool_call_id"]

        outcomes = together(*[lambda config=config: agent.invoke(approve, config)] * 2)

        (refund,) = services.payments.refunds_for(order_id)
        assert refund["tool_call_id"] == call_id
        for outcome in outcomes:
            assert f"(refund {refund['refund_id']})" in outcome["messages"][-1].text, outcome["messages"][-1]
