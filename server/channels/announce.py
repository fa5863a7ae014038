"""The watcher's side of the channels: post each waiting approval to Slack (and e-mail), once.

Called by `server.watcher` for every pending interrupt on every pass. Each channel acts once
per interrupt and event, fenced by the watcher's lease (`Lease.act_once`, key
`channel:<channel>:<interrupt>:<event>` in the business database), so replicas and restarts
never post twice; the sending itself runs in the background (`server.channels.delivery`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from server.channels import delivery, email
from server.channels.slack_message import pause_message
from server.pending_index import rows_of

if TYPE_CHECKING:
    from datetime import datetime

    from hitl.settings import Settings
    from server.leadership import Lease
    from server.records import Escalation
    from server.resume_gate import Pending

logger = logging.getLogger(__name__)
PREFIX = "channel:"


class Announcer:
    """Sends the channels' notices for one watcher; remembers the acts done (cached from the database)."""

    def __init__(self, settings: Settings, lease: Lease) -> None:
        """Announce with `settings`' channels, as the holder of `lease`."""
        self.settings = settings
        self.lease = lease
        self.done: set[str] | None = None

    def channels(self) -> list[str]:
        """The channels switched on."""
        on = []
        if self.settings.hitl_slack_webhook_url:
            on.append("slack")
        if self.settings.hitl_smtp_host:
            on.append("email")
        return on

    async def announce(
        self,
        thread: dict[str, Any],
        pending: Pending,
        escalation: Escalation | None,
        now: datetime,  # noqa: ARG002  (the watcher's clock; rows carry their own ages)
        event: str = "approval_pending",
    ) -> None:
        """Post `pending` to each channel that has not had it for `event` yet."""
        channels = self.channels()
        if not channels:
            return
        if self.done is None:
            self.done = await asyncio.to_thread(self.lease.acts, PREFIX)
        escalations = {pending.id: escalation} if escalation else {}
        rows = [row for row, _ in rows_of(thread, [pending], escalations)]
        if not rows:
            return
        for channel in channels:
            key = f"{PREFIX}{channel}:{pending.id}:{event}"
            if key in self.done:
                continue
            if not await self.lease.act_once(key):
                if self.lease.held():  # done by a leader before this one
                    self.done.add(key)
                continue
            self.done.add(key)
            self._send(channel, thread, pending, rows, event)

    def _send(
        self, channel: str, thread: dict[str, Any], pending: Pending, rows: list[dict[str, Any]], event: str
    ) -> None:
        what = f"{channel} notice of {pending.id} ({event})"
        if channel == "slack":
            message = pause_message(pending, rows, self.settings.hitl_public_url, event)
            delivery.in_background(what, delivery.post_json(self.settings.hitl_slack_webhook_url, message))
        elif channel == "email":
            for attempt in email.notices(self.settings, thread, pending, rows, event):
                delivery.in_background(what, attempt)
