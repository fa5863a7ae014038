"""Run creation's policy check: does a run's `context["policy"]` fit its agent, and who may loosen.

Called by the `threads.create_run` handler for every run, before anything starts. It refuses
bad overrides (422) and loosening by anyone but a supervisor (403), audits every change an
accepted override makes, and keeps clients from writing the state keys only the server
and the gate write. Applying the override is the graph's job (`hitl.overrides`).
"""

from __future__ import annotations

import asyncio
from functools import lru_cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from langgraph_sdk import Auth, get_client

from hitl.allowances import STATE_KEY
from hitl.gate import RUN_POLICY_KEY
from hitl.overrides import OverrideError, PolicyCatalog, changes, parse
from server import audit
from server.access import as_server

if TYPE_CHECKING:
    from collections.abc import Mapping

    from server.users import User

PROTECTED_KEYS = frozenset({STATE_KEY, RUN_POLICY_KEY})
"""State keys no client writes: allowances come from an approve's `allow`, the run's policy from context."""

_graph_ids: dict[str, str] = {}


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
    """The served agent's policy catalog (None for graphs without one), built once, off the event loop.

    Building one builds the agent's tools (the `ops` workspace resolves its path): file I/O that
    `langgraph dev` refuses inside an async handler.
    """
    if graph_id not in _catalogs:
        _catalogs[graph_id] = await asyncio.to_thread(_catalog, graph_id)
    return _catalogs[graph_id]


_catalogs: dict[str, PolicyCatalog | None] = {}


async def _graph_id(assistant_id: str) -> str:
    if assistant_id not in _graph_ids:
        with as_server():
            assistant = await get_client().assistants.get(assistant_id)
        _graph_ids[assistant_id] = str(assistant["graph_id"])
    return _graph_ids[assistant_id]


@lru_cache(maxsize=16)
def _catalog(graph_id: str) -> PolicyCatalog | None:
    """The served agent's catalog: `agents.<graph_id>.policy_catalog()` (None for other graphs)."""
    if not graph_id.isidentifier():
        return None
    try:
        module = import_module(f"agents.{graph_id}")
    except ImportError:
        return None
    build = getattr(module, "policy_catalog", None)
    return build() if callable(build) else None


def _refuse(status: int, message: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=status, detail=message)
