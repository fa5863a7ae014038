"""The Slack channel's pure parts: Slack's signature, freshness, once-only, where replies may go, messages."""

from __future__ import annotations

import json
import time

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from hitl.contracts.publish import EXAMPLES_PATH
from hitl.settings import get_settings
from server.channels import slack_message, slack_replies
from server.channels.routes import ROUTES
from server.channels.slack_signature import Verdict, fresh, signed, verify
from server.decisions.pending import Pending
from services.database import connect
from tests.fake_slack import SIGNING_SECRET, sign

BODY = b"payload=%7B%22type%22%3A%22block_actions%22%7D"
EXAMPLES = {kind: values[0] for kind, values in json.loads(EXAMPLES_PATH.read_text()).items()}
"""One published example value of each interrupt kind."""


def test_slacks_signature_is_checked_on_the_exact_body():
    """signature: Slack's v0 HMAC of the body verifies; another body, secret or no header does not."""
    now = int(time.time())
    headers = {k.lower(): v for k, v in sign(BODY, now).items()}
    assert signed(SIGNING_SECRET, headers, BODY)
    assert not signed(SIGNING_SECRET, headers, BODY + b"x")
    assert not signed("another-secret", headers, BODY)
    assert not signed("", headers, BODY)
    assert not signed(SIGNING_SECRET, {"x-slack-request-timestamp": str(now)}, BODY)
    moved = {**headers, "x-slack-request-timestamp": str(now + 1)}
    assert not signed(SIGNING_SECRET, moved, BODY)


@pytest.mark.parametrize(
    ("stamp", "ok"),
    [("1000", True), ("700", True), ("699", False), ("1301", False), ("abc", False), ("", False)],
)
def test_a_request_is_fresh_within_five_minutes_either_way(stamp, ok):
    """freshness: at most 300 s from now, past or future; a timestamp that is no number is stale."""
    assert fresh({"x-slack-request-timestamp": stamp}, 1000.0) is ok


async def test_each_request_is_accepted_once_in_the_shared_database(tmp_path):
    """once: the same signed request twice is a replay; forged is judged before stale."""
    engine = connect(f"sqlite:///{tmp_path / 'business.db'}")
    now = time.time()
    headers = {k.lower(): v for k, v in sign(BODY, int(now)).items()}
    assert await verify(SIGNING_SECRET, headers, BODY, engine=engine, now=now) is Verdict.ACCEPTED
    assert await verify(SIGNING_SECRET, headers, BODY, engine=engine, now=now) is Verdict.REPLAYED
    old = {k.lower(): v for k, v in sign(BODY, int(now) - 301).items()}
    assert await verify(SIGNING_SECRET, old, BODY, engine=engine, now=now) is Verdict.STALE
    forged = {**old, "x-slack-signature": "v0=" + "0" * 64}
    assert await verify(SIGNING_SECRET, forged, BODY, engine=engine, now=now) is Verdict.FORGED


@pytest.fixture
def slack_settings(monkeypatch):
    monkeypatch.setenv("HITL_SLACK_WEBHOOK_URL", "http://127.0.0.1:9999/webhook")
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://hooks.slack.com/actions/T0/1/abc", True),
        ("http://hooks.slack.com/actions/T0/1/abc", False),
        ("https://hooks.slack.com.evil.example/actions", False),
        ("https://evil.example/hooks.slack.com", False),
        ("http://127.0.0.1:9999/respond/1", True),
        ("http://127.0.0.1:9998/respond/1", False),
        ("http://169.254.169.254/latest/meta-data", False),
    ],
)
def test_replies_go_to_slack_or_the_webhooks_origin_only(slack_settings, url, ok):
    """response_url: only https://hooks.slack.com/ or HITL_SLACK_WEBHOOK_URL's origin is ever called."""
    assert slack_replies.allowed(url) is ok


def test_the_actions_route_is_off_without_a_signing_secret(monkeypatch):
    """off: with no HITL_SLACK_SIGNING_SECRET every press is 404 and nothing is read."""
    monkeypatch.setenv("HITL_SLACK_SIGNING_SECRET", "")
    get_settings.cache_clear()
    try:
        with TestClient(Starlette(routes=ROUTES)) as client:
            now = int(time.time())
            answer = client.post("/channels/slack/actions", content=BODY, headers=sign(BODY, now))
        assert answer.status_code == 404
        assert "HITL_SLACK_SIGNING_SECRET" in answer.text
    finally:
        get_settings.cache_clear()


def test_buttons_follow_the_decisions_the_interrupt_allows():
    """message: respond-only, forms and values of no published shape get the web app link alone.

    Approval requests get both buttons; a batch only the buttons every call allows.
    """
    ask = Pending(id="a" * 32, value={**EXAMPLES["tool_approval"], "allowed_decisions": ["respond"]})
    form = Pending(id="b" * 32, value=EXAMPLES["form"])
    signoff = Pending(id="c" * 32, value=EXAMPLES["approval_request"])
    batch = Pending(id="d" * 32, value=EXAMPLES["batched"])
    unknown = Pending(id="e" * 32, value={"type": "approval_request", "action": "deploy"})
    assert slack_message.decisions_offered(ask) == (False, False)
    assert slack_message.decisions_offered(form) == (False, False)
    assert slack_message.decisions_offered(signoff) == (True, True)
    assert slack_message.decisions_offered(batch) == (True, True)
    assert slack_message.decisions_offered(unknown) == (False, False)
    row = {"thread_id": "t1", "tool": "deploy", "agent": "deployer", "graph_id": "ops", "args": {"x": 1}}
    message = slack_message.pause_message(form, [row], "https://hitl.example.com/")
    [actions] = [b for b in message["blocks"] if b["type"] == "actions"]
    assert [e["action_id"] for e in actions["elements"]] == ["open"]
    assert actions["elements"][0]["url"] == "https://hitl.example.com/app/#/threads/t1"
    assert "deployer (subagent of ops)" in json.dumps(message)
