"""A fake Slack on loopback: receives incoming-webhook posts and `response_url` updates; signs presses.

The server under test posts its approval messages to `webhook_url` and its replies to the
`response_url` a press names (`respond_url(n)`, on the same origin, which the server accepts
because it is its webhook's origin). `press(...)` builds the form-encoded interactivity request
Slack would send, signed with the test's secret as Slack signs it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlencode

SIGNING_SECRET = "test-slack-signing-secret"  # noqa: S105  (the fake Slack's own, for tests only)


class FakeSlack:
    """Records what the server posts; the first `failures` webhook posts answer 500 (retries)."""

    def __init__(self, failures: int = 0) -> None:
        self.messages: list[dict[str, Any]] = []
        self.repeats = 0
        """Webhook posts of a message already received (same `X-Hitl-Notice-Id`): deduped, counted."""
        self.seen: set[str] = set()
        self.replies: dict[str, list[dict[str, Any]]] = {}
        self.attempts = 0
        self.failures = failures
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path == "/webhook":
                    fake.attempts += 1
                    if fake.attempts <= fake.failures:
                        self.send_response(500)
                        self.end_headers()
                        return
                    notice_id = self.headers.get("X-Hitl-Notice-Id")
                    if notice_id and notice_id in fake.seen:
                        fake.repeats += 1
                    else:
                        fake.seen.add(notice_id or "")
                        fake.messages.append(body)
                else:
                    fake.replies.setdefault(self.path, []).append(body)
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_args: object) -> None:
                return

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.webhook_url = f"{self.url}/webhook"
        self._presses = 0
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()

    def messages_for(self, thread_id: str) -> list[dict[str, Any]]:
        """The approval messages posted about `thread_id`."""
        return [m for m in self.messages if thread_id in m.get("text", "")]

    def press(
        self,
        message: dict[str, Any],
        action_id: str,
        slack_user: str,
        *,
        reason: str = "",
        timestamp: int | None = None,
        secret: str = SIGNING_SECRET,
    ) -> tuple[bytes, dict[str, str], str]:
        """Slack's request for pressing `action_id` on `message` as `slack_user`: body, headers, reply."""
        self._presses += 1
        path = f"/respond/{self._presses}"
        [button] = [
            e
            for b in message["blocks"]
            if b["type"] == "actions"
            for e in b["elements"]
            if e.get("action_id") == action_id
        ]
        payload = {
            "type": "block_actions",
            "user": {"id": slack_user, "username": slack_user.lower()},
            "team": {"id": "T0TEST"},
            "actions": [
                {
                    "action_id": action_id,
                    "block_id": "hitl_decide",
                    "value": button["value"],
                    "type": "button",
                }
            ],
            "response_url": f"{self.url}{path}",
            "message": message,
            "state": {
                "values": {"hitl_reason": {"reason": {"type": "plain_text_input", "value": reason or None}}}
            },
        }
        body = urlencode({"payload": json.dumps(payload)}).encode()
        return body, sign(body, timestamp or int(time.time()), secret), path


def sign(body: bytes, timestamp: int, secret: str = SIGNING_SECRET) -> dict[str, str]:
    """The headers Slack sends with `body`: its `v0` signature and timestamp."""
    base = f"v0:{timestamp}:".encode() + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": f"v0={digest}",
    }
