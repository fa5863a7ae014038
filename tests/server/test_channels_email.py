"""E-mail notices through a real server: an SMTP sink on loopback receives what the watcher sends.

This module's own `langgraph dev` has SMTP pointed at the sink (which refuses the first message,
so the retry is exercised) and addresses for some dev users. Each test checks who got a notice,
that it links to the thread in the web app, and that following the link decides nothing.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import json
import time

import httpx
import pytest
from sqlalchemy import create_engine, select

from agents.offline import phrases
from server.http.outgoing import tls
from server.ledger.storage import notice_outbox
from tests.conftest import add_order
from tests.devserver import start_dev_server, stop, user_clients
from tests.mcp_lab.beside import mcp_beside
from tests.server.helpers import APPROVE, decisions, start
from tests.server.mcp_helpers import new_invoice, only_question
from tests.smtp_sink import SmtpSink

pytestmark = pytest.mark.server

EMAILS = {
    "requester1": "req1@example.com",
    "reviewer1": "rev1@example.com",
    "supervisor1": "sup1@example.com",
    "supervisor2": "sup2@example.com",
}


@pytest.fixture(scope="module")
def sink():
    running = SmtpSink(failures=1)
    yield running
    running.close()


@pytest.fixture(scope="module")
def mail_server(tmp_path_factory, sink):
    workdir = tmp_path_factory.mktemp("email")
    with mcp_beside(workdir) as beside:
        running = start_dev_server(workdir, {**beside.env, **mail_settings(sink)}, beside.config)
        yield running
        stop(running.process)


def mail_settings(sink) -> dict[str, str]:
    return {
        "HITL_WATCH_INTERVAL": "0.3",
        "REFUND_DEADLINE_SECONDS": "6",  # refunds escalate during the module: a second notice
        "HITL_SMTP_HOST": "127.0.0.1",
        "HITL_SMTP_PORT": str(sink.port),
        "HITL_SMTP_STARTTLS": "false",
        "HITL_SMTP_SENDER": "approvals@example.com",
        "HITL_USER_EMAILS": ",".join(f"{user}:{address}" for user, address in EMAILS.items()),
        "HITL_PUBLIC_URL": "https://hitl.example.com",
    }


@pytest.fixture
async def as_user(mail_server):
    async with user_clients(mail_server.url) as make:
        yield make


async def until(check, seconds: float = 60):
    """Poll `check` until it returns something truthy (bounded)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := check():
            return result
        await asyncio.sleep(0.2)
    pytest.fail("condition not reached in time")


def all_delivered(server, thread_id: str) -> bool:
    """Whether every e-mail notice the server recorded about `thread_id` was taken by the sink.

    The notices of one pause or escalation are recorded together (`server.coordination.outbox`), so
    once they are all delivered, a wrong extra one would have arrived with them: no wait for one.
    """
    with create_engine(server.layer_url).connect() as conn:
        rows = conn.execute(
            select(notice_outbox.c.payload, notice_outbox.c.delivered_at).where(
                notice_outbox.c.channel == "email"
            )
        ).all()
    mine = [row for row in rows if thread_id in about(row.payload)]
    return bool(mine) and all(row.delivered_at is not None for row in mine)


def about(payload: str) -> str:
    """The text of a recorded e-mail notice (its body may be encoded in the message as sent)."""
    message = email.message_from_string(json.loads(payload)["message"], policy=email.policy.default)
    body = message.get_body(preferencelist=("plain",))
    return str(body.get_content()) if body is not None else ""


def notices_about(sink, thread_id: str, subject: str = "Approval needed") -> dict[str, list]:
    """Address to the notices (of `subject`) it got about `thread_id`."""
    found: dict[str, list] = {}
    for rcpts, message in sink.messages:
        if thread_id in message.get_content() and subject in message["Subject"]:
            for address in rcpts:
                found.setdefault(address, []).append(message)
    return found


async def test_reviewers_who_may_decide_get_a_link_and_the_link_decides_nothing(as_user, mail_server, sink):
    """300 refund: reviewer1 and both supervisors are told once, requester1 not; the link decides nothing.

    The link opens the thread in the web app; fetching it (as a mail scanner would) leaves the
    approval waiting.
    """
    requester = as_user("requester1")
    order_id = add_order(mail_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    expected = {EMAILS["reviewer1"], EMAILS["supervisor1"], EMAILS["supervisor2"]}
    got = await until(lambda: (n := notices_about(sink, thread_id)) and set(n) >= expected and n)
    assert set(got) == expected
    assert all(len(messages) == 1 for messages in got.values())
    message = got[EMAILS["reviewer1"]][0]
    assert message["From"] == "approvals@example.com"
    assert "issue_refund" in message["Subject"]
    body = message.get_content()
    link = f"https://hitl.example.com/app/#/threads/{thread_id}"
    assert link in body
    assert order_id in body
    assert "a reviewer" in body
    assert sink.attempts > len(sink.messages)  # the first attempt was refused, then retried
    async with httpx.AsyncClient(timeout=30, verify=tls()) as http:
        await http.get(link.replace("https://hitl.example.com", mail_server.url))
    # A decision is accepted (and on the trail) before its request is answered: none is there.
    assert (await requester.http.get(f"/audit/{thread_id}"))["records"] == []
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"
    assert mail_server.services.payments.refunds_for(order_id) == []


async def test_a_supervisors_approval_is_mailed_to_supervisors_only(as_user, mail_server, sink):
    """899 refund (a supervisor's): supervisor1 and supervisor2 get it; reviewer1 does not."""
    order_id = add_order(mail_server.services, 899)
    thread_id, _ = await start(as_user("requester1"), phrases.refund_in_full(order_id))
    expected = {EMAILS["supervisor1"], EMAILS["supervisor2"]}
    got = await until(lambda: (n := notices_about(sink, thread_id)) and set(n) >= expected and n)
    await until(lambda: all_delivered(mail_server, thread_id))
    assert set(notices_about(sink, thread_id)) == expected
    assert "a supervisor" in got[EMAILS["supervisor1"]][0].get_content()


async def test_the_asker_gets_no_notice_of_their_own_request(as_user, mail_server, sink):
    """four eyes: reviewer1 asks for an e-mail; supervisors are told, reviewer1 (the asker) is not."""
    order_id = add_order(mail_server.services, 40)
    thread_id, _ = await start(as_user("reviewer1"), phrases.email_customer(order_id))
    expected = {EMAILS["supervisor1"], EMAILS["supervisor2"]}
    await until(lambda: (n := notices_about(sink, thread_id)) and set(n) >= expected)
    await until(lambda: all_delivered(mail_server, thread_id))
    assert EMAILS["reviewer1"] not in notices_about(sink, thread_id)


async def test_an_escalation_is_mailed_to_the_supervisors(as_user, mail_server, sink):
    """escalated: a 300 refund nobody decided escalates: both supervisors are told, reviewer1 not again."""
    order_id = add_order(mail_server.services, 300)
    thread_id, _ = await start(as_user("requester1"), phrases.refund_in_full(order_id))
    expected = {EMAILS["supervisor1"], EMAILS["supervisor2"]}
    got = await until(lambda: (n := notices_about(sink, thread_id, "Escalated")) and set(n) >= expected and n)
    await until(lambda: all_delivered(mail_server, thread_id))
    assert set(notices_about(sink, thread_id, "Escalated")) == expected
    assert "a supervisor" in got[EMAILS["supervisor2"]][0].get_content()


async def test_an_mcp_servers_question_is_mailed_to_the_owner(as_user, mail_server, sink):
    """question: the owner (who answers it) is mailed billing's question and the link; reviewers are not."""
    invoice = new_invoice(mail_server.services)
    requester, reviewer = as_user("requester1"), as_user("reviewer1")
    thread_id, _ = await start(requester, phrases.credit_invoice(20, invoice))
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    only_question(await requester.threads.get(thread_id))
    found = await until(lambda: notices_about(sink, thread_id, "Question"))
    assert set(found) == {"req1@example.com"}
    [message] = found["req1@example.com"]
    assert f"Why should {invoice} be credited 20?" in message.get_content()
    assert f"https://hitl.example.com/app/#/threads/{thread_id}" in message.get_content()
