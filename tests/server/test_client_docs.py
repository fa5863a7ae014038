"""docs/reviewing.md, "From your own client": its HTTP request and its SDK code, run against the server.

Each refunds a paused refund once: the request as written (the server's URL, the thread and the
interrupt filled in) and the SDK code as written (run as is, with `thread_id` and `tool_call_id`
bound and the URL moved to the test's server).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import httpx
import pytest

from agents.offline import phrases
from server.http.outgoing import tls
from tests.server.helpers import only_pending, start

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "docs" / "reviewing.md").read_text().split("## From your own client: what to send", 1)[1]


def block(fence: str) -> str:
    """The first code block of the section opened with ```<fence>."""
    return SECTION.split(f"```{fence}\n", 1)[1].split("```", 1)[0]


async def paused_refund(requester, server_order) -> tuple[str, dict]:
    """A 150 refund requester1 asked for: it waits for a reviewer."""
    thread_id, thread = await start(requester, phrases.refund_amount(150, server_order(150)))
    return thread_id, only_pending(thread)


async def test_the_http_request_as_written_refunds_once(server, requester, server_order, server_services):
    """POST /threads/{id}/runs/wait with the documented body, as reviewer1: 200, one refund."""
    thread_id, pending = await paused_refund(requester, server_order)
    line, _, body = block("").strip().partition("\n")
    method, path = line.split()
    headers = dict(h.split(": ", 1) for h in body.splitlines() if ": " in h and not h.startswith("{"))
    sent = body.splitlines()[-1].replace("<graph>", "support").replace("<interrupt id>", pending["id"])
    async with httpx.AsyncClient(verify=tls(), timeout=60) as http:
        answer = await http.request(
            method,
            server.url + path.replace("{thread_id}", thread_id),
            headers={"Authorization": headers["Authorization"].replace("<token>", "dev-reviewer1")},
            json=json.loads(sent),
        )
    assert answer.status_code == 200, answer.text
    order = pending["value"]["action_requests"][0]["args"]["order_id"]
    assert [r["amount"] for r in server_services.payments.refunds_for(order)] == [150]


async def test_the_python_sdk_code_as_written_refunds_once(server, requester, server_order, server_services):
    """the documented SDK code (build_resume by tool call id), run as reviewer1: one refund, thread idle."""
    thread_id, pending = await paused_refund(requester, server_order)
    tool_call_id = pending["value"]["action_requests"][0]["tool_call_id"]
    code = block("python").replace("http://127.0.0.1:2024", server.url).replace('"<graph>"', '"support"')
    scope = {"thread_id": thread_id, "tool_call_id": tool_call_id}
    exec(compile("async def documented():\n" + textwrap.indent(code, "    "), "reviewing.md", "exec"), scope)  # noqa: S102
    await scope["documented"]()
    order = pending["value"]["action_requests"][0]["args"]["order_id"]
    assert [r["amount"] for r in server_services.payments.refunds_for(order)] == [150]
    assert (await requester.threads.get(thread_id))["status"] == "idle"


WITHDRAWING = (
    (ROOT / "docs" / "reviewing.md").read_text().split("## Withdrawing a request and deleting a thread", 1)[1]
)


async def test_the_withdrawal_as_written_turns_the_refund_down_and_the_thread_may_go(
    server, requester, server_order, server_services
):
    """docs/reviewing.md's withdrawal, as the owner: 200, no refund; then DELETE 204 and the trail stays."""
    thread_id, pending = await paused_refund(requester, server_order)
    line, _, body = WITHDRAWING.split("```http\n", 1)[1].split("```", 1)[0].strip().partition("\n")
    method, path = line.split()
    headers = dict(h.split(": ", 1) for h in body.splitlines() if ": " in h and not h.startswith("{"))
    async with httpx.AsyncClient(verify=tls(), timeout=60) as http:
        answer = await http.request(
            method,
            server.url + path.replace("{thread_id}", thread_id),
            headers={"Authorization": headers["Authorization"].replace("<token>", "dev-requester1")},
            json=json.loads(body.splitlines()[-1]),
        )
        assert answer.status_code == 200, answer.text
        assert [r["decision"] for r in answer.json()["withdrawn"]] == ["withdrawn"]
        (run,) = await requester.runs.list(thread_id, limit=1)
        await requester.runs.join(thread_id, run["run_id"])
        gone = await http.delete(
            f"{server.url}/threads/{thread_id}", headers={"Authorization": "Bearer dev-requester1"}
        )
        assert gone.status_code == 204, gone.text
        trail = await http.get(
            f"{server.url}/audit/{thread_id}", headers={"Authorization": "Bearer dev-reviewer1"}
        )
    assert [r["decision"] for r in trail.json()["records"]] == ["withdrawn", "thread_deleted"]
    order = pending["value"]["action_requests"][0]["args"]["order_id"]
    assert server_services.payments.refunds_for(order) == []
