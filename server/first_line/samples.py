"""People's check, afterwards, of what a first-line reviewer decided: a sample of its approvals to look at.

`GET /first-line/samples?limit=` lists the sampled approvals nobody has checked yet, of the deciders
the caller is in (the people the model stands in front of); `POST /first-line/samples/{thread_id}/
{tool_call_id}` with `{"review": "fine" | "should_not_have", "note": "..."}` records a person's word
on one of its decisions once, on the thread's trail (`confirmed` or `overturned`), counted in the
metrics and the analytics. Only reviewers and supervisors; anything else in a request is refused,
naming it. Not for deciding a pending call (`server.decisions`).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.responses import JSONResponse
from starlette.routing import Route

from hitl.contracts.records import AuditRecord
from server.first_line import ledger
from server.identity.users import User, request_user
from server.insight import metrics

if TYPE_CHECKING:
    from starlette.requests import Request

MAX_LISTED = 200
MAX_NOTE_CHARS = 1000
WORDS = {"fine": "confirmed", "should_not_have": "overturned"}
"""A person's word, and what the trail records it as."""


class ReviewBody(BaseModel):
    """What a person says of one first-line decision afterwards."""

    model_config = ConfigDict(extra="forbid")

    review: Literal["fine", "should_not_have"]
    note: str = Field(default="", max_length=MAX_NOTE_CHARS)


async def listed(request: Request) -> JSONResponse:
    """GET /first-line/samples: sampled first-line approvals nobody has checked yet, oldest first."""
    user = request_user(request)
    if (refused := _staff_only(user)) is not None:
        return refused
    unknown = sorted(set(request.query_params) - {"limit"})
    if unknown:
        return _problem(400, f"Unknown parameter(s): {', '.join(unknown)}; only limit (1 to {MAX_LISTED}).")
    raw = request.query_params.get("limit", "50")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LISTED:
        return _problem(400, f"limit must be a whole number from 1 to {MAX_LISTED} (got {raw!r}).")
    items = await asyncio.to_thread(ledger.samples, user.groups, limit=int(raw))
    return JSONResponse({"items": items, "total": len(items)})


async def checked(request: Request) -> JSONResponse:
    """POST /first-line/samples/{thread_id}/{tool_call_id}: a person's word on one first-line decision."""
    user = request_user(request)
    if (refused := _staff_only(user)) is not None:
        return refused
    try:
        body = ReviewBody.model_validate_json(await request.body() or b"{}")
    except ValidationError as error:
        shown = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in error.errors()[:3]
        )
        return _problem(422, f'Send {{"review": "fine" | "should_not_have", "note": "..."}}: {shown}.')
    thread_id, call_id = request.path_params["thread_id"], request.path_params["tool_call_id"]
    found = await asyncio.to_thread(ledger.reviewed, thread_id, call_id)
    if found is None:
        return _problem(404, f"No first-line decision on tool call {call_id} of thread {thread_id}.")
    if not user.may_decide(found["stood_for"], None):
        return _problem(
            403,
            f"{user.identity} may not check it: the first-line reviewer stood in for {found['stood_for']}.",
        )
    record = _record(found, body, user)
    if not await asyncio.to_thread(ledger.review, thread_id, call_id, body.review, user.identity, record):
        again = await asyncio.to_thread(ledger.reviewed, thread_id, call_id)
        by = again.get("reviewed_by", "someone") if again is not None else "someone"
        return _problem(409, f"This first-line decision was already checked by {by}.")
    metrics.FIRST_LINE_REVIEWS.labels(
        agent=metrics.label(found["agent"]), tool=metrics.label(found["tool"]), review=body.review
    ).inc()
    return JSONResponse(await asyncio.to_thread(ledger.reviewed, thread_id, call_id))


def _record(found: Any, body: ReviewBody, user: User) -> AuditRecord:  # noqa: ANN401  (a FirstLineReview)
    said = f"{body.review.replace('_', ' ')} ({found['decision']} by {found['reviewer']})"
    return AuditRecord(
        thread_id=found["thread_id"],
        interrupt_id="",
        tool_call_id=found["tool_call_id"],
        agent=found["agent"],
        tool=found["tool"],
        requested_args=dict(found["args"]),
        decision=WORDS[body.review],
        final_args=None,
        message=f"{said}: {body.note}" if body.note else said,
        reviewer=user.identity,
        roles=user.memberships,
        decided_at=datetime.now(UTC).isoformat(),
        outcome="accepted",
    )


def _staff_only(user: User) -> JSONResponse | None:
    if user.is_staff:
        return None
    return _problem(403, f"{user.identity} ({user.role}) may not check first-line decisions: reviewers do.")


def _problem(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


ROUTES = [
    Route("/first-line/samples", listed, methods=["GET"]),
    Route("/first-line/samples/{thread_id}/{tool_call_id}", checked, methods=["POST"]),
]
