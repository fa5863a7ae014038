"""An MCP server's question survives the restart of both servers: nothing of the call is kept between rounds.

Its own `langgraph dev` beside its own billing (a restart is the point). The credit note is approved
and billing asks why; then the agent server is killed and billing restarted (its request-state key is
gone with it); after both are back, the owner answers, billing asks again under a new key, and the
call completes once: each round starts over from the first, with the answers given so far.
"""

from __future__ import annotations

import signal
import uuid

import pytest

from agents.offline import phrases
from tests.devserver import DEV_TOKENS, sdk_client, start_dev_server, stop
from tests.mcp_lab.beside import mcp_beside
from tests.server.helpers import APPROVE, decisions, start
from tests.server.mcp_helpers import last_reply, only_question

pytestmark = [pytest.mark.server, pytest.mark.long]


def client(server, user: str):
    return sdk_client(url=server.url, headers={"Authorization": f"Bearer {DEV_TOKENS[user]}"})


async def test_a_question_is_answered_after_both_servers_restarted(tmp_path):
    """credit note: asked before the restarts, answered after them; one credit note, the answers signed."""
    with mcp_beside(tmp_path, lab_agent=False) as beside:
        first = start_dev_server(tmp_path, beside.env, beside.config)
        invoice = f"INV-{uuid.uuid4().int % 10**9:09d}"
        first.services.invoices.add(invoice, order_id="A1024", amount=80, owner="requester1")
        requester, reviewer = client(first, "requester1"), client(first, "reviewer1")
        try:
            thread_id, _ = await start(requester, phrases.credit_invoice(25, invoice))
            await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
            asked = only_question(await requester.threads.get(thread_id))
        finally:
            await requester.aclose()
            await reviewer.aclose()
            stop(first.process, signal.SIGKILL)
        beside.restart_billing()

        second = start_dev_server(tmp_path, beside.env, beside.config)
        requester = client(second, "requester1")
        try:
            again = only_question(await requester.threads.get(thread_id))
            assert (again["id"], again["value"]["question"]) == (asked["id"], asked["value"]["question"])
            why = {"action": "accept", "content": {"reason": "Restarted twice"}}
            await requester.runs.wait(thread_id, "support", command={"resume": {asked["id"]: why}})
            confirm = only_question(await requester.threads.get(thread_id))
            sure = {"action": "accept", "content": {"confirm": True}}
            await requester.runs.wait(thread_id, "support", command={"resume": {confirm["id"]: sure}})
            [note] = second.services.invoices.credit_notes(invoice)
            assert (note["amount"], note["reason"]) == (25, "Restarted twice")
            assert f"of 25 on {invoice}: Restarted twice" in await last_reply(requester, thread_id)
            report = await requester.http.get(f"/audit/{thread_id}/verification")
            assert report["ok"], report
        finally:
            await requester.aclose()
            stop(second.process)
