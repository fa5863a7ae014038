"""The end-to-end server scenarios again, with the served agents' model behind `langchain-openai`.

The wire `server` (see conftest) runs `MODEL=openai:scripted` against the scripted endpoint:
refunds approved, edited and rejected, a streamed run, the flight-booking form from a subagent,
per-call ops interrupts answered at once and one at a time, sign-off requests; and, picked from
other modules, a batched turn of two calls decided by tool call id and an ask_user answered by
its owner.
"""

import pytest

from agents.offline import phrases
from tests.server import test_ops_server, test_support_server, test_travel_server
from tests.server.helpers import start
from tests.server.test_auth import test_only_the_owner_answers_ask_user
from tests.server.test_resume_validation import test_decisions_bound_by_tool_call_id_reach_the_right_call
from tests.wire.rerun import collect_again

pytestmark = pytest.mark.server

__all__ = [
    "test_decisions_bound_by_tool_call_id_reach_the_right_call",
    "test_only_the_owner_answers_ask_user",
]

globals().update(collect_again(test_support_server, test_travel_server, test_ops_server))


async def test_the_served_agents_reach_their_model_over_http(requester, server_order, through_the_wire):
    """wire: a run on the wire server asks the endpoint, and a run streamed in messages mode streams it."""
    await start(requester, phrases.refund_amount(50, server_order(50)))
    assert through_the_wire.served()["requests"] >= 2
    thread = await requester.threads.create()
    said = {"messages": [{"role": "user", "content": phrases.refund_amount(40, server_order(40))}]}
    async for _ in requester.runs.stream(
        thread["thread_id"], "support", input=said, stream_mode="messages-tuple"
    ):
        pass
    assert through_the_wire.served()["streamed"] >= 2
