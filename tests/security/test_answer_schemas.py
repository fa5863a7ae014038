"""GET /threads/{thread_id}/answer-schemas: the full answer schemas, for whoever may see the thread.

An approval's interrupt publishes its answer schema by reference (a few dozen bytes, not 3.5 KB in
every checkpoint, stream event and thread record); the server serves the whole one here. Attacked
as the thread's requester, a reviewer, another requester and an anonymous caller, and with ids
that are not threads: only the owner and staff read it, nobody gets a 5xx, and reading it changes
nothing (no refund, the approval still waits and is still answered once).
"""

from __future__ import annotations

import json

import pytest

from agents.offline import phrases
from hitl.contracts.published_schema import ANSWER_SCHEMAS, REFERENCE_KEY
from tests.server.helpers import APPROVE, decisions, only_pending, start

pytestmark = pytest.mark.server


def path(thread_id: str) -> str:
    return ANSWER_SCHEMAS.format(thread_id=thread_id)


@pytest.fixture
async def paused(requester, server_order) -> tuple[str, str, str]:
    """requester1's refund of 777 waiting for a supervisor: its thread, interrupt and order ids."""
    order_id = server_order(777)
    thread_id, thread = await start(requester, phrases.refund_in_full(order_id))
    return thread_id, only_pending(thread)["id"], order_id


async def test_the_interrupt_carries_a_reference_and_the_owner_and_staff_read_the_whole_schema(
    requester, http_as, paused
):
    """published: a reference of under 100 bytes; served: the whole contract, the same for each reader."""
    thread_id, interrupt_id, _ = paused
    published = only_pending(await requester.threads.get(thread_id))["response_schema"]
    assert published == {"title": "BatchedResponse", REFERENCE_KEY: ANSWER_SCHEMAS}
    assert len(json.dumps(published)) < 100
    served = []
    for user in ("requester1", "reviewer1", "supervisor1"):
        answer = await http_as(user).get(path(thread_id))
        assert answer.status_code == 200, (user, answer.text)
        served.append(answer.json()["schemas"])
    assert served[0] == served[1] == served[2]
    schema = served[0][interrupt_id]
    assert schema["properties"]["decisions"]["minItems"] == 1
    [call] = schema["properties"]["decisions"]["prefixItems"]
    edit = next(branch for branch in call["oneOf"] if branch["properties"]["type"]["const"] == "edit")
    assert edit["properties"]["edited_action"]["properties"]["args"]["additionalProperties"] is False


@pytest.mark.parametrize(
    ("user", "status"), [("requester2", 404), (None, 401)], ids=["another-requester", "anonymous"]
)
async def test_others_learn_nothing_and_nothing_changes(
    http_as, paused, server_services, supervisor, user, status
):
    """another requester: the 404 of no such thread; anonymous: 401. The refund waits, then runs once."""
    thread_id, interrupt_id, order_id = paused
    answer = await http_as(user).get(path(thread_id))
    assert answer.status_code == status, answer.text
    assert interrupt_id not in answer.text
    assert "decisions" not in answer.text
    if status == 404:
        nobody = "00000000-0000-4000-8000-000000000000"
        unknown = await http_as(user).get(path(nobody))
        assert unknown.status_code == 404
        said = unknown.json()["detail"].replace(nobody, "T")
        assert said == answer.json()["detail"].replace(thread_id, "T")
    assert server_services.payments.refunds_for(order_id) == []
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [777.0]


@pytest.mark.parametrize("thread_id", ["not-a-thread", "..%2F..%2Finbox", "x" * 2000, "%00"])
async def test_an_id_that_is_no_thread_is_a_404_never_a_5xx(http_as, thread_id):
    """odd ids, as staff: 404 naming no thread, never a server error."""
    answer = await http_as("reviewer1").get(path(thread_id))
    assert answer.status_code == 404, answer.text[:300]


async def test_a_form_and_an_idle_thread(requester, http_as):
    """a tool's own form is served whole, as the engine also publishes it; an idle thread has none."""
    thread_id, thread = await start(requester, phrases.FIND_AND_BOOK_CHEAPEST, "travel")
    form = only_pending(thread)
    served = (await http_as("requester1").get(path(thread_id))).json()["schemas"]
    assert served == {form["id"]: form["response_schema"]}
    assert served[form["id"]]["properties"]["seat_class"]["enum"] == ["economy", "premium", "business"]
    idle = (await requester.threads.create())["thread_id"]
    answer = await http_as("requester1").get(path(idle))
    assert (answer.status_code, answer.json()) == (200, {"schemas": {}})


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("user", ["requester1", "reviewer1", None])
async def test_the_route_only_reads(http_as, paused, server_services, requester, method, user):
    """anything but GET, by anyone: a 4xx, never a 5xx; the approval still waits, nothing is refunded."""
    thread_id, interrupt_id, order_id = paused
    answer = await http_as(user).request(method, path(thread_id), json={"schemas": {interrupt_id: {}}})
    assert 400 <= answer.status_code < 500, answer.text[:300]
    assert only_pending(await requester.threads.get(thread_id))["id"] == interrupt_id
    assert server_services.payments.refunds_for(order_id) == []
