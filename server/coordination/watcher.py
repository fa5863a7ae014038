"""The server's watcher: tells people an approval is waiting, enforces deadlines, applies decisions.

A background task started with the server's HTTP app. Each pass applies accepted decisions whose
run never finished (`server.coordination.reconciler`), delivers notices not yet delivered
(`server.coordination.outbox`), POSTs a notice for approvals not yet announced, and for each
approval past its deadline either escalates it (the next role up must decide; notice sent)
or answers it as the `system` actor through `server.decisions.pipeline.decide`, the same checked,
claimed and audited path a person's answer takes. A deadline that passed while the server
was down is handled on the first pass after start. Escalations and the graph a thread resumes
with are server records (`server.records.threads`), never thread metadata; each notice and escalation
is done once, fenced by the lease (`Lease.act_once` in the layer's own store);
one thread that cannot be handled is logged and skipped, never the end of the pass.
Among replicas only the holder of the `watcher` lease (`server.coordination.leadership`) acts; every
process still repairs the shared inbox table each pass (`server.coordination.inbox_table`). A pass
looks only at the threads whose rows are new, due or (every `UNANSWERABLE_EVERY_SECONDS`) have lost
their last possible answerer, each found by an index: it costs what changed, not what waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from langgraph_sdk import get_client

from hitl.policy.deadlines import escalates_to
from hitl.policy.groups import SYSTEM_ACTOR, who
from hitl.settings import Settings, get_settings
from server.channels import webhook
from server.channels.announce import Announcer
from server.coordination import inbox, outbox, reconciler
from server.coordination.inbox_table import TABLE
from server.coordination.leadership import Lease
from server.decisions import pipeline, server_runs
from server.decisions.withdrawals import rejection
from server.identity import oidc
from server.identity.access import as_server
from server.identity.answerers import answerable, possible_deciders
from server.identity.users import User, canonical, directory
from server.insight import metrics
from server.records import audit, threads

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

    from hitl.contracts.interrupts import Decider
    from server.coordination.inbox_table import Entry
    from server.decisions.pending import Pending
    from server.records.threads import Escalation

logger = logging.getLogger(__name__)
SYSTEM = User(identity=SYSTEM_ACTOR, role="supervisor")
LEASE_NAME = "watcher"
LEASE_PASSES = 3
"""How many watcher intervals the lease lasts: a leader that stops renewing is replaced after it."""
NOTICE = "notice:"
ESCALATED = "escalated:"
"""Prefixes of the leader's once-only acts (`Lease.act_once`): a notice per interrupt and event."""
UNANSWERABLE_EVERY_SECONDS = 60.0
"""How often the leader looks for approvals nobody may answer any more (a whole-index scan)."""
ACTS_KEPT_SECONDS = 90 * 24 * 3600.0
FORGET_EVERY_SECONDS = 3600.0


class Watcher:
    """One pass at a time over the waiting approvals; `run` repeats it forever."""

    def __init__(self, settings: Settings | None = None, lease: Lease | None = None) -> None:
        """Use `settings` (the process settings by default), leading by `lease` (the shared `watcher` one)."""
        self.settings = settings or get_settings()
        self.lease = lease or Lease(LEASE_NAME, LEASE_PASSES * self.settings.hitl_watch_interval)
        self.announced: set[str] | None = None
        """Notice keys known to be sent: a cache of the leader's acts, loaded when this process leads."""
        self.forgot_at = 0.0
        self.checked_answerers_at = -UNANSWERABLE_EVERY_SECONDS
        self.channels = Announcer(self.settings, self.lease)
        """Slack and e-mail notices (`server.channels`), once per interrupt and event."""

    async def run(self) -> None:
        """Pass, sleep, repeat; a failing pass is logged and the next one runs."""
        while True:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                await self.tick()
            except Exception:
                logger.exception("watcher pass failed")
            metrics.WATCHER_PASS_SECONDS.labels("wall").observe(time.perf_counter() - wall)
            metrics.WATCHER_PASS_SECONDS.labels("cpu").observe(time.process_time() - cpu)
            await asyncio.sleep(self.settings.hitl_watch_interval)

    async def tick(self, now: datetime | None = None) -> None:
        """One pass: notices for new approvals, outcomes for expired ones; each thread on its own."""
        now = now or datetime.now(UTC)
        client = get_client()
        with as_server():
            await TABLE.refresh(client)  # every replica repairs: a stale leader's lease never stalls it
            if not await self.lead():
                return
            if self.settings.hitl_notify_url and self.announced is None:
                self.announced = await asyncio.to_thread(self.lease.acts, NOTICE)
            await self.forget_old_acts()
            await reconciler.reconcile(client, self.lease)
            await outbox.deliver_due(self.settings)
            wanted = await asyncio.to_thread(TABLE.to_watch, now, await self.lost_answerers())
            async for entry in TABLE.entries(client, wanted):
                if not await self.lease.keep():
                    logger.warning("watcher: the lease lapsed mid-pass; the new leader does the rest")
                    return
                thread_id = str(entry.thread.get("thread_id"))
                try:
                    await self.watch(client, entry, now)
                    ids = [p.id for p in entry.pending]
                    metrics.requested(await asyncio.to_thread(TABLE.announced, thread_id, ids))
                except Exception:  # one thread never stops the pass
                    logger.exception("watcher: thread %s skipped this pass", thread_id)

    async def lost_answerers(self) -> set[str]:
        """Every `UNANSWERABLE_EVERY_SECONDS`: the groups and `owner:<name>`s rows wait for that nobody is."""
        if time.monotonic() - self.checked_answerers_at < UNANSWERABLE_EVERY_SECONDS:
            return set()
        self.checked_answerers_at = time.monotonic()
        possible = possible_deciders()
        waiting = await asyncio.to_thread(TABLE.groups_waiting)
        lost = {g for g in waiting if any(p != "owner" and p not in possible for p in g.split("+"))}
        if oidc.provider() is None:
            known = {canonical(u.identity) for u in directory().users()}
            owners = await asyncio.to_thread(TABLE.owners_asked)
            lost |= {f"owner:{o}" for o in owners if canonical(o) not in known}
        return lost

    async def forget_old_acts(self) -> None:
        """Once an hour, delete the record of acts older than `ACTS_KEPT_SECONDS`."""
        now = time.time()
        if now - self.forgot_at >= FORGET_EVERY_SECONDS:
            self.forgot_at = now
            await asyncio.to_thread(self.lease.forget_acts, now - ACTS_KEPT_SECONDS)
            await asyncio.to_thread(outbox.forget, now - ACTS_KEPT_SECONDS)
            await reconciler.forget_settled()

    async def lead(self) -> bool:
        """Take or renew the lease; whether this process acts in this pass."""
        before = self.lease.token
        token = await self.lease.hold()
        if token != before:
            if token is None:
                logger.info("watcher: %s no longer leads", self.lease.holder)
            else:  # another leader may have sent notices meanwhile: reload them
                logger.info("watcher: %s leads (token %d)", self.lease.holder, token)
                self.announced = None
        return token is not None

    async def watch(self, client: LangGraphClient, entry: Entry, now: datetime) -> None:
        """Notices and deadlines of one thread; an approval nobody may answer any more is escalated."""
        roles = threads.roles(entry.escalations)
        owner = _owner(entry.thread)
        for pending in entry.pending:
            current = pending.escalated(roles)
            escalation = entry.escalations.get(pending.id)
            if not answerable(current.deciders, owner):
                await self.unanswerable(client, entry.thread, current, escalation, now)
                continue
            if self.settings.hitl_notify_url:
                await self.announce(entry.thread, current, escalation, now, "approval_pending")
            await self.channels.announce(entry.thread, current, escalation, now)
            if (deadline := _deadline(current, escalation)) and now >= deadline:
                await self.expire(client, entry.thread, current, escalation, now)

    async def announce(
        self,
        thread: dict[str, Any],
        pending: Pending,
        escalation: Escalation | None,
        now: datetime,
        event: str,
    ) -> None:
        """POST one notice for `pending` (once per interrupt per event, across restarts and processes)."""
        key = f"{NOTICE}{pending.id}:{event}"
        announced = self.announced if self.announced is not None else set()
        if key in announced:
            return
        announced.add(key)
        escalations = {pending.id: escalation} if escalation else {}
        url, public = self.settings.hitl_notify_url, self.settings.hitl_public_url
        notices = [
            outbox.Notice.post(key, "webhook", url, webhook.pause_notice(item, public, event, key))
            for item in inbox.items_of(thread, [pending], escalations, SYSTEM, now)[:1]
        ]
        if not await self.lease.act_once(key, with_it=outbox.recording(notices)):
            return
        for notice in notices:
            outbox.send(notice, self.settings)

    async def expire(
        self,
        client: LangGraphClient,
        thread: dict[str, Any],
        pending: Pending,
        escalation: Escalation | None,
        now: datetime,
    ) -> None:
        """Escalate `pending` once, or answer it with a rejection as the system actor."""
        value = pending.value if isinstance(pending.value, dict) else {}
        if value.get("on_expiry") == "escalate" and escalation is None:
            await self.escalate(client, thread, pending, now)
            return
        deadline = _deadline(pending, escalation)
        await self.turn_down(
            client, thread, pending, f"Expired: nobody decided before {deadline:%Y-%m-%d %H:%M:%S %Z}."
        )

    async def unanswerable(
        self,
        client: LangGraphClient,
        thread: dict[str, Any],
        pending: Pending,
        escalation: Escalation | None,
        now: datetime,
    ) -> None:
        """An approval nobody may answer any more: escalated once, else turned down as the system actor."""
        who = ", ".join(pending.deciders)
        if escalation is None and answerable([escalates_to(pending.value)], _owner(thread)):
            logger.warning("approval %s: nobody may answer it as %s any more; escalated", pending.id, who)
            await self.escalate(client, thread, pending, now)
            return
        logger.warning("approval %s: nobody may answer it (%s); turned down", pending.id, who)
        await self.turn_down(client, thread, pending, f"Nobody may answer it any more (it needs {who}).")

    async def turn_down(
        self, client: LangGraphClient, thread: dict[str, Any], pending: Pending, reason: str
    ) -> None:
        """Answer `pending` with its rejection (`rejection`) as the system actor, through the pipeline."""
        thread_id = str(thread["thread_id"])
        answer = rejection(pending, reason)
        if answer is None:
            return
        if await threads.graph_of(client, thread_id) is None:
            logger.warning("expiry of %s skipped: no recorded graph for thread %s", pending.id, thread_id)
            return
        command: dict[str, Any] = {"resume": {pending.id: answer}}
        try:
            receipts = await pipeline.decide(SYSTEM, thread_id, _owner(thread), [pending], command)
        except Exception as refusal:  # noqa: BLE001  (a person answered first: nothing to do)
            logger.info("expiry of %s skipped: %s", pending.id, refusal)
            return
        with contextlib.suppress(
            server_runs.RunNotStarted
        ):  # accepted: the reconciler gives it up, on the trail
            await server_runs.start_decided(
                thread, command, decided_by=SYSTEM, pending=[pending], receipts=receipts
            )
            metrics.per_action(metrics.EXPIRED, pending)

    async def escalate(
        self, client: LangGraphClient, thread: dict[str, Any], pending: Pending, now: datetime
    ) -> None:
        """Record that `pending` now needs a supervisor (or its `escalate_to`), with its own deadline."""
        value = pending.value if isinstance(pending.value, dict) else {}
        thread_id = str(thread["thread_id"])
        seconds = value.get("escalated_seconds")
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or seconds <= 0:
            seconds = self.settings.escalation_deadline_seconds
        if not await self.lease.act_once(f"{ESCALATED}{pending.id}"):
            return  # escalated by a leader before this one (its record is on the way), or no longer leading
        role = cast("Decider", escalates_to(pending.value))
        deadline = now + timedelta(seconds=float(seconds))
        escalation = threads.Escalation(thread_id, pending.id, role, now, deadline)
        await threads.put_escalation(client, escalation)
        TABLE.escalate(escalation)
        metrics.per_action(metrics.ESCALATED, pending)
        await audit.write([audit.system_event(thread_id, pending, "escalated", f"now needs {who(role)}")])
        if self.settings.hitl_notify_url:
            escalated = pending.escalated(threads.roles({pending.id: escalation}))
            await self.announce(thread, escalated, escalation, now, "approval_escalated")
        escalated = pending.escalated(threads.roles({pending.id: escalation}))
        await self.channels.announce(thread, escalated, escalation, now, "approval_escalated")


def _owner(thread: dict[str, Any]) -> str | None:
    metadata = thread.get("metadata")
    owner = metadata.get("owner") if isinstance(metadata, dict) else None
    return owner if isinstance(owner, str) else None


def _deadline(pending: Pending, escalation: Escalation | None) -> datetime | None:
    """When `pending` expires: its escalation's deadline, else its policy's (None: never)."""
    if escalation is not None:
        return escalation.deadline
    stamp = pending.deadline
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        logger.warning("approval %s has an unreadable deadline %r; it never expires", pending.id, stamp)
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
