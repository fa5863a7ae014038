"""A small HTTP receiver of the watcher's notices (`HITL_NOTIFY_URL`), on a free loopback port.

It dedupes as a receiver should: a notice delivered again (same `X-Hitl-Notice-Id`) is counted
in `repeats`, not kept twice.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """Records POSTed notices; the first `failures` attempts answer 500 to exercise retries."""

    def __init__(self, failures: int = 0) -> None:
        self.notices: list[dict] = []
        self.repeats = 0
        """Deliveries of a notice already received (at least once: the server may send one again)."""
        self.seen: set[str] = set()
        self.attempts = 0
        self.failures = failures
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                receiver.attempts += 1
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                notice_id = self.headers.get("X-Hitl-Notice-Id")
                if receiver.attempts <= receiver.failures:
                    self.send_response(500)
                elif notice_id and notice_id in receiver.seen:
                    receiver.repeats += 1
                    self.send_response(204)
                else:
                    receiver.seen.add(notice_id or "")
                    receiver.notices.append(body)
                    self.send_response(204)
                self.end_headers()

            def log_message(self, *_args) -> None:
                return

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/hook"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
