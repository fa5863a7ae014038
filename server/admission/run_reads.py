"""What a run's admission reads from the engine: its assistant's graph, its thread, the state it starts from.

Each read is an API call into the engine (a few ms each on PostgreSQL), and a run on a thread
needs four of them: the assistant's graph and the thread, then the thread's recorded graph and
its head. Each pair is read at once; what they decide is checked in the order
`server.admission.runs` gives, so a refusal is the one it would be if they were read one by one.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client

from server.admission import allowlist, overrides
from server.coordination import run_starts
from server.decisions.pending import ResumeRefused
from server.identity.access import as_server, is_not_found
from server.records import threads
from server.runtime.checkpointer import shared_runtime

if TYPE_CHECKING:
    from langgraph_sdk import Auth

    from server.identity.users import User


async def graph_and_thread(value: Auth.types.RunsCreate) -> tuple[str, dict[str, Any] | None]:
    """The graph the run's assistant runs, and the run's thread (None for a run that makes one)."""
    thread_id = value.get("thread_id")
    graph_read = overrides.graph_id_of(str(value.get("assistant_id")))
    if thread_id is None:
        return await graph_read, None
    graph_id, thread = await asyncio.gather(graph_read, thread_of(str(thread_id)), return_exceptions=True)
    if isinstance(graph_id, BaseException):  # the graph's error first: it is checked first
        raise graph_id
    if isinstance(thread, BaseException):
        raise thread
    return graph_id, thread


async def start_state(
    user: User, thread: dict[str, Any], graph_id: str, admitted: allowlist.Admitted
) -> tuple[dict[str, Any], list[str]]:
    """The state a run on `thread` starts from (the head, or a supervisor's fork); its rewrites.

    A run naming the thread's head (as `useStream` does with every resume) starts from the head.

    Raises:
        ResumeRefused: 422 for a thread of another graph, else 409 while it runs, else the fork's refusal.
    """
    thread_id = str(thread["thread_id"])
    recorded, state = await asyncio.gather(
        _recorded_graph(thread_id), state_of(thread_id), return_exceptions=True
    )
    if isinstance(recorded, BaseException):
        raise recorded
    if recorded is not None and recorded != graph_id:  # a run with another graph would misread its state
        raise ResumeRefused(
            422, f"Thread {thread_id} belongs to the {recorded} agent; run it with {recorded}."
        )
    if thread.get("status") == "busy":
        raise ResumeRefused(409, "This thread is running; try again when it pauses.")
    if isinstance(state, BaseException):
        raise state
    head = (state.get("checkpoint") or {}).get("checkpoint_id")
    fork = allowlist.fork_of(admitted.checkpoint, head, supervisor=user.role == "supervisor")
    if fork is None:
        return state, admitted.rewrites
    return await state_of(thread_id, fork), [*admitted.rewrites, f"starts from checkpoint {fork}"]


async def thread_of(thread_id: str) -> dict[str, Any] | None:
    """The thread record as the server sees it; None when there is none."""
    try:
        with as_server():
            return dict(await get_client().threads.get(thread_id))
    except Exception as error:
        if is_not_found(error):
            return None
        raise


async def state_of(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    """A thread's state as the server sees it (at `checkpoint_id`, for a fork).

    Pending approvals are read from here, never from the thread record: a copied thread
    reports `idle` while its state still holds the interrupt, and a record can list per-call
    interrupts already answered.
    """
    with as_server():
        return dict(await get_client().threads.get_state(thread_id, checkpoint_id=checkpoint_id))


async def ended_head_run(thread_id: str, state: dict[str, Any]) -> str | None:
    """The run that wrote `state`, if it has finished (`run_starts.claim` takes its claim at once).

    None in one process, which claims nothing, and when that run is unknown or still going.
    """
    if not shared_runtime():
        return None
    writer = (state.get("metadata") or {}).get("run_id")
    with as_server():
        return await run_starts.ended_run(get_client(), thread_id, writer)


async def _recorded_graph(thread_id: str) -> str | None:
    with as_server():
        return await threads.graph_of(get_client(), thread_id)
