"""Run creation's policy check: does a run's `context["policy"]` fit its agent, and who may loosen.

Called by the `threads.create_run` handler for every run, before anything starts. It refuses
bad overrides (422) and loosening by anyone but a supervisor (403), audits every change an
accepted override makes, and keeps clients from writing the state keys only the server
and the gate write. Applying the override is the graph's job (`hitl.policy.overrides`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph_sdk import Auth, get_client

from hitl.gate.trusted_state import RUN_POLICY_KEY
from hitl.policy.allowances import STATE_KEY
from hitl.policy.overrides import OverrideError, PolicyCatalog, changes, parse, without_loosening
from hitl.policy.served import AgentCard, card_of
from server.identity.access import as_server
from server.records import audit
from server.runtime import engine_compat

if TYPE_CHECKING:
    from collections.abc import Mapping

    from server.identity.users import User

PROTECTED_KEYS = frozenset({STATE_KEY, RUN_POLICY_KEY})
"""State keys no client writes: allowances come from an approve's `allow`, the run's policy from context."""


async def admit(user: User, value: Mapping[str, Any]) -> None:
    """Refuse a run that writes protected state or carries a policy override it may not.

    Raises:
        Auth.exceptions.HTTPException: 422 bad override or protected write, 403 loosening by a
            non-supervisor (audited as refused).
    """
    kwargs: Mapping[str, Any] = value.get("kwargs") or {}
    _no_protected_writes(kwargs)
    context = kwargs.get("context")
    raw = context.get("policy") if isinstance(context, dict) else None
    if raw is None:
        await _assistant_policy(user, value)
        return
    if (kwargs.get("command") or {}).get("resume") is not None:
        raise _refuse(
            422,
            "A policy override applies from the start of a run; a resume keeps its run's policy. "
            "Send the override with new input.",
        )
    graph_id = await _graph_id(str(value.get("assistant_id")))
    catalog = await catalog_of(graph_id)
    if catalog is None:
        raise _refuse(422, f"The {graph_id} graph takes no policy override.")
    try:
        override = parse(raw, catalog)
    except OverrideError as error:
        raise _refuse(422, str(error)) from None
    found = changes(override, catalog)
    if not found:
        return
    thread_id = str(value.get("thread_id") or f"run-{value.get('run_id')}")
    loosening = [c.text for c in found if c.kind == "loosen"]
    if loosening and user.role != "supervisor":
        message = (
            f"Only a supervisor may loosen the policy ({'; '.join(loosening)}); "
            f"{user.identity} is a {user.role}. Tightening is open to anyone who may run the thread."
        )
        await audit.write(
            [
                audit.policy_change(
                    thread_id, graph_id, user, override=override, changes=found, refusal=message
                )
            ],
        )
        raise _refuse(403, message)
    await audit.write([audit.policy_change(thread_id, graph_id, user, override=override, changes=found)])


async def _assistant_policy(user: User, value: Mapping[str, Any]) -> None:
    """Check the policy a run inherits from its assistant's `context`, and pin what it may have.

    langgraph-api merges the assistant's context under the run's after this handler ran
    (`{**assistant.context, **run.context}`): a run without a policy of its own runs the
    assistant's. It gets the same checks as a run's own (the graph's catalog; loosening only
    by a supervisor): a non-supervisor's run keeps the assistant's tightenings and none of
    its loosenings (audited). The checked policy is written into the run's own context, so
    the gate seals exactly what was checked, whatever the assistant says by the time it runs.
    A resume keeps the policy its run started with.

    Raises:
        Auth.exceptions.HTTPException: 422 when the assistant's policy does not fit its graph.
    """
    kwargs = value.get("kwargs")
    if not isinstance(kwargs, dict) or (kwargs.get("command") or {}).get("resume") is not None:
        return
    assistant = await _assistant(str(value.get("assistant_id")))
    given = assistant.get("context")
    raw = given.get("policy") if isinstance(given, dict) else None
    if raw is None:
        return
    graph_id = str(assistant["graph_id"])
    name = f"Assistant {assistant.get('name') or assistant['assistant_id']}"
    catalog = await catalog_of(graph_id)
    if catalog is None:
        raise _refuse(422, f"{name} sets a policy, but the {graph_id} graph takes no policy override.")
    try:
        override = parse(raw, catalog)
    except OverrideError as error:
        raise _refuse(422, f"{name}'s policy does not fit: {error}") from None
    found = changes(override, catalog)
    applied, refusal = override, None
    if any(c.kind == "loosen" for c in found) and user.role != "supervisor":
        applied = without_loosening(override, catalog)
        loosening = "; ".join(c.text for c in found if c.kind == "loosen")
        refusal = (
            f"{name}'s policy loosens the {graph_id} policy ({loosening}); only a supervisor's run may "
            f"loosen it, so this run of {user.identity} ({user.role}) keeps those gates."
        )
    context = kwargs.get("context")
    if not isinstance(context, dict):
        context = kwargs["context"] = {}
    context["policy"] = applied
    if found:
        thread_id = str(value.get("thread_id") or f"run-{value.get('run_id')}")
        record = audit.policy_change(
            thread_id, graph_id, user, override=override, changes=found, refusal=refusal
        )
        await audit.write([record])


def _no_protected_writes(kwargs: Mapping[str, Any]) -> None:
    given = kwargs.get("input")
    update = (kwargs.get("command") or {}).get("update")
    keys = set(given) if isinstance(given, dict) else set()
    if isinstance(update, dict):
        keys |= set(update)
    elif isinstance(update, list | tuple):
        keys |= {str(item[0]) for item in update if isinstance(item, list | tuple) and item}
    if written := sorted(keys & PROTECTED_KEYS):
        raise _refuse(
            422,
            f"A run may not set {', '.join(written)}: allowances come from an approve's `allow` and "
            "are revoked with POST /threads/{thread_id}/allowances/revoke; a run's policy override "
            'goes in context={"policy": ...}.',
        )


async def graph_id_of(assistant_id: str) -> str:
    """The graph an assistant (id or graph name) runs."""
    return await _graph_id(assistant_id)


async def catalog_of(graph_id: str) -> PolicyCatalog | None:
    """The policy catalog of the agent served as `graph_id` (None for a graph the layer did not build)."""
    card = card_for(graph_id)
    return card.catalog if card else None


def card_for(graph_id: str) -> AgentCard | None:
    """What the layer knows of the agent served as `graph_id`, read from the graph (`hitl.policy.served`)."""
    return card_of(engine_compat.served_graph(graph_id))


async def _graph_id(assistant_id: str) -> str:
    """The graph an assistant runs now (read each time: an assistant can be deleted and made again)."""
    return str((await _assistant(assistant_id))["graph_id"])


async def _assistant(assistant_id: str) -> dict[str, Any]:
    with as_server():
        return dict(await get_client().assistants.get(assistant_id))


def _refuse(status: int, message: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=status, detail=message)
