"""What a Slack press is told, through its `response_url`: who decided what, or why nothing changed.

A decision or a closed approval (answered elsewhere, expired) replaces the message for everyone,
without its buttons; a press that is not allowed gets an ephemeral reply to the presser only,
so the buttons stay for the people who may decide. Only Slack's own `https://hooks.slack.com/`
or the origin of `HITL_SLACK_WEBHOOK_URL` is ever called. Retried in the background.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hitl.settings import get_settings
from server.channels import delivery
from server.channels.slack_message import REJECT, mrkdwn, outcome_message

if TYPE_CHECKING:
    from server.channels.slack_press import Press
    from server.identity.users import User

logger = logging.getLogger(__name__)
SLACK_ORIGIN = ("https", "hooks.slack.com")


def decided(press: Press, user: User, reason: str) -> None:
    """Replace the message: who decided what (and the reason of a rejection)."""
    if press.decision == REJECT:
        line = f":x: *Rejected* by {mrkdwn(user.identity)} in Slack. Reason: {mrkdwn(reason)}"
    else:
        line = f":white_check_mark: *Approved* by {mrkdwn(user.identity)} in Slack."
    _send(press, outcome_message(press.message, line))


def closed(press: Press, why: str) -> None:
    """Replace the message: this approval waits no more (answered elsewhere, or expired)."""
    _send(press, outcome_message(press.message, f":lock: Nothing changed: {mrkdwn(why)}."))


def refused(press: Press, why: str) -> None:
    """Tell the presser alone why their press changed nothing; the buttons stay for others."""
    _send(
        press,
        {
            "response_type": "ephemeral",
            "replace_original": False,
            "text": f":no_entry: Nothing changed: {mrkdwn(why)}",
        },
    )


def allowed(url: str) -> bool:
    """Whether `url` is Slack's (or the configured webhook's origin, e.g. a test's fake Slack)."""
    parts = urlsplit(url)
    webhook = urlsplit(get_settings().hitl_slack_webhook_url)
    origin = (parts.scheme, parts.netloc)
    return (parts.scheme, parts.hostname) == SLACK_ORIGIN or (
        bool(webhook.netloc) and origin == (webhook.scheme, webhook.netloc)
    )


def _send(press: Press, body: dict[str, Any]) -> None:
    if not press.response_url:
        return
    if not allowed(press.response_url):
        logger.warning(
            "slack: response_url %r is not Slack's; the message was not updated", press.response_url
        )
        return
    delivery.in_background(f"Slack reply for {press.thread_id}", delivery.post_json(press.response_url, body))
