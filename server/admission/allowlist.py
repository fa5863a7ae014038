"""What a client may send to a run: an allowlist, checked before anything is saved.

Anyone may send new human messages (text, bounded in size) or a `command` holding only a
`resume`; a run may carry a policy override in `context["policy"]`. Everything else that
changes state or control flow (updates, `goto`, `Send`, breakpoints, checkpoint forks,
non-human messages, other state keys, server-owned metadata, webhooks, run-cancelling
multitask strategies) is refused, except for a supervisor, whose writes may still never
carry a tool call or gate-owned state. Pure: `server.http.auth` calls it with the run's value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.admission.messages import check_input, state_write, supervisor_only
from server.decisions.pending import ResumeRefused

if TYPE_CHECKING:
    from collections.abc import Mapping

    from server.identity.users import User


RESERVED_METADATA = frozenset({"owner", "graph_id", "assistant_id", "escalations", "thread_id", "run_id"})
"""Metadata keys the server owns (besides every key starting with `hitl`)."""

CONTEXT_KEYS = frozenset({"policy"})
"""What a run's `context` may hold (every key of it also lands in the run's `configurable`)."""

CONFIG_KEYS = frozenset({"configurable", "tags", "recursion_limit", "metadata", "run_name"})
SERVER_CONFIGURABLE = frozenset(
    {
        "langgraph_auth_user",
        "langgraph_auth_user_id",
        "langgraph_auth_permissions",
        "langgraph_request_id",
        "__after_seconds__",
        "__request_start_time_ms__",
        "__context_provided__",
        "__langsmith_project__",
        "__langsmith_example_id__",
        "__otel_traceparent__",
        "__otel_tracestate__",
        "__dd_trace_headers__",
        "__encryption_context__",
        "__event_streaming_v2",
    }
)
"""`configurable` keys the server itself writes before the auth handler runs."""
FORK_KEYS = frozenset({"checkpoint_id", "checkpoint_ns", "checkpoint_map"})
"""`configurable` keys that start a run from another checkpoint (supervisors only)."""

COMMAND_TAG = "Command"
"""The `lg_name` LangGraph JS's `new Command({resume})` serialises with (and `goto: []`): the same command."""
STRATEGIES = frozenset({"reject", "enqueue"})
"""Multitask strategies open to everyone; `interrupt` and `rollback` cancel other runs."""


@dataclass(frozen=True)
class Admitted:
    """What the checks found in an admitted run."""

    resume: bool
    message_ids: list[str]
    """Ids the run's new messages carry: they may not name a message already in the thread."""
    checkpoint: dict[str, Any]
    """The checkpoint the run names (`checkpoint_id`, `checkpoint_ns`, `checkpoint_map`), if any: a fork
    unless it is the thread's head (`fork_of`)."""
    rewrites: list[str]
    """What a supervisor's run changes beyond messages and a resume (audited)."""


def admit(user: User, value: Mapping[str, Any], *, max_input_bytes: int) -> Admitted:
    """Check a run's creation value (`threads.create_run`) against the allowlist.

    Raises:
        ResumeRefused: 403 a write only a supervisor may make, 422 a shape nobody may send,
            413 input over `max_input_bytes`.
    """
    kwargs: Mapping[str, Any] = value.get("kwargs") or {}
    supervisor = user.role == "supervisor"
    rewrites: list[str] = []
    _metadata(value.get("metadata"), "metadata")
    check_input(kwargs.get("input"), supervisor=supervisor, max_bytes=max_input_bytes)
    command = kwargs.get("command")
    resume = False
    if command is not None:
        resume, written = _command(command, supervisor=supervisor)
        rewrites += written
    thread_id = None if value.get("thread_id") is None else str(value["thread_id"])
    checkpoint = _one_checkpoint(
        _context(kwargs.get("context"), thread_id), _config(kwargs.get("config"), thread_id)
    )
    for key in ("interrupt_before", "interrupt_after"):
        if kwargs.get(key):
            supervisor_only(supervisor, f"{key} (breakpoints)")
            rewrites.append(f"{key}={kwargs[key]}")
    if kwargs.get("webhook"):
        supervisor_only(supervisor, "a webhook")
        rewrites.append("webhook")
    if resume and value.get("after_seconds"):  # the thread stays busy, its approval unanswerable, meanwhile
        supervisor_only(supervisor, "a delayed resume (after_seconds)")
        rewrites.append(f"after_seconds={value['after_seconds']}")
    strategy = value.get("multitask_strategy") or "enqueue"
    if strategy not in STRATEGIES:
        supervisor_only(supervisor, f"multitask_strategy={strategy!r} (it cancels other runs)")
        rewrites.append(f"multitask_strategy={strategy}")
    return Admitted(resume=resume, message_ids=_message_ids(kwargs), checkpoint=checkpoint, rewrites=rewrites)


def fork_of(named: Mapping[str, Any], head: str | None, *, supervisor: bool) -> str | None:
    """The checkpoint a run starts from when that is not the thread's head (a fork), else None.

    LangChain's `useStream` (Agent Chat UI) names the thread's current head checkpoint with every
    submit, resumes included: the run starts there anyway, so that is no fork. Any other checkpoint,
    a subgraph namespace or a checkpoint map is, and only a supervisor may start a run from it.

    Raises:
        ResumeRefused: 403 for anyone else.
    """
    checkpoint_id = named.get("checkpoint_id")
    if (not checkpoint_id or str(checkpoint_id) == head) and not (
        named.get("checkpoint_ns") or named.get("checkpoint_map")
    ):
        return None
    supervisor_only(supervisor, f"a run from another checkpoint ({', '.join(sorted(named))})")
    return str(checkpoint_id) if checkpoint_id else None


def _message_ids(kwargs: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    for values in (kwargs.get("input"), (kwargs.get("command") or {}).get("update")):
        messages = values.get("messages") if isinstance(values, dict) else None
        found.extend(
            message["id"]
            for message in (messages if isinstance(messages, list) else [messages])
            if isinstance(message, dict) and isinstance(message.get("id"), str)
        )
    return found


def check_new_message_ids(ids: list[str], state: Mapping[str, Any]) -> None:
    """Refuse new messages whose id names one already in the thread (it would replace it).

    Raises:
        ResumeRefused: 422 naming the id.
    """
    if not ids:
        return
    values = state.get("values") if isinstance(state.get("values"), dict) else {}
    existing = {str(m.get("id")) for m in (values or {}).get("messages") or [] if isinstance(m, dict)}
    if taken := sorted(set(ids) & existing):
        raise ResumeRefused(422, f"Message id(s) {', '.join(taken)} name messages already in the thread.")


def check_metadata(metadata: object, where: str) -> None:
    """Refuse metadata that sets a key the server owns (403) or is not an object (422).

    Raises:
        ResumeRefused: as above.
    """
    _metadata(metadata, where)


def _metadata(metadata: object, where: str) -> None:
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        raise ResumeRefused(422, f"{where} must be an object.")
    reserved = sorted(k for k in metadata if k in RESERVED_METADATA or str(k).startswith("hitl"))
    if reserved:
        raise ResumeRefused(403, f"{where} may not set {', '.join(reserved)}: the server owns these keys.")


def _command(command: object, *, supervisor: bool) -> tuple[bool, list[str]]:
    if not isinstance(command, dict):
        raise ResumeRefused(422, "command must be an object.")
    given = {k: v for k, v in command.items() if v is not None and not (k == "goto" and v in ([], ""))}
    if given.pop("lg_name", COMMAND_TAG) != COMMAND_TAG:
        raise ResumeRefused(422, f'command.lg_name may only be "{COMMAND_TAG}" (as LangGraph JS sends it).')
    if not given:
        raise ResumeRefused(422, "A command needs a resume (the answer); this one is empty.")
    if unknown := sorted(set(given) - {"resume", "update", "goto"}):
        raise ResumeRefused(422, f"Unknown command field(s): {', '.join(unknown)}.")
    rewrites: list[str] = []
    if "update" in given:
        supervisor_only(supervisor, "command.update")
        update = given["update"]
        if not isinstance(update, dict):
            raise ResumeRefused(422, "command.update must be an object of state keys.")
        state_write(update, "command.update", supervisor=supervisor)
        rewrites.append(f"update of {', '.join(sorted(update))}")
    if "goto" in given:
        supervisor_only(supervisor, "command.goto")
        goto = given["goto"]
        targets = goto if isinstance(goto, list) else [goto]
        if not all(isinstance(t, str) for t in targets):
            raise ResumeRefused(422, "command.goto may name nodes only; a Send carries state and is refused.")
        rewrites.append(f"goto {', '.join(targets)}")
    return "resume" in given, rewrites


def _one_checkpoint(in_context: dict[str, Any], in_config: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint keys a run names in its context and config, which must agree."""
    if clash := sorted(k for k in in_context.keys() & in_config.keys() if in_context[k] != in_config[k]):
        raise ResumeRefused(422, f"context and config name different {', '.join(clash)}; send one.")
    return {**in_context, **in_config}


def _context(context: object, thread_id: str | None) -> dict[str, Any]:
    """A run's context: the policy, or (when a run sends none) a copy of its `configurable`."""
    if context is None:
        return {}
    if not isinstance(context, dict):
        raise ResumeRefused(422, "context must be an object.")
    return _configurable(context, "context", thread_id)


def _config(config: object, thread_id: str | None) -> dict[str, Any]:
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ResumeRefused(422, "config must be an object.")
    if unknown := sorted(set(config) - CONFIG_KEYS):
        raise ResumeRefused(
            422, f"config may hold only {', '.join(sorted(CONFIG_KEYS))} (got {', '.join(unknown)})."
        )
    _metadata(config.get("metadata"), "config.metadata")
    configurable = config.get("configurable") or {}
    if not isinstance(configurable, dict):
        raise ResumeRefused(422, "config.configurable must be an object.")
    return _configurable(configurable, "config.configurable", thread_id)


def _configurable(values: dict[str, Any], where: str, thread_id: str | None) -> dict[str, Any]:
    """Check `configurable` (or a context, which becomes it) key by key; the checkpoint it names."""
    named: dict[str, Any] = {}
    for key, value in values.items():
        name = str(key)
        if name in SERVER_CONFIGURABLE or name in CONTEXT_KEYS or "-" in name:
            continue  # the server's own keys, the context's, and request headers
        if name == "thread_id" and thread_id is not None and str(value) == thread_id:
            continue  # the streaming protocol names the run's own thread
        if name in FORK_KEYS:
            named[name] = value
            continue
        raise ResumeRefused(
            422, f'{where} may not set {name}: a run may carry only context={{"policy": ...}}.'
        )
    return named
