"""A local SMTP sink (aiosmtpd) on a free loopback port: keeps every message the server sends.

The first `failures` messages are answered `451` (try again later), to exercise the retries. A
message delivered again (same Message-ID) is deduped, as a mail store does, and counted in `repeats`.
"""

from __future__ import annotations

from email import message_from_bytes, policy
from typing import TYPE_CHECKING, Any

from aiosmtpd.controller import Controller

from server.runtime.replicas import free_port

if TYPE_CHECKING:
    from email.message import EmailMessage


class SmtpSink:
    """Collects messages as `EmailMessage`s, with their envelope recipients."""

    def __init__(self, failures: int = 0) -> None:
        self.messages: list[tuple[list[str], EmailMessage]] = []
        self.repeats = 0
        self.attempts = 0
        self.failures = failures
        self.port = free_port()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:  # noqa: N802  (aiosmtpd's hook name)
        self.attempts += 1
        if self.attempts <= self.failures:
            return "451 Try again later"
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        if parsed["Message-ID"] and any(m["Message-ID"] == parsed["Message-ID"] for _, m in self.messages):
            self.repeats += 1
            return "250 OK"
        self.messages.append((list(envelope.rcpt_tos), parsed))  # type: ignore[arg-type]
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        """The messages delivered to `address`."""
        return [m for rcpts, m in self.messages if address in rcpts]

    def close(self) -> None:
        self.controller.stop()
