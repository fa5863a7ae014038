"""The server's watcher: tells people an approval is waiting and enforces deadlines.

A background task started with the server's HTTP app. Each pass reads the interrupted
threads (as the inbox does), POSTs a notice for approvals not yet announced, and for each
approval past its deadline either escalates it (the next role up must decide; notice sent)
or answers it as the `system` actor through `server.auth.gate_resume`, the same checked,
claimed and audited path a person's answer takes. A deadline that passed while the server
was down is handled on the first pass after start.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client

from hitl.deadlines import ESCALATES_TO
from hitl.settings import Settings, get_settings
from server import audit, inbox, notify
from server.access import as_server
from server.auth import gate_resume
from server.pending_index import INDEX
from server.users import SYSTEM_ACTOR, User

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

    from server.resume_gate import Pending

logger = logging.getLogger(__name__)
SYSTEM = User(identity=SYSTEM_ACTOR, role="supervisor")


def expiry_answer(pending: Pending, reason: str) -> Any:  # noqa: ANN401  (the answer's shape follows the interrupt's)
    """The answer that rejects `pending`, or None when its shape allows no rejection."""
    value = pending.value if isinstance(pending.value, dict) else {}
    if isinstance(value.get("action_requests"), list):
        configs = value.get("review_configs") or []
        if not all("reject" in c.get("allowed_decisions", []) for c in configs):
            return None
        return {"decisions": [{"type": "reject", "message": reason} for _ in value["action_requests"]]}
    if value.get("type") == "tool_approval":
        return (
            {"type": "reject", "message": reason} if "reject" in value.get("allowed_decisions", []) else None
        )
    if value.get("type") == "approval_request":
        return {"approved": False, "reason": reason}
    return None


class Watcher:
    """One pass at a time over the waiting approvals; `run` repeats it forever."""

    def __init__(self, settings: Settings | None = None) -> None:
        """Use `settings` (the process settings by default)."""
        self.settings = settings or get_settings()
        self.announced: set[str] = set()

    async def run(self) -> None:
        """Pass, sleep, repeat; a failing pass is logged and the next one runs."""
        while True:
            try:
                await self.tick()
            except Exception:
                logger.exception("watcher pass failed")
            await asyncio.sleep(self.settings.hitl_watch_interval)

    async def tick(self, now: datetime | None = None) -> None:
        """One pass: notices for new approvals, outcomes for expired ones."""
        now = now or datetime.now(UTC)
        client = get_client()
        with as_server():
            await INDEX.refresh(client)
            for thread, waiting in INDEX.threads():
                metadata = thread.get("metadata") or {}
                for pending in waiting:
                    current = pending.escalated(metadata)
                    if self.settings.hitl_notify_url and pending.id not in self.announced:
                        await self.announce(thread, current, now, "approval_pending")
                    if (deadline := _deadline(current, metadata)) and now >= deadline:
                        await self.expire(client, thread, current, now)

    async def announce(self, thread: dict[str, Any], pending: Pending, now: datetime, event: str) -> None:
        """POST one notice for `pending` (once per interrupt per event)."""
        self.announced.add(pending.id if event == "approval_pending" else f"{pending.id}:{event}")
        for item in inbox.items_of(thread, [pending], SYSTEM, now)[:1]:
            await notify.send_notice(
                self.settings.hitl_notify_url, notify.pause_notice(item, self.settings.hitl_public_url, event)
            )

    async def expire(
        self, client: LangGraphClient, thread: dict[str, Any], pending: Pending, now: datetime
    ) -> None:
        """Escalate `pending` once, or answer it with a rejection as the system actor."""
        value = pending.value if isinstance(pending.value, dict) else {}
        thread_id = str(thread["thread_id"])
        metadata = thread.get("metadata") or {}
        if value.get("on_expiry") == "escalate" and pending.escalated_to is None:
            await self.escalate(client, thread, pending, now)
            return
        reason = f"Expired: nobody decided before {_deadline(pending, metadata):%Y-%m-%d %H:%M:%S %Z}."
        answer = expiry_answer(pending, reason)
        if answer is None:
            return
        command: dict[str, Any] = {"resume": {pending.id: answer}}
        try:
            await gate_resume(SYSTEM, thread_id, metadata.get("owner"), [pending], command)
        except Exception as refusal:  # noqa: BLE001  (a person answered first: nothing to do)
            logger.info("expiry of %s skipped: %s", pending.id, refusal)
            return
        await client.runs.create(thread_id, str(metadata.get("graph_id") or "support"), command=command)  # type: ignore[call-overload]
        INDEX.mark(thread_id)  # the watcher's own calls carry no caller, so no auth handler marks them

    async def escalate(
        self, client: LangGraphClient, thread: dict[str, Any], pending: Pending, now: datetime
    ) -> None:
        """Record that `pending` now needs a supervisor, with its own deadline; audit and announce it."""
        value = pending.value if isinstance(pending.value, dict) else {}
        thread_id = str(thread["thread_id"])
        metadata = thread.get("metadata") or {}
        seconds = float(value.get("escalated_seconds") or self.settings.escalation_deadline_seconds)
        record = {
            "required_role": ESCALATES_TO,
            "escalated_at": now.isoformat(),
            "deadline": (now + timedelta(seconds=seconds)).isoformat(),
        }
        escalations = {**(metadata.get("escalations") or {}), pending.id: record}
        await client.threads.update(thread_id, metadata={"escalations": escalations})
        INDEX.mark(thread_id)
        escalated = {**thread, "metadata": {**metadata, "escalations": escalations}}
        await audit.write(
            client, [audit.system_event(thread_id, pending, "escalated", f"now needs a {ESCALATES_TO}")]
        )
        if self.settings.hitl_notify_url:
            await self.announce(
                escalated, pending.escalated(escalated["metadata"]), now, "approval_escalated"
            )


def _deadline(pending: Pending, metadata: dict[str, Any]) -> datetime | None:
    record = (metadata.get("escalations") or {}).get(pending.id)
    stamp = record["deadline"] if record else pending.deadline
    return datetime.fromisoformat(stamp) if stamp else None
