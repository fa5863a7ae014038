"""Slack approvals through a real server: a fake Slack on loopback, presses signed by the tests.

This module's own `langgraph dev` posts each waiting approval to the fake Slack's webhook; the
tests press its buttons with requests signed as Slack signs them. Every press is checked on
the business database (refunds, outbox) and the audit trail (GET /audit/{thread_id}); the
replies the server sends to the press's `response_url` say who decided or why nothing changed.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import httpx
import pytest

from agents.offline import phrases
from server.http.outgoing import tls
from services.database import orders
from tests.conftest import add_order
from tests.devserver import start_dev_server, stop, user_clients
from tests.fake_slack import FakeSlack, sign
from tests.mcp_lab.beside import mcp_beside
from tests.server.helpers import APPROVE, decisions, start
from tests.server.mcp_helpers import new_invoice, only_question

pytestmark = [pytest.mark.server, pytest.mark.long]

SLACK_USERS = "UREV1:reviewer1,USUP1:supervisor1,USUP2:supervisor2,UREQ1:requester1,UREQ2:requester2"


@pytest.fixture(scope="module")
def slack():
    fake = FakeSlack(failures=1)
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def slack_server(tmp_path_factory, slack):
    from tests.fake_slack import SIGNING_SECRET  # noqa: PLC0415

    workdir = tmp_path_factory.mktemp("slack")
    with mcp_beside(workdir) as beside:
        running = start_dev_server(
            workdir, {**beside.env, **slack_settings(slack, SIGNING_SECRET)}, beside.config
        )
        yield running
        stop(running.process)


def slack_settings(slack, secret: str) -> dict[str, str]:
    return {
        "HITL_WATCH_INTERVAL": "0.3",
        "EMAIL_DEADLINE_SECONDS": "8",  # e-mails expire during the module (a press after expiry)
        "HITL_SLACK_WEBHOOK_URL": slack.webhook_url,
        "HITL_SLACK_SIGNING_SECRET": secret,
        "HITL_SLACK_USERS": SLACK_USERS,
        "HITL_PUBLIC_URL": "https://hitl.example.com",
    }


@pytest.fixture
async def as_user(slack_server):
    async with user_clients(slack_server.url) as make:
        yield make


async def until(check, seconds: float = 60):
    """Poll `check` (sync or async) until it returns something truthy (bounded)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        await asyncio.sleep(0.2)
    pytest.fail("condition not reached in time")


async def posted(slack, thread_id: str, index: int = 0) -> dict:
    """The `index`-th approval message the server posted about `thread_id` (waits for it)."""
    messages = await until(lambda: slack.messages_for(thread_id)[index:])
    return messages[0]


async def send(server, body: bytes, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=tls()) as http:
        return await http.post("/channels/slack/actions", content=body, headers=headers)


async def trail(client, thread_id: str) -> list[dict]:
    return (await client.http.get(f"/audit/{thread_id}"))["records"]


async def settled(client, thread_id: str) -> dict:
    """The thread once every run on it has ended (the press's resume was created before Slack's 200)."""

    async def done():
        runs = await client.runs.list(thread_id)
        if any(run["status"] in {"pending", "running"} for run in runs):
            return None
        thread = await client.threads.get(thread_id)
        return thread if thread["status"] != "busy" else None

    return await until(done)


async def reply(slack, path: str) -> dict:
    """What the server told Slack through the press's response_url (waits for it)."""
    [body] = await until(lambda: slack.replies.get(path))
    return body


async def test_a_pause_posts_a_block_kit_message(as_user, slack_server, slack):
    """message: what (issue_refund, args), which agent, who decides, deadline, buttons, web app link."""
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(as_user("requester1"), phrases.refund_in_full(order_id))
    message = await posted(slack, thread_id)
    text = json.dumps(message)
    assert "Approval needed: issue_refund" in text
    assert order_id in text
    assert "support" in text
    assert "a reviewer" in text
    assert "Deadline" in text
    [actions] = [b for b in message["blocks"] if b["type"] == "actions"]
    by_id = {e["action_id"]: e for e in actions["elements"]}
    assert set(by_id) == {"approve", "reject", "open"}
    assert by_id["open"]["url"] == f"https://hitl.example.com/app/#/threads/{thread_id}"
    assert json.loads(by_id["approve"]["value"])["thread_id"] == thread_id
    assert slack.attempts >= 2  # the first post failed and was retried


async def test_a_subagents_pause_names_the_subagent(as_user, slack_server, slack):
    """subagent: a refund asked by refund_specialist says so in the message."""
    order_id = add_order(slack_server.services, 300)
    request = phrases.via_specialist(phrases.refund_in_full(order_id))
    thread_id, _ = await start(as_user("requester1"), request)
    assert "refund_specialist" in json.dumps(await posted(slack, thread_id))


async def test_an_allowed_reviewer_approves_from_slack(as_user, slack_server, slack):
    """approve: reviewer1 (UREV1) presses Approve: one refund for requester1, audited as reviewer1, told.

    The run carries what admission tells every run (whose records, who asked), as an API resume's does.
    """
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body, headers, path = slack.press(await posted(slack, thread_id), "approve", "UREV1")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert (await settled(requester, thread_id))["status"] == "idle"
    assert [r["amount"] for r in slack_server.services.payments.refunds_for(order_id)] == [300.0]
    records = await trail(requester, thread_id)
    assert [(r["reviewer"], r["decision"], r["outcome"]) for r in records] == [
        ("reviewer1", "approve", "accepted")
    ]
    update = await reply(slack, path)
    assert update["replace_original"] is True
    assert "Approved* by reviewer1" in update["text"]
    [run, _first] = await requester.runs.list(thread_id)
    told = run["kwargs"]["config"]["configurable"]
    assert told["hitl_acting_for"]["identity"] == "requester1"
    assert told["hitl_requested_by"] == ["requester1"]


async def test_a_press_starts_a_run_that_works_on_the_owners_records_only(as_user, slack_server, slack):
    """Slack's run (issue 54): it acts for requester1, so an order moved to requester2 is not refunded.

    reviewer1 approves the e-mail from Slack; the refund of 45 that waited beside it (under the
    auto-approve limit) runs in the same run, after the order went to requester2: refused, no row;
    the e-mail goes out once.
    """
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 45)
    thread_id, _ = await start(requester, phrases.refund_and_email(order_id))
    with slack_server.services.engine.begin() as conn:
        conn.execute(orders.update().where(orders.c.order_id == order_id).values(owner="requester2"))
    body, headers, _path = slack.press(await posted(slack, thread_id), "approve", "UREV1")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert (await settled(requester, thread_id))["status"] == "idle"
    assert slack_server.services.payments.refunds_for(order_id) == []
    assert len(slack_server.services.outbox.sent_to(f"{order_id.lower()}@example.com")) == 1
    [run, _first] = await requester.runs.list(thread_id)
    assert run["kwargs"]["config"]["configurable"]["hitl_acting_for"]["identity"] == "requester1"


async def test_a_reject_from_slack_carries_the_typed_reason(as_user, slack_server, slack):
    """reject: the reason typed in the message reaches the audit; no refund; the message shows it."""
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 250)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body, headers, path = slack.press(
        await posted(slack, thread_id), "reject", "UREV1", reason="Order was never paid."
    )
    assert (await send(slack_server, body, headers)).status_code == 200
    await settled(requester, thread_id)
    assert slack_server.services.payments.refunds_for(order_id) == []
    [record] = await trail(requester, thread_id)
    assert (record["reviewer"], record["decision"], record["message"]) == (
        "reviewer1",
        "reject",
        "Order was never paid.",
    )
    assert "Order was never paid." in (await reply(slack, path))["text"]


async def test_a_user_without_the_role_changes_nothing(as_user, slack_server, slack):
    """role: reviewer1 approves an 899 refund (a supervisor's): refused, audited, told alone; still waits."""
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 899)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body, headers, path = slack.press(await posted(slack, thread_id), "approve", "UREV1")
    assert (await send(slack_server, body, headers)).status_code == 200
    update = await reply(slack, path)
    assert update["response_type"] == "ephemeral"
    assert "not allowed" in update["text"]
    assert "supervisor" in update["text"]
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"
    assert slack_server.services.payments.refunds_for(order_id) == []
    assert [(r["reviewer"], r["outcome"]) for r in await trail(requester, thread_id)] == [
        ("reviewer1", "refused")
    ]


async def test_an_unknown_slack_member_changes_nothing(as_user, slack_server, slack):
    """unknown: a member HITL_SLACK_USERS does not name presses Approve: refused, audited as slack:<id>."""
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body, headers, path = slack.press(await posted(slack, thread_id), "approve", "UNOBODY")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert "not mapped" in (await reply(slack, path))["text"]
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"
    assert slack_server.services.payments.refunds_for(order_id) == []
    [record] = await trail(requester, thread_id)
    assert (record["reviewer"], record["outcome"]) == ("slack:UNOBODY", "refused")


async def test_the_asker_cannot_approve_from_slack(as_user, slack_server, slack):
    """four eyes: reviewer1 asked for an e-mail; their Slack approve is refused (separation of duties)."""
    reviewer = as_user("reviewer1")
    order_id = add_order(slack_server.services, 40)
    thread_id, _ = await start(reviewer, phrases.email_customer(order_id))
    body, headers, path = slack.press(await posted(slack, thread_id), "approve", "UREV1")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert "someone else must approve" in (await reply(slack, path))["text"]
    assert (await reviewer.threads.get(thread_id))["status"] == "interrupted"
    assert slack_server.services.outbox.sent_to(f"{order_id.lower()}@example.com") == []
    assert [(r["reviewer"], r["outcome"]) for r in await trail(reviewer, thread_id)] == [
        ("reviewer1", "refused")
    ]


async def test_a_requester_cannot_approve_their_own_refund_from_slack(as_user, slack_server, slack):
    """requester: requester1 (UREQ1) presses Approve on their own refund: refused, audited, no refund."""
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body, headers, path = slack.press(await posted(slack, thread_id), "approve", "UREQ1")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert "not allowed" in (await reply(slack, path))["text"]
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"
    assert slack_server.services.payments.refunds_for(order_id) == []
    assert [(r["reviewer"], r["outcome"]) for r in await trail(requester, thread_id)] == [
        ("requester1", "refused")
    ]


async def test_another_customer_cannot_press_on_a_thread_not_theirs(as_user, slack_server, slack):
    """not theirs: requester2 approves requester1's refund: refused before the gate, audited once."""
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body, headers, path = slack.press(await posted(slack, thread_id), "approve", "UREQ2")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert "not found" in (await reply(slack, path))["text"]
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"
    assert slack_server.services.payments.refunds_for(order_id) == []
    assert [(r["reviewer"], r["outcome"]) for r in await trail(requester, thread_id)] == [
        ("requester2", "refused")
    ]


async def test_a_press_on_a_deleted_thread_changes_nothing(as_user, slack_server, slack):
    """gone: withdrawn, then deleted; a press on it is told so and kept on the channel's trail."""
    requester, supervisor = as_user("requester1"), as_user("supervisor1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    message = await posted(slack, thread_id)
    await requester.http.post(f"/threads/{thread_id}/withdraw", json={})
    await requester.runs.join(thread_id, (await requester.runs.list(thread_id, limit=1))[0]["run_id"])
    await requester.threads.delete(thread_id)
    body, headers, path = slack.press(message, "approve", "USUP1")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert "does not exist" in (await reply(slack, path))["text"]
    assert slack_server.services.payments.refunds_for(order_id) == []
    channel = (await supervisor.http.get("/channels/slack/audit"))["records"]
    assert any(thread_id in r["refusal"] for r in channel)


async def test_a_replayed_press_is_refused(as_user, slack_server, slack):
    """replay: one signed request sent 4 times: 409 after the first, one refund, the replay audited once."""
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body, headers, _path = slack.press(await posted(slack, thread_id), "approve", "USUP1")
    assert (await send(slack_server, body, headers)).status_code == 200
    await settled(requester, thread_id)
    for _ in range(3):  # a captured request sent again and again is audited once
        assert (await send(slack_server, body, headers)).status_code == 409
    assert [r["amount"] for r in slack_server.services.payments.refunds_for(order_id)] == [300.0]
    records = await trail(requester, thread_id)
    assert [(r["reviewer"], r["decision"]) for r in records] == [
        ("supervisor1", "approve"),
        ("supervisor1", "refused"),
    ]
    assert "replay" in records[-1]["refusal"]


async def test_a_stale_press_is_refused(as_user, slack_server, slack):
    """stale: a press signed 10 minutes ago is 401, audited, and changes nothing."""
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    old = int(time.time()) - 600
    body, headers, _path = slack.press(await posted(slack, thread_id), "approve", "USUP1", timestamp=old)
    assert (await send(slack_server, body, headers)).status_code == 401
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"
    assert slack_server.services.payments.refunds_for(order_id) == []
    [record] = await trail(requester, thread_id)
    assert (record["reviewer"], record["outcome"]) == ("supervisor1", "refused")
    assert "minutes old" in record["refusal"]


async def unverified(client, reason: str) -> float:
    """The server's count of refused unverified Slack requests for `reason` (GET /hitl/metrics)."""
    text = (await client.http.client.get("/hitl/metrics")).text
    line = f'hitl_slack_unverified_requests_total{{reason="{reason}"}} '
    return sum(float(row.removeprefix(line)) for row in text.splitlines() if row.startswith(line))


async def test_a_forged_signature_is_refused(as_user, slack_server, slack):
    """forged: another secret, and no signature: 401, nothing changes, counted, not audited anywhere."""
    requester, supervisor = as_user("requester1"), as_user("supervisor1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    message = await posted(slack, thread_id)
    before = await unverified(supervisor, "forged")
    body, headers, _path = slack.press(message, "approve", "USUP1", secret="not-the-secret")  # noqa: S106
    assert (await send(slack_server, body, headers)).status_code == 401
    unsigned = {"Content-Type": "application/x-www-form-urlencoded"}
    assert (await send(slack_server, body, unsigned)).status_code == 401
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"
    assert slack_server.services.payments.refunds_for(order_id) == []
    assert await trail(requester, thread_id) == []
    channel = (await supervisor.http.get("/channels/slack/audit"))["records"]
    assert [r for r in channel if thread_id in r["message"]] == []
    assert await unverified(supervisor, "forged") == before + 2
    with pytest.raises(httpx.HTTPStatusError):
        await as_user("reviewer1").http.get("/channels/slack/audit")


async def test_300_unsigned_presses_add_no_audit_record(as_user, slack_server, slack):
    """flood: 300 unsigned or badly signed presses (deep, broken): all 401, 0 audit records, 300 counted."""
    requester, supervisor = as_user("requester1"), as_user("supervisor1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body, headers, _path = slack.press(await posted(slack, thread_id), "approve", "USUP1")
    channel_before = len((await supervisor.http.get("/channels/slack/audit"))["records"])
    before = await unverified(supervisor, "forged")
    bodies = [body, b"payload=" + b"%5B" * 50_000, b"payload=%7B%22a%22", b"\xff\xfe", b""]
    forged = {**headers, "X-Slack-Signature": "v0=" + "0" * 64}
    async with httpx.AsyncClient(base_url=slack_server.url, timeout=60, verify=tls()) as http:
        statuses = await asyncio.gather(
            *(
                http.post(
                    "/channels/slack/actions",
                    content=bodies[i % len(bodies)],
                    headers=forged if i % 2 else {},
                )
                for i in range(300)
            )
        )
    assert {r.status_code for r in statuses} == {401}
    assert (await supervisor.http.client.get("/ok")).status_code == 200
    assert await unverified(supervisor, "forged") == before + 300
    assert len((await supervisor.http.get("/channels/slack/audit"))["records"]) == channel_before
    assert await trail(requester, thread_id) == []
    assert slack_server.services.payments.refunds_for(order_id) == []
    assert (await send(slack_server, body, headers)).status_code == 200  # the real press still works
    await settled(requester, thread_id)
    assert [r["amount"] for r in slack_server.services.payments.refunds_for(order_id)] == [300.0]


async def test_tool_args_reach_slack_escaped(as_user, slack_server, slack):
    """mrkdwn: write_file content that closes the code block, pings @channel, hides a link: arrives inert."""
    attack = "``` <!channel> <https://evil.example/login|Approve securely here> & more"
    name = f"notes-{uuid.uuid4().hex[:6]}.txt"
    thread_id, _ = await start(as_user("reviewer1"), phrases.write_file(attack, name), agent="ops")
    message = await posted(slack, thread_id)
    sections = [b["text"]["text"] for b in message["blocks"] if b["type"] == "section" and "text" in b]
    [args] = [t for t in sections if "write_file" in t]
    assert "<!channel>" not in json.dumps(message)
    assert "<https://" not in json.dumps(message)
    assert "&lt;!channel&gt; &lt;https://evil.example/login|Approve securely here&gt; &amp; more" in args
    assert args.count("```") == 2, args  # the block's own fences; the content's became look-alikes
    assert args.rstrip().endswith("```")


async def test_a_press_after_an_answer_elsewhere_changes_nothing(as_user, slack_server, slack):
    """answered: reviewer1 approves through the API first; supervisor1's press is told so; one refund."""
    requester, reviewer = as_user("requester1"), as_user("reviewer1")
    order_id = add_order(slack_server.services, 300)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    message = await posted(slack, thread_id)
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    body, headers, path = slack.press(message, "approve", "USUP1")
    assert (await send(slack_server, body, headers)).status_code == 200
    update = await reply(slack, path)
    assert update["replace_original"] is True
    assert "already answered: approve by reviewer1" in update["text"]
    assert [r["amount"] for r in slack_server.services.payments.refunds_for(order_id)] == [300.0]
    assert [(r["reviewer"], r["outcome"]) for r in await trail(requester, thread_id)] == [
        ("reviewer1", "accepted"),
        ("supervisor1", "refused"),
    ]


async def test_a_press_after_the_deadline_says_it_expired(as_user, slack_server, slack):
    """expired: nobody decided the e-mail in time (the watcher rejected it); a later press changes nothing."""
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 45)
    thread_id, _ = await start(requester, phrases.email_customer(order_id))
    message = await posted(slack, thread_id)

    async def expired():
        return (await requester.threads.get(thread_id))["status"] == "idle"

    await until(expired)
    body, headers, path = slack.press(message, "approve", "USUP1")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert "expired" in (await reply(slack, path))["text"]
    assert slack_server.services.outbox.sent_to(f"{order_id.lower()}@example.com") == []
    assert [(r["reviewer"], r["decision"]) for r in await trail(requester, thread_id)] == [
        ("system", "reject"),
        ("supervisor1", "refused"),
    ]


async def test_a_per_call_approval_inside_a_subagent_from_slack(as_user, slack_server, slack):
    """per-call: file_manager's write_file (ops) approved in Slack by reviewer1: the file is written once."""
    operator = as_user("supervisor1")
    path = f"notes/{uuid.uuid4().hex[:8]}.txt"
    request = phrases.via_file_manager(phrases.write_file("Release 1.4 is live", path))
    thread_id, _ = await start(operator, request, "ops")
    message = await posted(slack, thread_id)
    assert "file_manager (subagent of ops)" in json.dumps(message)
    body, headers, _path = slack.press(message, "approve", "UREV1")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert (await settled(operator, thread_id))["status"] == "idle"
    assert (slack_server.log.parent / "workspace" / path).read_text() == "Release 1.4 is live\n"
    records = await trail(operator, thread_id)
    assert [(r["reviewer"], r["decision"], r["tool"]) for r in records] == [
        ("reviewer1", "approve", "write_file")
    ]


async def test_a_sign_off_rejected_from_slack_tells_the_agent_why(as_user, slack_server, slack):
    """sign-off: the deployer's request_approval rejected in Slack: the agent hears it was not approved."""
    operator = as_user("supervisor1")
    thread_id, _ = await start(operator, phrases.DEPLOY_TO_PRODUCTION, "ops")
    body, headers, _path = slack.press(
        await posted(slack, thread_id), "reject", "UREV1", reason="Freeze until Monday"
    )
    assert (await send(slack_server, body, headers)).status_code == 200
    await settled(operator, thread_id)
    final = (await operator.threads.get_state(thread_id))["values"]["messages"][-1]["content"]
    assert "was not approved" in final
    [record] = await trail(operator, thread_id)
    assert (record["reviewer"], record["decision"], record["message"]) == (
        "reviewer1",
        "reject",
        "Freeze until Monday",
    )


async def test_a_slack_approve_counts_once_towards_a_quorum(as_user, slack_server, slack):
    """quorum: 2,400 needs two supervisors: supervisor1 in Slack, again: refused, supervisor2: one refund."""
    requester = as_user("requester1")
    order_id = add_order(slack_server.services, 2400)
    thread_id, _ = await start(requester, phrases.refund_in_full(order_id))
    body, headers, _ = slack.press(await posted(slack, thread_id), "approve", "USUP1")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert (await settled(requester, thread_id))["status"] == "interrupted"
    assert slack_server.services.payments.refunds_for(order_id) == []
    second = await posted(slack, thread_id, 1)
    assert "supervisor1" in json.dumps(second)
    body, headers, path = slack.press(second, "approve", "USUP1")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert "not allowed" in (await reply(slack, path))["text"]
    body, headers, _ = slack.press(second, "approve", "USUP2")
    assert (await send(slack_server, body, headers)).status_code == 200
    assert (await settled(requester, thread_id))["status"] == "idle"
    assert [r["amount"] for r in slack_server.services.payments.refunds_for(order_id)] == [2400.0]
    records = await trail(requester, thread_id)
    assert [(r["reviewer"], r["outcome"]) for r in records] == [
        ("supervisor1", "accepted"),
        ("supervisor1", "refused"),
        ("supervisor2", "accepted"),
    ]


async def test_the_actions_route_takes_no_token_and_nothing_else(slack_server):
    """route: only a POST to that exact path goes without a token (others: 401); a signed non-press is 400."""
    async with httpx.AsyncClient(base_url=slack_server.url, timeout=30, verify=tls()) as http:
        assert (await http.get("/channels/slack/actions")).status_code == 401
        assert (await http.put("/channels/slack/actions", content=b"x")).status_code == 401
        assert (await http.post("/channels/slack/actions/", content=b"x")).status_code == 401
        assert (await http.get("/channels/slack/audit")).status_code == 401
        body = b"payload=%7B%7D"
        response = await http.post(
            "/channels/slack/actions", content=body, headers=sign(body, int(time.time()))
        )
        assert response.status_code == 400


async def test_an_mcp_servers_question_is_posted_as_text_for_the_web_app(as_user, slack_server, slack):
    """question: "Question: billing.issue_credit_note", billing's words, no buttons: the web app answers."""
    invoice = new_invoice(slack_server.services)
    requester, reviewer = as_user("requester1"), as_user("reviewer1")
    thread_id, _ = await start(requester, phrases.credit_invoice(20, invoice))
    await reviewer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    only_question(await requester.threads.get(thread_id))
    message = await until(  # the first notice may be retried after it: order is not kept
        lambda: next((m for m in slack.messages_for(thread_id) if m["text"].startswith("Question")), None)
    )
    text = json.dumps(message)
    assert "Question: billing.issue_credit_note" in text
    assert f"Why should {invoice} be credited 20?" in text
    assert "the thread's owner" in text  # who decides: the person who asked, in the contract's words
    [actions] = [b for b in message["blocks"] if b["type"] == "actions"]
    assert [e["action_id"] for e in actions["elements"]] == ["open"]
    assert "Answer this one in the web app." in text
