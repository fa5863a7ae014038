"""Changes to an assistant: its `context` and `config` pass a run's allowlist, and each change is audited.

An assistant's context and config reach every run of that assistant (langgraph-api merges
them in after run admission), so every way to set them (`POST /assistants`, `PATCH
/assistants/{id}`, `POST /assistants/{id}/latest` to an older version) is checked here, on
the request body, like a run's: context holds only `policy`, config only what a run's may
(`server.admission.allowlist.CONFIG_KEYS`, its `configurable` only `policy`), no server-owned
metadata, and the policy must fit the graph's catalog. An assistant keeps its graph: a
change of `graph_id` is refused (a new graph is a new assistant). Only supervisors change
assistants (`server.http.auth.on_assistants`); each accepted change is audited with who and what
in the trail `assistant-<id>` (`GET /audit/assistants/{id}`, staff). Which policy a run then
runs, and for whom a loosening holds, is `server.admission.overrides`'.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson
from langgraph_sdk import Auth, get_client
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route

from hitl.contracts.records import AuditRecord
from hitl.policy.overrides import OverrideError, changes, parse
from server.admission.allowlist import CONFIG_KEYS, check_metadata
from server.admission.bodies import HeldAnswer, read_body, replaying
from server.admission.overrides import catalog_of
from server.decisions.pending import ResumeRefused
from server.identity.access import as_server, is_not_found
from server.identity.tokens import identify, token_of
from server.identity.users import TokenRefused
from server.records import audit

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import ASGIApp, Receive, Scope, Send

    from server.identity.users import User

ASSISTANT_ROUTE = re.compile(r"^/assistants(/(?P<assistant_id>[^/]+)(?P<latest>/latest)?)?/?$")
CONTEXT_KEYS = frozenset({"policy"})
"""What an assistant's context (and the `configurable` langgraph-api keeps in step with it) may hold."""
REFUSED_CREATES = "assistants"
"""The trail of refused creations (no assistant id yet)."""
SERVER_METADATA = frozenset({"created_by"})
"""Assistant metadata the server writes (`created_by: system` marks a served agent's own assistant)."""


def trail_of(assistant_id: str) -> str:
    """The audit trail of one assistant's changes."""
    return f"assistant-{assistant_id}"


class AssistantChangeCheck:
    """Check and audit a supervisor's change to an assistant before the API applies it."""

    def __init__(self, app: ASGIApp) -> None:
        """Guard `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a change outside the allowlist (audited); audit the change once the API made it."""
        change = _change_of(scope)
        if change is None:
            await self.app(scope, receive, send)
            return
        try:
            user = await caller_of(scope)
        except TokenRefused as refused:  # fail closed: a change is never let by unchecked and unaudited
            await JSONResponse({"detail": refused.message}, status_code=401)(scope, receive, send)
            return
        if user is None or user.role != "supervisor":  # 401 / 403 come from the auth layers
            await self.app(scope, receive, send)
            return
        chunks, body = await read_body(receive)
        kind, assistant_id = change
        sent = _json(body)
        try:
            graph_id, settings = await _settings(kind, assistant_id, sent)
            found = await check(graph_id, settings)
            existing = await _existing(kind, sent)
        except ResumeRefused as refusal:
            await _audit(user, kind, assistant_id or REFUSED_CREATES, "", {}, [], refusal.message)
            await JSONResponse({"detail": refusal.message}, status_code=refusal.status)(scope, receive, send)
            return
        answer = HeldAnswer(send)
        await self.app(scope, replaying(chunks, receive), answer)
        if 200 <= answer.status < 300:  # noqa: PLR2004  (the success range)
            made = answer.json()
            done = str(made.get("assistant_id") or assistant_id)
            if existing is not None:  # `if_exists: do_nothing` on an assistant that is there: nothing changed
                kept = f"nothing changed: {done} exists (if_exists: do_nothing); nothing sent was applied"
                graph_id = str(existing.get("graph_id") or graph_id)
                await _audit(user, "keep", done, graph_id, settings, [kept], None)
            else:
                settings["version"] = made.get("version")
                await _audit(user, kind, done, graph_id, settings, found, None)
        await answer.finish()  # the caller hears of the change once it is on the record


async def check(graph_id: str, settings: dict[str, Any]) -> list[str]:
    """The allowlist for an assistant's context, config and metadata; what its policy changes, in words.

    Raises:
        ResumeRefused: 422 (or 403 for server-owned metadata) naming what may not be set.
    """
    context, config = settings.get("context"), settings.get("config")
    if context is not None and not isinstance(context, dict):
        raise ResumeRefused(422, "An assistant's context must be an object.")
    if config is not None and not isinstance(config, dict):
        raise ResumeRefused(422, "An assistant's config must be an object.")
    context, config = context or {}, config or {}
    if unknown := sorted(set(config) - CONFIG_KEYS):
        raise ResumeRefused(
            422,
            f"An assistant's config may hold only {', '.join(sorted(CONFIG_KEYS))} "
            f"(got {', '.join(unknown)}).",
        )
    configurable = config.get("configurable") or {}
    if not isinstance(configurable, dict):
        raise ResumeRefused(422, "An assistant's config.configurable must be an object.")
    for where, values in (("context", context), ("config.configurable", configurable)):
        if unknown := sorted(str(k) for k in set(values) - CONTEXT_KEYS):
            raise ResumeRefused(
                422, f'An assistant\'s {where} may hold only {{"policy": ...}} (got {", ".join(unknown)}).'
            )
    _metadata(settings.get("metadata"), "metadata")
    _metadata(config.get("metadata"), "config.metadata")
    raw = context.get("policy", configurable.get("policy"))
    if raw is None:
        return []
    catalog = await catalog_of(graph_id)
    if catalog is None:
        raise ResumeRefused(422, f"The {graph_id} graph takes no policy.")
    try:
        return [f"{c.kind}s: {c.text}" for c in changes(parse(raw, catalog), catalog)]
    except OverrideError as error:
        raise ResumeRefused(422, str(error)) from None


def _change_of(scope: Scope) -> tuple[str, str | None] | None:
    """('create', None), ('update', id) or ('set_version', id) for an assistant-changing request."""
    if scope["type"] != "http" or str(scope.get("root_path") or "").startswith("/noauth"):
        return None
    match = ASSISTANT_ROUTE.match(str(scope.get("path") or ""))
    method = scope.get("method")
    if match is None:
        return None
    assistant_id, latest = match["assistant_id"], match["latest"]
    if method == "POST" and assistant_id is None:
        return "create", None
    if method == "PATCH" and assistant_id and not latest:
        return "update", assistant_id
    if method == "POST" and assistant_id and latest:
        return "set_version", assistant_id
    return None


async def _settings(kind: str, assistant_id: str | None, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The graph and the settings (context, config, metadata) a change would give the assistant.

    Raises:
        ResumeRefused: 422 for a change of graph.
    """
    wanted = body.get("graph_id")
    if kind == "create" or assistant_id is None:
        return str(wanted or ""), {k: body.get(k) for k in ("context", "config", "metadata")}
    current = await _assistant(assistant_id)
    if current is None:
        return "", {}  # the API answers 404
    graph_id = str(current["graph_id"])
    if kind == "set_version":
        found = await _version(assistant_id, body.get("version"))
        if found is None:
            return graph_id, {}  # the API answers 404
        wanted, body = found.get("graph_id"), found
    if wanted is not None and wanted != graph_id:
        raise ResumeRefused(
            422,
            f"An assistant keeps its graph ({graph_id}); it cannot become {wanted}. Create an assistant "
            f"for {wanted} instead (who may run it is checked on every run).",
        )
    return graph_id, {k: body.get(k) for k in ("context", "config", "metadata")}


def _metadata(metadata: object, where: str) -> None:
    """A run's metadata rules, and no key the server writes for assistants (`SERVER_METADATA`)."""
    check_metadata(metadata, where)
    if isinstance(metadata, dict) and (owned := sorted(SERVER_METADATA & set(metadata))):
        raise ResumeRefused(
            403, f"An assistant's {where} may not set {', '.join(owned)}: the server owns it."
        )


async def _existing(kind: str, sent: dict[str, Any]) -> dict[str, Any] | None:
    """The assistant a create names that is there already, when `if_exists: do_nothing` keeps it as it is."""
    named = sent.get("assistant_id")
    if kind != "create" or sent.get("if_exists") != "do_nothing" or not isinstance(named, str):
        return None
    return await _assistant(named)


async def _assistant(assistant_id: str) -> dict[str, Any] | None:
    try:
        with as_server():
            return dict(await get_client().assistants.get(assistant_id))
    except Exception as error:
        if is_not_found(error) or "422" in str(error):
            return None
        raise


async def _version(assistant_id: str, version: object) -> dict[str, Any] | None:
    """The assistant's version `version` (a JSON integer, `2` or `2.0`), or None when it has none.

    Raises:
        ResumeRefused: 422 for anything else, which is never passed on unchecked.
    """
    if isinstance(version, float) and version.is_integer():
        version = int(version)
    if isinstance(version, bool) or not isinstance(version, int):
        raise ResumeRefused(422, f"version must be a whole number (got {str(version)[:40]!r}).")
    with as_server():
        versions = await get_client().assistants.get_versions(assistant_id, limit=1000)
    return next((dict(v) for v in versions if v.get("version") == version), None)


async def caller_of(scope: Scope) -> User | None:
    """Who sends a change; None for a token no one has.

    Raises:
        TokenRefused: when reading the token failed (the change is refused here, not passed on).
    """
    headers = Headers(scope=scope)
    try:
        return await identify(token_of(headers.get("authorization"), dict(scope.get("headers") or [])) or "")
    except Auth.exceptions.HTTPException as refusal:  # another scheme, or two different tokens
        raise TokenRefused(str(refusal.detail)) from None


async def _audit(  # noqa: PLR0913, PLR0917  (who changed which assistant, how, and the outcome)
    user: User,
    kind: str,
    assistant_id: str,
    graph_id: str,
    settings: dict[str, Any],
    found: list[str],
    refusal: str | None,
) -> None:
    decision = {"set_version": "set_assistant_version", "keep": "create_existing_assistant"}
    record = AuditRecord(
        thread_id=trail_of(assistant_id) if assistant_id != REFUSED_CREATES else REFUSED_CREATES,
        interrupt_id="",
        tool_call_id="",
        agent=graph_id,
        tool="assistant",
        requested_args=settings,
        decision=decision.get(kind, f"{kind}_assistant"),
        final_args=None if refusal or kind == "keep" else settings,
        message="; ".join(found) or "no policy change",
        reviewer=user.identity,
        roles=user.memberships,
        decided_at=datetime.now(UTC).isoformat(),
        outcome="refused" if refusal else "accepted",
        **({"refusal": refusal} if refusal else {}),  # type: ignore[typeddict-item]
    )
    await audit.write([record])


def _json(body: bytes) -> dict[str, Any]:
    try:
        said = orjson.loads(body or b"{}")
    except orjson.JSONDecodeError:
        return {}
    return said if isinstance(said, dict) else {}


async def assistant_trail(request: Request) -> JSONResponse:
    """GET /audit/assistants/{assistant_id}: every change to one assistant (staff)."""
    if request.user["role"] not in {"reviewer", "supervisor"}:
        return JSONResponse(
            {"detail": "Only reviewers and supervisors may read an assistant's changes."}, 403
        )
    trail = trail_of(request.path_params["assistant_id"])
    return JSONResponse({"records": await audit.trail(trail)})


ROUTES = [Route("/audit/assistants/{assistant_id}", assistant_trail, methods=["GET"])]
