"""The one door for the runs the server starts itself: a withdrawal's, the watcher's, the reconciler's.

Every such run is created here and nowhere else in `server/` (a test scans for it); `on_run`
refuses a server-made run that did not come through (`admit`). Each carries what a client's run
gets from the run gate (`server.admission.runs.tell`): whose records it works on (the thread's
owner, with their roles and groups), who asked, who approved so far, the receipts, who decides an
escalated call. `start_decided` starts the run of a decision the server accepted itself (a
withdrawal, an expiry), on the thread's assistant or, once that is deleted, its recorded graph;
`start_admitted` sends a person's answer for them (a Slack press, the reconciler's re-send)
through the run gate as theirs, on the assistant it was sent through, never another one. A run
the engine will not start raises `RunNotStarted`, for the caller to record its decision as not
applied. Not for deciding anything: the pipeline decided before.
"""

from __future__ import annotations

import uuid
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import httpx
from langgraph_sdk import get_client

from hitl.gate.caller import ACTING_FOR_KEY
from hitl.gate.trusted_state import trusted_receipts
from server.admission import runs
from server.admission.runs import admit_run_as, refuse
from server.coordination import run_starts
from server.coordination.inbox_table import TABLE
from server.identity.access import as_server, is_not_found
from server.records import threads
from server.runtime.checkpointer import shared_runtime

if TYPE_CHECKING:
    from collections.abc import Mapping

    from langgraph_sdk.client import LangGraphClient

    from hitl.contracts.records import ApprovalReceipt
    from server.decisions.pending import Pending
    from server.identity.users import User

_STARTING: ContextVar[bool] = ContextVar("hitl_server_run_starting", default=False)
"""Set while this door creates a run: the only time `on_run` lets the server's own run through."""
CONFLICT = 409


class RunNotStarted(Exception):  # noqa: N818  (an outcome the caller records, not a crash)
    """The engine will not start the run (no assistant or graph to run, a payload it refuses): not a blink."""

    def __init__(self, why: str) -> None:
        """Say `why` in words a supervisor reads on the trail."""
        super().__init__(why)
        self.why = why


async def start_decided(  # noqa: PLR0913  (the run, whose it is, and the decision it applies)
    thread: Mapping[str, Any],
    command: dict[str, Any],
    *,
    decided_by: User,
    pending: list[Pending],
    receipts: list[ApprovalReceipt],
    assistant_id: str | None = None,
    state: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Start the run that applies a decision the server accepted itself; the run record.

    `thread` as the server read it; `command` the accepted command; `decided_by` who decided
    (a person withdrawing, the `system` actor); `pending` what it answers (escalations applied);
    `receipts` the decision's; `assistant_id` the assistant to run (default: the thread's
    recorded graph); `state` the thread's, if the caller read it (else it is read here).

    Raises:
        RunNotStarted: the engine will not start it (the caller records the decision as not applied).
    """
    thread_id = str(thread["thread_id"])
    value = await _value(thread_id, assistant_id, command, {}, fall_back=True)
    if state is None:
        with as_server():
            state = dict(await get_client().threads.get_state(thread_id))
    values = state.get("values")
    signed = values.get("approval_receipts") if isinstance(values, dict) else None
    so_far = trusted_receipts(signed, thread_id)
    owner = (thread.get("metadata") or {}).get("owner")
    runs.tell(
        value,
        works_for=runs.works_for(thread, decided_by),
        asked_by=runs.askers(pending, owner, decided_by),
        receipts=[*so_far, *receipts],
        pending=pending,
    )
    return await _create(value, claimed=False)


async def start_admitted(
    user: User,
    thread_id: str,
    command: dict[str, Any],
    *,
    assistant_id: str | None = None,
    configurable: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Send `user`'s answer `command` through the run gate as theirs (`admit_run_as`), then start its run.

    The gate checks and accepts it (or recognises it as theirs, sent again), and writes the
    server's word; `configurable` carries what their request would (an Idempotency-Key). The
    run uses the assistant the answer was sent through (`assistant_id`), never another one in its
    place; without one, the thread's recorded graph.

    Raises:
        langgraph_sdk.Auth.exceptions.HTTPException: the gate refused it (the reason for `user`).
        RunNotStarted: the engine will not start it (the caller records the decision as not applied).
    """
    value = await _value(thread_id, assistant_id, command, configurable or {}, fall_back=False)
    await admit_run_as(user, value)  # type: ignore[arg-type]
    return await _create(value, claimed=shared_runtime())


def admit(value: Mapping[str, Any]) -> None:
    """`on_run` for the server's own runs: only those this door creates, each naming whose records.

    Raises:
        langgraph_sdk.Auth.exceptions.HTTPException: 403 for a run the server creates outside this door.
    """
    kwargs = value.get("kwargs")
    config = kwargs.get("config") if isinstance(kwargs, dict) else None
    configurable = config.get("configurable") if isinstance(config, dict) else None
    person = configurable.get(ACTING_FOR_KEY) if isinstance(configurable, dict) else None
    if not _STARTING.get() or not (isinstance(person, dict) and person.get("identity")):
        raise refuse(
            403,
            "The server starts its own runs only through server.decisions.server_runs, which names whose "
            "records each works on; this one did not pass it.",
        )


async def _value(
    thread_id: str,
    assistant_id: str | None,
    command: dict[str, Any],
    configurable: dict[str, Any],
    *,
    fall_back: bool,
) -> dict[str, Any]:
    """The run as the engine's `threads.create_run` handlers see it: what admission reads and writes."""
    return {
        "thread_id": thread_id,
        "assistant_id": await _assistant(thread_id, assistant_id, fall_back=fall_back),
        "run_id": str(uuid.uuid4()),
        "kwargs": {"command": command, "config": {"configurable": dict(configurable)}},
    }


async def _assistant(thread_id: str, wanted: str | None, *, fall_back: bool) -> str:
    """The assistant to run: `wanted` while it exists (an id, or a graph's name), else the thread's graph.

    A supervisor may delete a thread's custom assistant while an approval waits on it. The
    server's own decisions (`fall_back`: a withdrawal, an expiry) then run on the thread's graph,
    whose own assistant the watcher resumes with anyway (the run's policy override is kept in the
    thread's state, not in the assistant); a person's answer sent through that assistant is not
    moved to another one.

    Raises:
        RunNotStarted: there is no assistant to run it with.
    """
    client = get_client()
    with as_server():
        if wanted and await _exists(client, wanted):
            return wanted
        if wanted and not fall_back:
            msg = f"assistant {wanted}, which the answer was sent through, no longer exists"
            raise RunNotStarted(msg)
        try:
            graph_id = await threads.graph_of(client, thread_id)
        except Exception as error:
            if not is_not_found(error):
                raise
            graph_id = None
        if graph_id is None:
            gone = f" (assistant {wanted} no longer exists)" if wanted else ""
            msg = f"thread {thread_id} has no assistant or served graph to run it with{gone}"
            raise RunNotStarted(msg)
    return graph_id


async def _exists(client: LangGraphClient, assistant: str) -> bool:
    """Whether the engine has the assistant; a graph's name is taken as it is (the engine runs its own)."""
    try:
        uuid.UUID(assistant)
    except ValueError:
        return True
    try:
        await client.assistants.get(assistant)
    except Exception as error:
        if is_not_found(error):
            return False
        raise
    return True


async def _create(value: dict[str, Any], *, claimed: bool) -> dict[str, Any]:
    """Create the run `value` describes, as the server, through this door; the run record.

    `claimed`: admission claimed the thread for the planned run id (replicas): the claim follows
    the run the engine names.
    """
    thread_id, kwargs = str(value["thread_id"]), value["kwargs"]
    token = _STARTING.set(True)
    try:
        with as_server():
            run = await get_client().runs.create(  # type: ignore[call-overload]
                thread_id, str(value["assistant_id"]), command=kwargs["command"], config=kwargs["config"]
            )
    except httpx.HTTPStatusError as error:
        status = error.response.status_code
        if status < 400 or status >= 500 or status == CONFLICT:  # noqa: PLR2004  (the client-error range)
            raise
        why = f"the engine refused to start its run ({status}: {_detail(error)})"
        raise RunNotStarted(why) from None
    finally:
        _STARTING.reset(token)
    if claimed:
        await run_starts.moved(thread_id, str(value["run_id"]), str(run["run_id"]))
    TABLE.mark(thread_id)  # the engine made the server's own run, which no auth handler marks
    return dict(run)


def _detail(error: httpx.HTTPStatusError) -> str:
    try:
        body = error.response.json()
    except ValueError:
        return error.response.text[:200]
    return str(body.get("detail") if isinstance(body, dict) else body)[:200]
