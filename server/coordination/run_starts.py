"""One run starting per thread across replicas: a row naming the run each thread is starting.

`server.http.auth` admits a run only on a thread that is not busy, and in one process it keeps the
threads it is admitting in memory. Replicas do not share that memory: two of them could each
see a thread idle and admit a run on it at once, and the engine would run both. So on a
shared runtime the admission also claims the thread for its run id in the layer's store
(`approval_claims`, key `run-start:<thread>`). A later run takes the claim over once the
run holding it has finished, or never appeared within `START_HOLD_SECONDS`.
Not for answers to approvals (`server.coordination.claims`, by interrupt id).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite

from server.decisions.pending import ResumeRefused
from server.identity.access import is_not_found
from server.ledger import storage
from server.ledger.storage import approval_claims

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient
    from sqlalchemy import Engine

START_HOLD_SECONDS = 10.0
"""How long a claim whose run never appeared (refused later, or its replica died) holds the thread."""
IN_FLIGHT = frozenset({"pending", "running"})


def claim_key(thread_id: str) -> str:
    """The claim row of `thread_id`'s starting run."""
    return f"run-start:{thread_id}"


async def claim(
    client: LangGraphClient,
    thread_id: str,
    run_id: str,
    *,
    ended: str | None = None,
    engine: Engine | None = None,
) -> None:
    """Claim `thread_id` for `run_id`, or refuse while another run on it starts or runs.

    `client` reads the holder's run from the engine (as the server). `ended` names a run the
    caller saw finished (`ended_run`: the one that wrote the thread's head, which holds the claim
    after a pause): its claim is taken over at once, without reading it again.

    Raises:
        ResumeRefused: 409 saying whether another run is running or being started.
    """
    shared: Engine = await asyncio.to_thread(storage.using, engine)
    now = time.time()
    held = await asyncio.to_thread(_take, shared, thread_id, run_id, now, ended)
    if held is None:
        return
    holder, since = held
    status = await run_status(client, thread_id, holder)
    if status in IN_FLIGHT:
        raise ResumeRefused(409, "This thread is running; try again when it pauses.")
    if status is None and now - since < START_HOLD_SECONDS:
        raise ResumeRefused(409, "Another run is being started on this thread; try again when it pauses.")
    if await asyncio.to_thread(_take, shared, thread_id, run_id, now, holder) is not None:
        raise ResumeRefused(409, "Another run is being started on this thread; try again when it pauses.")


async def moved(thread_id: str, planned: str, actual: str, *, engine: Engine | None = None) -> None:
    """The run admitted as `planned` was created as `actual`: the thread's claim follows it.

    The server's own SDK call names its run itself; the claim then ends with that run.
    """
    shared: Engine = await asyncio.to_thread(storage.using, engine)
    await asyncio.to_thread(_take, shared, thread_id, actual, time.time(), planned)


async def release(thread_id: str, run_id: str, *, engine: Engine | None = None) -> None:
    """Let go of `thread_id` if `run_id` holds it: its admission was refused, so it never starts."""
    shared: Engine = await asyncio.to_thread(storage.using, engine)

    def drop() -> None:
        with shared.begin() as conn:
            conn.execute(
                delete(approval_claims).where(
                    approval_claims.c.interrupt_id == claim_key(thread_id),
                    approval_claims.c.claimed_by == run_id,
                )
            )

    await asyncio.to_thread(drop)


def _take(
    engine: Engine, thread_id: str, run_id: str, now: float, replacing: str | None
) -> tuple[str, float] | None:
    """Claim the thread (taking over from `replacing`, or a lapsed claim); else (holder, since)."""
    row = approval_claims.c
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    lapsed = row.claimed_at < now - START_HOLD_SECONDS
    statement = dialect.insert(approval_claims).values(
        interrupt_id=claim_key(thread_id), claimed_by=run_id, claimed_at=now
    )
    statement = statement.on_conflict_do_update(
        index_elements=[row.interrupt_id],
        set_={"claimed_by": run_id, "claimed_at": now},
        where=lapsed | (row.claimed_by == run_id) | (row.claimed_by == (replacing or run_id)),
    )
    with engine.begin() as conn:
        if conn.execute(statement.returning(row.interrupt_id)).first() is not None:
            return None
        current = conn.execute(
            select(row.claimed_by, row.claimed_at).where(row.interrupt_id == claim_key(thread_id))
        ).first()
    return (str(current[0]), float(current[1])) if current is not None else None


async def ended_run(client: LangGraphClient, thread_id: str, run_id: object) -> str | None:
    """`run_id` if that run of the thread has finished (its status is final), else None (never raises)."""
    if not isinstance(run_id, str) or not run_id:
        return None
    try:
        status = await run_status(client, thread_id, run_id)
    except Exception:  # noqa: BLE001  (a guess that saves a read: without it, `claim` reads the holder itself)
        return None
    return run_id if status is not None and status not in IN_FLIGHT else None


async def run_status(client: LangGraphClient, thread_id: str, run_id: str) -> str | None:
    """The run's status, or None when the engine has no such run (yet)."""
    try:
        run = await client.runs.get(thread_id, run_id)
    except Exception as error:
        if is_not_found(error):
            return None
        raise
    return str(run.get("status")) if run else None
