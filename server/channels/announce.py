"""The watcher's side of the channels: post each waiting approval to Slack (and e-mail), once.

Slack posts go to the channel of the group that decides (`HITL_SLACK_GROUP_WEBHOOKS`), else to
`HITL_SLACK_WEBHOOK_URL`; `webhook_for` chooses.

Called by `server.coordination.watcher` for every pending interrupt on every pass. Each channel acts once
per interrupt and event, fenced by the watcher's lease (`Lease.act_once`, key
`channel:<channel>:<interrupt>:<event>` in the layer's own store), so replicas and restarts
never post twice; its notices are recorded with the act and delivered at least once, in the
background, each with a stable id the receiver dedupes on (`server.coordination.outbox`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from hitl.policy.groups import group_map
from server.channels import email
from server.channels.slack_message import pause_message
from server.coordination import outbox
from server.coordination.inbox_rows import rows_of

if TYPE_CHECKING:
    from datetime import datetime

    from hitl.settings import Settings
    from server.coordination.leadership import Lease
    from server.decisions.pending import Pending
    from server.records.threads import Escalation

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
        if self.settings.hitl_slack_webhook_url or self.settings.hitl_slack_group_webhooks:
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
            notices = self._notices(key, channel, thread, pending, rows, event)
            if not await self.lease.act_once(key, with_it=outbox.recording(notices)):
                if self.lease.held():  # done by a leader before this one
                    self.done.add(key)
                continue
            self.done.add(key)
            for notice in notices:
                outbox.send(notice, self.settings)

    def _notices(  # noqa: PLR0913, PLR0917  (one act's notices: which, for what)
        self,
        key: str,
        channel: str,
        thread: dict[str, Any],
        pending: Pending,
        rows: list[dict[str, Any]],
        event: str,
    ) -> list[outbox.Notice]:
        """The notices of one act: one Slack post, or one e-mail per recipient (each with its own id)."""
        if channel == "slack":
            url = webhook_for(self.settings, pending)
            if not url:  # a group without a channel, and no default one
                return []
            message = pause_message(pending, rows, self.settings.hitl_public_url, event)
            return [outbox.Notice.post(key, "slack", url, message)]
        return [
            outbox.Notice.mail(f"{key}:{address}", message)
            for address, message in email.notices(self.settings, thread, pending, rows, event)
        ]


def webhook_for(settings: Settings, pending: Pending) -> str:
    """The Slack webhook for `pending`: its (escalation's) deciding group's channel, else the default one.

    Several deciders with channels (a batch for two groups): the first by name.
    """
    channels = group_map("HITL_SLACK_GROUP_WEBHOOKS", settings.hitl_slack_group_webhooks)
    return next(
        (channels[d] for d in sorted(pending.deciders) if d in channels), settings.hitl_slack_webhook_url
    )
