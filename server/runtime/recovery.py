"""Start-up recovery of `langgraph dev`: its thread and run records put back in line with the checkpoints.

The embedded runtime saves thread and run records every 10 s, while `server.runtime.checkpointer` commits
every checkpoint. After a crash a thread may have checkpoints but no record (it is recreated under
the same id, graph and owner), a stale status (recomputed), or a run the runtime would replay over
the turn it already wrote (closed, or continued from its last checkpoint). Uses the embedded
runtime's own API; the production server keeps records and checkpoints together and needs none of it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from server.runtime.checkpointer import EMBEDDED_EDITION, durable_checkpointer, runtime_edition

if TYPE_CHECKING:
    from server.runtime.checkpointer import DurableSaver

logger = structlog.stdlib.get_logger(__name__)

RESTORED_METADATA = ("graph_id", "assistant_id", "owner")
"""Thread metadata a recreated thread gets back from its last checkpoint: its graph, and its owner
(a thread whose record was saved before its first run gets back those it lacks)."""


@dataclass
class Recovery:
    """What start-up recovery changed, by id."""

    recreated_threads: list[str] = field(default_factory=list)
    refreshed_threads: list[str] = field(default_factory=list)
    closed_runs: list[str] = field(default_factory=list)
    continued_runs: list[str] = field(default_factory=list)


async def recover_after_crash() -> Recovery:
    """Recover, when this is `langgraph dev` with the durable checkpointer; a no-op anywhere else.

    Call it from the server's lifespan before anything else awaits: the run queue has started,
    and holding its lock from the first instant keeps every left-over run pending meanwhile.
    """
    from langgraph_api import config  # noqa: PLC0415 (these exist only inside the server)

    if runtime_edition() != EMBEDDED_EDITION or not config.USE_CUSTOM_CHECKPOINTER:
        return Recovery()
    from langgraph_runtime.ops import RUN_LOCK  # noqa: PLC0415  (the embedded runtime's only)

    async with RUN_LOCK, durable_checkpointer() as saver:
        recovery = await recover(saver)
    await logger.ainfo(
        "Recovered the dev server's records from its durable checkpoints",
        recreated_threads=len(recovery.recreated_threads),
        refreshed_threads=len(recovery.refreshed_threads),
        closed_runs=recovery.closed_runs,
        continued_runs=recovery.continued_runs,
    )
    return recovery


async def recover(saver: DurableSaver) -> Recovery:
    """Bring the embedded runtime's records in line with `saver`'s checkpoints.

    Every thread whose latest checkpoint was written by a run the records do not know, or that
    has a pending run which already wrote checkpoints (the runtime would apply its input again),
    gets its status, values and interrupts from the checkpoint. Such a run is closed, unless
    it was cut off mid-step: then it continues from the checkpoint it reached, without its input.
    A thread that cannot be recovered (its graph is no longer served, say) is logged and skipped.
    """
    from langgraph_runtime.database import connect  # noqa: PLC0415

    recovery = Recovery()
    async with connect() as conn:
        records = {str(thread["thread_id"]): thread["metadata"] or {} for thread in conn.store["threads"]}
        known_runs = {str(run["run_id"]) for run in conn.store["runs"]}
        pending: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for run in conn.store["runs"]:
            if run["status"] == "pending":
                pending[str(run["thread_id"])].append(run)

        for thread_id, latest in (await saver.latest_metadata()).items():
            writers = await saver.writer_run_ids(thread_id) if pending[thread_id] else set()
            started = [run for run in pending[thread_id] if str(run["run_id"]) in writers]
            known = thread_id in records
            if known and latest.get("run_id") in known_runs and not started:
                continue
            try:
                closed, continued = await _recover_thread(
                    conn, thread_id, latest, started, records.get(thread_id)
                )
            except Exception:  # noqa: BLE001  (one bad thread must not keep the server from starting)
                await logger.awarning(
                    "Could not recover a thread from its checkpoints", thread_id=thread_id, exc_info=True
                )
                continue
            (recovery.refreshed_threads if known else recovery.recreated_threads).append(thread_id)
            recovery.closed_runs += closed
            recovery.continued_runs += continued
    return recovery


async def _recover_thread(
    conn: Any,  # noqa: ANN401  (the embedded runtime's connection)
    thread_id: str,
    latest: dict[str, Any],
    started: list[dict[str, Any]],
    metadata: dict[str, Any] | None,
) -> tuple[list[str], list[str]]:
    """Recreate (no `metadata`: no record) or refresh one thread's record; the runs closed and continued."""
    from langgraph_api.state import state_snapshot_to_thread_state  # noqa: PLC0415
    from langgraph_runtime.ops import Runs, Threads  # noqa: PLC0415

    restored = {key: latest[key] for key in RESTORED_METADATA if key in latest}
    if metadata is None:
        await anext(await Threads.put(conn, thread_id, metadata=restored, if_exists="do_nothing"))
    elif missing := {key: restored[key] for key in restored.keys() - metadata.keys()}:
        # Saved after the thread was made but before its first run was: without its graph the
        # runtime reads the thread's state as empty (idle, no interrupt) and nobody sees the pause.
        await anext(await Threads.patch(conn, thread_id, metadata=missing))
    snapshot = await Threads.State.get(conn, {"configurable": {"thread_id": thread_id}})
    at_rest = not snapshot.tasks or bool(snapshot.interrupts)
    closed, continued = [], []
    for run in started:
        run_id = str(run["run_id"])
        if run_id == latest.get("run_id") and not at_rest:
            run["kwargs"].update(input=None, command=None)
            continued.append(run_id)
        else:
            await Runs.set_status(conn, run["run_id"], "success")
            closed.append(run_id)
    await Threads.set_status(conn, thread_id, state_snapshot_to_thread_state(snapshot), None)
    return closed, continued
