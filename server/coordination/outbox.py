"""Notices delivered at least once: recorded before they are sent, done only once a receiver took them.

The watcher's leader records each notice (`Lease.act_once(key, notices)`: the act and its
notices in one fenced transaction), then delivers it in the background with retries
(`server.channels.delivery`); only an accepted delivery (HTTP 2xx, SMTP accepted) marks it
delivered. A delivery in flight holds its notice for `IN_FLIGHT_SECONDS`; after that, or after
its process died, the leader's `deliver_due` sends it again. Every notice carries a stable id
receivers dedupe on: the `X-Hitl-Notice-Id` header (and `notice_id` in a webhook's JSON), the
e-mail's Message-ID. Not for deciding what to announce (`server.coordination.watcher`,
`server.channels.announce`).
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import aiosmtplib
import httpx
from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite

from server.channels import delivery
from server.http import outgoing
from server.insight import metrics
from server.ledger import storage
from server.ledger.storage import notice_outbox

if TYPE_CHECKING:
    from collections.abc import Callable
    from email.message import EmailMessage

    from sqlalchemy import Connection, Engine

    from hitl.settings import Settings

logger = logging.getLogger(__name__)
NOTICE_ID_HEADER = "X-Hitl-Notice-Id"
IN_FLIGHT_SECONDS = 20.0
"""How long a delivery in flight holds its notice before the leader may send it again."""
LATER_SECONDS = 30.0
"""The pause before the leader tries a notice again after a round of failed attempts (doubling, to 10 min)."""
TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class Notice:
    """One notice to one receiver: a webhook or Slack POST (`url`, `body`), or an e-mail (`message`)."""

    notice_id: str
    channel: str
    payload: dict[str, Any]

    @classmethod
    def post(cls, notice_id: str, channel: str, url: str, body: dict[str, Any]) -> Notice:
        """A JSON POST of `body` to `url`."""
        return cls(notice_id, channel, {"url": url, "body": body})

    @classmethod
    def mail(cls, notice_id: str, message: EmailMessage) -> Notice:
        """An e-mail; its Message-ID is made from `notice_id`, so a second delivery is the same message."""
        sender = str(message.get("From") or "hitl@localhost")
        domain = sender.rpartition("@")[2].strip("<> ") or "localhost"
        del message["Message-ID"]
        message["Message-ID"] = f"<{hashlib.sha256(notice_id.encode()).hexdigest()[:40]}@{domain}>"
        return cls(notice_id, "email", {"message": message.as_string()})

    def describe(self) -> str:
        """What this notice is, in a log line."""
        return f"{self.channel} notice {self.notice_id}"


def record(conn: Connection, notices: list[Notice], now: float) -> None:
    """Record `notices` in `conn`'s transaction, held for the delivery about to start."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    for notice in notices:
        conn.execute(
            dialect.insert(notice_outbox)
            .values(
                notice_id=notice.notice_id,
                channel=notice.channel,
                payload=json.dumps(notice.payload),
                created_at=now,
                delivered_at=None,
                attempts=0,
                next_try_at=now + IN_FLIGHT_SECONDS,
            )
            .on_conflict_do_nothing(index_elements=[notice_outbox.c.notice_id])
        )


def recording(notices: list[Notice]) -> Callable[[Connection, float], None]:
    """What records `notices` with the act that sends them (`Lease.act_once(..., with_it=...)`)."""
    return lambda conn, now: record(conn, notices, now)


async def attempt(notice: Notice, settings: Settings) -> None:
    """One delivery of `notice`; raises unless the receiver accepted it."""
    if notice.channel == "email":
        message = email.message_from_string(notice.payload["message"], policy=email.policy.default)
        await aiosmtplib.send(
            message,
            hostname=settings.hitl_smtp_host,
            port=settings.hitl_smtp_port,
            username=settings.hitl_smtp_username or None,
            password=settings.hitl_smtp_password or None,
            start_tls=settings.hitl_smtp_starttls,
            timeout=TIMEOUT_SECONDS,
        )
        return
    url, body = str(notice.payload["url"]), notice.payload["body"]
    async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS, verify=outgoing.tls()) as http:
        response = await http.post(url, json=body, headers={NOTICE_ID_HEADER: notice.notice_id})
    if response.is_error:
        msg = f"HTTP {response.status_code} from {url}: {response.text[:200]}"
        raise delivery.DeliveryError(msg)


def send(notice: Notice, settings: Settings, *, engine: Engine | None = None) -> asyncio.Task[bool]:
    """Deliver `notice` in the background with retries; marked delivered once a receiver takes it."""

    async def once() -> None:
        await asyncio.to_thread(_hold, notice.notice_id, engine)
        await attempt(notice, settings)

    async def settled(delivered: bool) -> None:  # noqa: FBT001  (the outcome `delivery` reports)
        if notice.channel == "webhook":
            metrics.notice(str(notice.payload["body"].get("event")), sent=delivered)
        await asyncio.to_thread(_settle, notice.notice_id, delivered=delivered, engine=engine)

    return delivery.in_background(notice.describe(), once, settled)


async def deliver_due(
    settings: Settings, *, limit: int = 50, engine: Engine | None = None
) -> list[asyncio.Task[bool]]:
    """Send again every notice not delivered whose hold passed (a failed round, a dead sender)."""
    found = await asyncio.to_thread(_due, limit, engine)
    for notice in found:
        logger.info("outbox: delivering %s again", notice.describe())
    return [send(notice, settings, engine=engine) for notice in found]


def forget(before: float, *, engine: Engine | None = None) -> None:
    """Delete the notices delivered before `before` (seconds since the epoch)."""
    with _database(engine).begin() as conn:
        conn.execute(notice_outbox.delete().where(notice_outbox.c.delivered_at < before))


def _database(engine: Engine | None) -> Engine:
    return storage.using(engine)


def _due(limit: int, engine: Engine | None, now: float | None = None) -> list[Notice]:
    """Undelivered notices whose hold passed, each held again for the delivery about to start."""
    now = time.time() if now is None else now
    row = notice_outbox.c
    with _database(engine).begin() as conn:
        rows = list(
            conn.execute(
                select(row.notice_id, row.channel, row.payload)
                .where(row.delivered_at.is_(None), row.next_try_at <= now)
                .order_by(row.next_try_at)
                .limit(limit)
            )
        )
        for found in rows:
            conn.execute(
                update(notice_outbox)
                .where(row.notice_id == found.notice_id)
                .values(next_try_at=now + IN_FLIGHT_SECONDS)
            )
    return [Notice(r.notice_id, r.channel, cast("dict[str, Any]", json.loads(r.payload))) for r in rows]


def _hold(notice_id: str, engine: Engine | None) -> None:
    """Hold the notice for one more attempt (counted)."""
    row = notice_outbox.c
    with _database(engine).begin() as conn:
        conn.execute(
            update(notice_outbox)
            .where(row.notice_id == notice_id)
            .values(attempts=row.attempts + 1, next_try_at=time.time() + IN_FLIGHT_SECONDS)
        )


def _settle(notice_id: str, *, delivered: bool, engine: Engine | None) -> None:
    """Mark the notice delivered, or put it off (doubling with its attempts) for the leader to try again."""
    row = notice_outbox.c
    now = time.time()

    def once() -> None:
        with _database(engine).begin() as conn:
            if delivered:
                conn.execute(update(notice_outbox).where(row.notice_id == notice_id).values(delivered_at=now))
                return
            attempts = conn.scalar(select(row.attempts).where(row.notice_id == notice_id)) or 1
            later = min(LATER_SECONDS * 2 ** max(attempts // delivery.ATTEMPTS - 1, 0), 600.0)
            conn.execute(
                update(notice_outbox).where(row.notice_id == notice_id).values(next_try_at=now + later)
            )

    storage.retrying(once, f"notice {notice_id}", seconds=30.0)
