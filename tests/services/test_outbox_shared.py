"""Notices delivered at least once (`server.coordination.outbox`), once on SQLite and once on PostgreSQL.

A notice is recorded with the act that sends it and is delivered only when a receiver took it;
one whose sender died, or whose receiver failed every attempt, is sent again by the next
`deliver_due`, with the same id, which the receivers here dedupe on.
"""

from __future__ import annotations

import asyncio
import time
from email.message import EmailMessage
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import select, update

from hitl.settings import Settings
from server.channels import delivery
from server.coordination import outbox
from server.coordination.leadership import Lease
from server.ledger import storage
from server.ledger.storage import notice_outbox
from services.database import connect
from tests.notices import Receiver
from tests.smtp_sink import SmtpSink

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sqlalchemy import Engine


@pytest.fixture
def engine(database_url, engines) -> Engine:
    """The test's business database with the approval layer's tables."""
    engines.append(connect(database_url))
    return storage.ready(engines[-1])


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook receiver whose first 5 deliveries fail (500)."""
    running = Receiver(failures=5)
    yield running
    running.http.shutdown()
    running.http.server_close()


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch) -> None:
    """No pause between a delivery's attempts."""
    monkeypatch.setattr(delivery, "FIRST_BACKOFF_SECONDS", 0)


def delivered(engine: Engine) -> dict[str, float | None]:
    """Each recorded notice and when it was delivered (None: not yet)."""
    with engine.connect() as conn:
        rows = conn.execute(select(notice_outbox.c.notice_id, notice_outbox.c.delivered_at))
        return {str(notice_id): at for notice_id, at in rows}


def past_its_hold(engine: Engine) -> None:
    """Make every undelivered notice due now (its sender's hold ran out, or the sender died)."""
    with engine.begin() as conn:
        conn.execute(update(notice_outbox).values(next_try_at=time.time() - 1))


async def test_a_notice_whose_sender_died_is_delivered_by_the_next_leader_once(engine, receiver):
    """leader death: recorded with its act, never sent; the next leader's pass delivers it, once."""
    first = Lease("watcher", 30, engine=engine)
    assert first.hold_now() == 1
    notice = outbox.Notice.post("notice:i-1:approval_escalated", "webhook", receiver.url, {"event": "x"})
    assert await first.act_once(notice.notice_id, with_it=outbox.recording([notice]))
    assert not await first.act_once(notice.notice_id, with_it=outbox.recording([notice]))
    assert delivered(engine) == {notice.notice_id: None}  # the leader died before sending it
    assert await outbox.deliver_due(Settings(), engine=engine) == []  # held while its sender may be at it
    past_its_hold(engine)
    [task] = await outbox.deliver_due(Settings(), engine=engine)
    assert not await task  # the receiver failed all four attempts: not marked delivered
    assert delivered(engine)[notice.notice_id] is None
    past_its_hold(engine)
    [task] = await outbox.deliver_due(Settings(), engine=engine)
    assert await task
    assert delivered(engine)[notice.notice_id] is not None
    assert await outbox.deliver_due(Settings(), engine=engine) == []
    assert (len(receiver.notices), receiver.repeats) == (1, 0)


async def test_a_notice_delivered_twice_is_kept_once_by_its_receivers(engine):
    """dedupe: the same webhook notice and e-mail sent twice reach each receiver once (same ids)."""
    webhook, sink = Receiver(), SmtpSink()
    try:
        body = {"event": "approval_pending", "notice_id": "notice:i-2:approval_pending"}
        post = outbox.Notice.post(body["notice_id"], "webhook", webhook.url, body)
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = "hitl@example.com", "rev@example.com", "Waiting"
        message.set_content("An approval waits.")
        mail = outbox.Notice.mail("channel:email:i-2:approval_pending:rev@example.com", message)
        again = outbox.Notice.mail(mail.notice_id, message)
        assert "Message-ID" in mail.payload["message"]
        assert mail.payload == again.payload  # the same id, whenever it is made
        with engine.begin() as conn:
            outbox.record(conn, [post, mail], time.time())
        settings = Settings(hitl_smtp_host="127.0.0.1", hitl_smtp_port=sink.port, hitl_smtp_starttls=False)
        for _ in range(2):
            assert all(await asyncio.gather(*(outbox.send(n, settings, engine=engine) for n in (post, mail))))
        assert (len(webhook.notices), webhook.repeats) == (1, 1)
        assert (len(sink.messages), sink.repeats) == (1, 1)
        assert all(at is not None for at in delivered(engine).values())
    finally:
        webhook.http.shutdown()
        webhook.http.server_close()
        sink.close()
