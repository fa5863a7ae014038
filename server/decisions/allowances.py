"""Granting and revoking thread allowances, the server's side of "don't ask again in this thread".

`granted` turns the `allow` of accepted approves into `Allowance`s (pure; the auth layer
puts them in the resume command's `update` and audits them). `revoke` is the
`POST /threads/{thread_id}/allowances/revoke` route. Whether one covers a call is the gate's
business (`hitl.policy.allowances`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from langgraph_sdk import get_client
from starlette.responses import JSONResponse

from hitl.contracts.records import Allowance
from hitl.gate.trusted_state import seal_allowance, trusted_allowances
from hitl.policy.allowances import STATE_KEY
from server.decisions.pending import Pending, ResumeRefused
from server.identity.access import as_server, visible_thread
from server.identity.users import User, request_user
from server.records import audit

if TYPE_CHECKING:
    from collections.abc import Iterator

    from starlette.requests import Request

    from hitl.contracts.interrupts import Decider
    from server.decisions.pending import Accepted


def granted(thread_id: str, accepted: list[Accepted], pending: list[Pending], user: User) -> list[Allowance]:
    """One allowance per accepted approve that carries `allow`.

    Each remembers every tool call waiting now, so none of them is ever answered by it.

    Raises:
        ResumeRefused: 422 if the call may not be allowed (policy always reviews it, or it is
            not an approve) or the bounds name arguments the call does not have.
    """
    waiting = sorted({call_id for p in pending for call_id in _tool_call_ids(p.value)})
    now = datetime.now(UTC).isoformat()
    allowances: list[Allowance] = []
    for item in accepted:
        for index, (action, config, decision) in enumerate(_decided(item)):
            allow = decision.get("allow") if isinstance(decision, dict) else None
            if allow is None:
                continue
            name = str(action.get("name", ""))
            if decision.get("type") != "approve" or not config.get("may_allow"):
                raise ResumeRefused(
                    422,
                    f"{name} {_args(action)} cannot be allowed for the thread: only an approve may "
                    "carry `allow`, and never for a call policy always reviews (a person decides each one).",
                )
            bounds = allow.get("bounds") or {}
            if unknown := sorted(set(bounds) - set(action.get("args") or {})):
                raise ResumeRefused(
                    422,
                    f"allow.bounds for {name} names arguments the call does not have: {', '.join(unknown)} "
                    f"(its arguments: {', '.join(sorted(action.get('args') or {}))}).",
                )
            granted = Allowance(
                id=f"{item.pending.id}-{index}",
                thread_id=thread_id,
                agent=str(action.get("agent", "")),
                tool=name,
                bounds=bounds,
                granted_by=user.identity,
                granted_role=cast("Decider", user.role),
                granted_at=now,
                interrupt_id=item.pending.id,
                tool_call_ids=waiting,
            )
            if teams := sorted(user.groups - set(user.roles)):  # a granter covers what their teams decide
                granted["granted_groups"] = teams
            allowances.append(granted)
    return allowances


class NotRevoked(Exception):  # noqa: N818  (a refusal, not a crash)
    """A revocation the server will not make; nothing changed."""

    def __init__(self, status: int, message: str) -> None:
        """Refuse with HTTP `status` and a message for the caller."""
        super().__init__(message)
        self.status = status
        self.message = message


async def revoke(request: Request) -> JSONResponse:
    """POST /threads/{thread_id}/allowances/revoke: end live allowances of a thread.

    The body names one allowance by its id (`allowance_id`) or a tool's (`tool`); an empty one
    revokes every live one. The owner, reviewers and supervisors may revoke (it only tightens); each
    revocation is audited. Refused with 409 while the thread waits for an approval or runs.
    """
    user = request_user(request)
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        body = None
    if not isinstance(body, dict) or set(body) - {"allowance_id", "tool"}:
        return JSONResponse(
            {"detail": 'Send {}, {"allowance_id": "..."} or {"tool": "..."}.'}, status_code=422
        )
    try:
        revoked = await revoke_on(request.path_params["thread_id"], body, user)
    except NotRevoked as refusal:
        return JSONResponse({"detail": refusal.message}, status_code=refusal.status)
    return JSONResponse({"revoked": revoked})


async def revoke_on(thread_id: str, which: dict[str, Any], user: User) -> list[str]:
    """Revoke the live allowances of `thread_id` that match `which`; their ids.

    Raises:
        NotRevoked: 404 no such thread (for this user) or no matching allowance, 409 the thread
            runs or waits for an approval.
    """
    client = get_client()
    thread = await visible_thread(thread_id, user)
    if thread is None:
        raise NotRevoked(404, f"Thread {thread_id} not found.")
    with as_server():
        state = await client.threads.get_state(thread_id)
    if thread.get("status") == "busy" or Pending.from_state(dict(state)):
        raise NotRevoked(
            409,
            f"Thread {thread_id} is running or waits for an approval: revoke once it is idle (an "
            "allowance never answers a call that is already waiting).",
        )
    live = [
        a
        for a in _live(state)
        if which.get("allowance_id", a["id"]) == a["id"] and which.get("tool", a["tool"]) == a["tool"]
    ]
    if which and not live:
        raise NotRevoked(404, f"No live allowance on thread {thread_id} matches {json.dumps(which)}.")
    now = datetime.now(UTC).isoformat()
    revoked = {
        a["id"]: seal_allowance(Allowance(**a, revoked_by=user.identity, revoked_at=now))  # type: ignore[typeddict-item]
        for a in live
    }
    if not revoked:
        return []
    try:
        with as_server():
            await client.threads.update_state(thread_id, {STATE_KEY: revoked})
    except Exception as error:
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status is None:
            raise
        raise NotRevoked(status, f"Could not revoke on thread {thread_id} now: {error}") from None
    await audit.write(
        [
            audit.allowance_change(thread_id, cast("Allowance", a), user, "revoke_allowance")
            for a in revoked.values()
        ],
    )
    return list(revoked)


def _live(state: Any) -> Iterator[Allowance]:  # noqa: ANN401  (a thread state as the SDK returns it)
    values = (state or {}).get("values") or {}
    for allowance in trusted_allowances(values.get(STATE_KEY)).values():
        if isinstance(allowance, dict) and "revoked_at" not in allowance:
            yield cast("Allowance", allowance)


def _decided(item: Accepted) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
    """(action, its review config, its decision) for each call an accepted answer decides."""
    value = item.pending.value if isinstance(item.pending.value, dict) else {}
    if isinstance(value.get("action_requests"), list):
        return list(
            zip(value["action_requests"], value["review_configs"], item.answer["decisions"], strict=True)
        )
    if value.get("type") == "tool_approval":
        return [(value, value, item.answer)]
    return []


def _tool_call_ids(value: Any) -> list[str]:  # noqa: ANN401  (an interrupt value)
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("action_requests"), list):
        return [str(a.get("tool_call_id", "")) for a in value["action_requests"]]
    return [str(value["tool_call_id"])] if value.get("tool_call_id") else []


def _args(action: dict[str, Any]) -> str:
    return json.dumps(action.get("args") or {}, sort_keys=True, default=str)
