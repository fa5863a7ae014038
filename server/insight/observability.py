"""The routes that show how the humans in the loop are doing: metrics, analytics, and who is asking.

`GET /hitl/metrics` (Prometheus text) and `GET /analytics` are for reviewers and supervisors
(a requester gets 403; no token, 401 from the server's auth). `GET /me` tells any signed-in
client its own name, role and the groups it decides as, so the web app offers the dashboard only to
those who may read it, and a card's buttons only to those who may press them.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from langgraph_sdk import get_client
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from server.coordination.inbox_table import TABLE
from server.identity.access import as_server
from server.identity.users import User, request_user
from server.insight import analytics, metrics
from server.insight.analytics_query import AnalyticsQuery
from server.records import history

if TYPE_CHECKING:
    from starlette.requests import Request

    from hitl.contracts.records import Me


def _not_staff(user: User, what: str) -> JSONResponse | None:
    if user.is_staff:
        return None
    return JSONResponse({"detail": f"{what} is for reviewers and supervisors."}, status_code=403)


async def metrics_page(request: Request) -> Response:
    """GET /hitl/metrics: this process's metrics, the pending gauge counted in the inbox table."""
    if refusal := _not_staff(request_user(request), "/hitl/metrics"):
        return refusal
    with as_server():
        await TABLE.ready(get_client())
    page = await asyncio.to_thread(metrics.exposition)  # the pending gauge is counted in the layer's store
    return Response(page, media_type=CONTENT_TYPE_LATEST)


async def analytics_page(request: Request) -> JSONResponse:
    """GET /analytics?since=&until=&agent=&tool=: decisions, timings and signals from the audit trail."""
    if refusal := _not_staff(request_user(request), "/analytics"):
        return refusal
    try:
        query = AnalyticsQuery.from_params(request.query_params, datetime.now(UTC))
    except ValueError as error:
        return JSONResponse({"detail": f"Bad analytics query: {error}"}, status_code=400)
    client = get_client()
    records = await history.all_records()
    in_period, _ = analytics.decisions_of(records, {}, query)
    wanted = {(d.thread_id, d.interrupt_id) for d in in_period}
    paused = await history.pause_times(
        client, [r for r in records if (r.get("thread_id"), r.get("interrupt_id")) in wanted]
    )
    return JSONResponse(analytics.summarise(records, paused, query))


async def me(request: Request) -> JSONResponse:
    """GET /me (`hitl.contracts.records.Me`): name, role, the teams and the groups the caller decides as.

    A requester decides for no team, whatever teams they are in (`hitl.policy.groups.deciding`).
    """
    user = request_user(request)
    decides = sorted(user.groups - set(user.roles))
    teams = {"groups": decides} if decides else {}
    body: Me = {
        "identity": user.identity,
        "role": user.role,
        **teams,  # type: ignore[typeddict-item]
        "decides_as": sorted(user.groups),
        "staff": user.is_staff,
    }
    return JSONResponse(body)


ROUTES: list[BaseRoute] = [
    Route("/hitl/metrics", metrics_page, methods=["GET"]),
    Route("/analytics", analytics_page, methods=["GET"]),
    Route("/me", me, methods=["GET"]),
]
