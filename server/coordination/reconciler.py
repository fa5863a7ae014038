"""The reconciler: every accepted decision is applied, once, whatever happened to its run.

Runs on the watcher's leader each pass (`server.coordination.watcher`), fenced by its lease. For each
decision whose run had its grace (`server.decisions.store.due`) it reads the run admitted to apply
it: a success means the decision was applied (settled). Else it reads the thread: busy means a run
is on it (left alone); interrupts no longer waiting mean the decision was applied (settled);
still waiting means its run never came (its replica died, the database or Redis blinked) or
failed, so the decision is sent again as its decider sent it, through the same admission
(`server.decisions.server_runs.start_admitted`: the re-send becomes the run that applies it, with
the same receipts), and the server starts that run. The decider is whom the decision's signed receipts
name (`server.decisions.provenance`), never the row's word: a row they do not stand behind is
refused, never applied. After `MAX_ATTEMPTS` (runs started, or passes that failed before one
started) it is given up, as at once is a decision whose run the engine will not start
(`server.decisions.server_runs.RunNotStarted`): a `not_applied` record on the trail, listed in
`GET /analytics`, and its interrupts answerable again. The tool's idempotency by tool call id
stays the last guard. Its runs start through the server's door (`server.decisions.server_runs`).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from typing import TYPE_CHECKING, Any

from langgraph_sdk import Auth

from server.coordination import run_starts
from server.coordination.inbox_table import TABLE
from server.decisions import provenance, server_runs, store
from server.decisions.decision import IDEMPOTENCY_HEADER
from server.decisions.pending import Pending
from server.identity.access import as_server, is_not_found
from server.records import audit

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

    from server.coordination.leadership import Lease
    from server.decisions.store import Decision

logger = logging.getLogger(__name__)
MAX_ATTEMPTS = 6
"""Runs started for one decision (its own included) before it is given up."""
FORGET_AFTER_SECONDS = 30 * 24 * 3600.0
"""How long a settled decision is kept (a re-send of it is answered "already applied" meanwhile)."""


async def reconcile(client: LangGraphClient, lease: Lease) -> int:
    """Apply what was accepted and not applied (as the lease holder); how many runs it started."""
    started = 0
    for decision in await asyncio.to_thread(store.due):
        if not await lease.keep():
            logger.warning("reconciler: the lease lapsed; the new leader goes on")
            break
        try:
            started += await reconcile_one(client, decision)
        except Exception as error:  # one decision never stops the pass
            logger.exception("reconciler: decision %s skipped this pass", decision.decision_id)
            await _failed_attempt(decision, error)
    return started


async def _failed_attempt(decision: Decision, error: Exception) -> None:
    """A pass that failed on `decision` is an attempt: given up after `MAX_ATTEMPTS`, never tried for ever.

    Backed off like its runs (`store.due`), so a blink of the engine or the database costs a few attempts.
    """
    tried = decision.attempts + 1
    try:
        if tried >= MAX_ATTEMPTS:
            why = f"{tried} attempts failed, the last with {type(error).__name__}: {error}"
            await _give_up(decision, why)
        else:
            await asyncio.to_thread(store.attempted, decision.decision_id)
    except Exception:  # the store itself is out of reach: the next pass tries again
        logger.exception("reconciler: could not count a failed attempt at decision %s", decision.decision_id)


async def reconcile_one(client: LangGraphClient, decision: Decision) -> int:
    """Settle, re-run or give up one decision; 1 if a run was started."""
    if await _applied_by_its_run(client, decision):
        await asyncio.to_thread(store.settle, decision.decision_id, "applied")
        return 0
    with as_server():
        try:
            thread = dict(await client.threads.get(decision.thread_id))
        except Exception as error:
            if not is_not_found(error):
                raise
            await _give_up(decision, "its thread was deleted")
            return 0
        if thread.get("status") == "busy":
            return 0  # a run is on it: it applies the decision, or the next pass looks again
        state = dict(await client.threads.get_state(decision.thread_id))
    waiting = {p.id for p in Pending.from_state(state)}
    if not waiting.intersection(decision.interrupt_ids):
        await asyncio.to_thread(store.settle, decision.decision_id, "applied")
        return 0
    if decision.attempts >= MAX_ATTEMPTS:
        await _give_up(decision, f"{decision.attempts} runs did not apply it")
        return 0
    return await _send_again(decision)


async def _applied_by_its_run(client: LangGraphClient, decision: Decision) -> bool:
    """Whether the run admitted to apply `decision` ended in success: it took the answer.

    That run was admitted against the thread's head while the interrupts waited, holding the
    thread (`run_starts`), so its success means they were answered: one read settles the
    decision, instead of the thread and its state. Any other outcome (no such run, still going,
    failed, cancelled) is judged from the thread.
    """
    if not decision.run_id:
        return False
    with as_server():
        return await run_starts.run_status(client, decision.thread_id, decision.run_id) == "success"


async def _send_again(decision: Decision) -> int:
    """Send the decision again as its decider did, whom its signatures name; the server starts the run.

    A decision its signatures do not stand behind is refused (`store.refuse`), never sent.
    """
    try:
        decider = (await asyncio.to_thread(provenance.vouch, decision)).user
    except provenance.UnvouchedError as unvouched:
        await asyncio.to_thread(store.refuse, decision, str(unvouched))
        TABLE.mark(decision.thread_id)
        return 0
    configurable: dict[str, Any] = {}
    if decision.idempotency_key:
        configurable[IDEMPOTENCY_HEADER] = decision.idempotency_key
    try:
        await server_runs.start_admitted(
            decider,
            decision.thread_id,
            copy.deepcopy(decision.sent),
            assistant_id=decision.assistant_id or None,  # a decision made outside a run: the thread's graph
            configurable=configurable,
        )
    except Auth.exceptions.HTTPException as refusal:
        logger.info("reconciler: decision %s not sent again now: %s", decision.decision_id, refusal.detail)
        return 0
    except server_runs.RunNotStarted as not_started:
        await _give_up(decision, f"its run cannot start: {not_started.why}")
        return 0
    logger.warning(
        "reconciler: decision %s (%s) was accepted but not applied; started a run to apply it",
        decision.decision_id,
        decision.describe(),
    )
    return 1


async def _give_up(decision: Decision, why: str) -> None:
    """Mark the decision failed, audited; its interrupts may be answered again."""
    logger.error("reconciler: giving up decision %s (%s): %s", decision.decision_id, decision.describe(), why)
    message = f"{decision.describe()} was not applied: {why}; the approval may be answered again."
    record = audit.not_applied(decision.thread_id, decision.interrupt_ids, decision.receipts, message)
    await asyncio.to_thread(store.give_up, decision, record)
    TABLE.mark(decision.thread_id)


async def forget_settled() -> None:
    """Delete the decisions settled more than `FORGET_AFTER_SECONDS` ago."""
    await asyncio.to_thread(store.forget, time.time() - FORGET_AFTER_SECONDS)
