"""`POST /channels/slack/actions`: Approve and Reject pressed in Slack, answered through the API's own gate.

Slack sends no bearer token, so the request is taken only with Slack's signature, fresh and once
(`server.channels.slack_signature`). The Slack member is mapped to a HITL user
(`HITL_SLACK_USERS`); the decision becomes the same resume command a client would send and
goes through `server.admission.runs.admit_run_as` (roles, separation of duties, quorum, claim, audit,
receipts) on its way through the server's door for its own runs (`server.decisions.server_runs`). Refusals of
signed presses change nothing and are audited; requests that fail the signature check are only
counted (`UnverifiedRequests`). The message is then updated through the press's `response_url`.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, assert_never

from langgraph_sdk import Auth, get_client
from starlette.responses import JSONResponse, Response

from hitl.contracts.asks import read
from hitl.contracts.records import AuditRecord
from hitl.settings import get_settings
from server.channels import slack_replies
from server.channels.slack_message import APPROVE, REJECT
from server.channels.slack_press import Press
from server.channels.slack_signature import Verdict, first_refusal, verify
from server.decisions import server_runs
from server.decisions.pending import Pending
from server.decisions.withdrawals import rejection
from server.identity.access import as_server, is_not_found
from server.identity.users import User, directory
from server.insight import metrics
from server.records import audit, threads

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.requests import Request

logger = logging.getLogger(__name__)
CHANNEL_TRAIL = "slack-channel"
"""The audit trail of signed requests that name no thread (unreadable presses, threads gone)."""
REFUSED_STATUS = {Verdict.FORGED: 401, Verdict.STALE: 401, Verdict.REPLAYED: 409}


def slack_users() -> dict[str, str]:
    """`HITL_SLACK_USERS` as Slack member id to HITL user name."""
    pairs = (e.strip().partition(":") for e in get_settings().hitl_slack_users.split(","))
    return {
        slack_id.strip(): name.strip() for slack_id, _, name in pairs if slack_id.strip() and name.strip()
    }


def hitl_user(slack_id: str) -> User | None:
    """The HITL user a Slack member decides as, if `HITL_SLACK_USERS` maps them to a known user."""
    name = slack_users().get(slack_id)
    return directory().named(name) if name else None


async def slack_actions(request: Request) -> Response:
    """POST /channels/slack/actions: verify, map the member, decide through the gate, tell Slack."""
    secret = get_settings().hitl_slack_signing_secret
    if not secret:
        return JSONResponse({"detail": "Slack approvals are off: HITL_SLACK_SIGNING_SECRET is not set."}, 404)
    body = await request.body()
    verdict = await verify(secret, request.headers, body)
    if verdict is not Verdict.ACCEPTED:
        UNVERIFIED.refused(verdict)
        if verdict is not Verdict.FORGED and await first_refusal(request.headers):
            await _refused_signed(verdict, Press.read(body))
        return JSONResponse({"detail": f"Refused: {verdict.value}."}, REFUSED_STATUS[verdict])
    press = Press.read(body)
    if press is None:
        await _write(
            _record(CHANNEL_TRAIL, "", "unreadable", "a signed request that is no Approve or Reject press")
        )
        return JSONResponse({"detail": "Not an Approve or Reject press of this server's messages."}, 400)
    user = hitl_user(press.slack_user)
    if user is None:
        why = f"Slack member {press.slack_user} is not mapped to a HITL user (HITL_SLACK_USERS)"
        await _write(_record(press.thread_id, press.interrupt_id, f"slack:{press.slack_user}", why, press))
        slack_replies.refused(press, f"not allowed: {why}.")
        return Response(status_code=200)
    await decide(press, user)
    return Response(status_code=200)


async def decide(press: Press, user: User) -> None:
    """Answer the pressed interrupt as `user` through the API's checks, or say why not (audited)."""
    client = get_client()
    with as_server():
        try:
            pending = await _pending(press.thread_id, press.interrupt_id)
        except LookupError:
            why = f"thread {press.thread_id} does not exist (any more)"
            await _write(_record(CHANNEL_TRAIL, press.interrupt_id, user.identity, why, press, user=user))
            slack_replies.closed(press, why)
            return
        if pending is None:
            why = await _why_not_pending(press)
            await _write(_record(press.thread_id, press.interrupt_id, user.identity, why, press, user=user))
            slack_replies.closed(press, why)
            return
        graph_id = await threads.graph_of(client, press.thread_id)
        reason = press.reason or f"Rejected in Slack by {user.identity} (no reason given)."
        answer = _answer(pending, press.decision, reason)
        if graph_id is None or answer is None:
            why = "this approval cannot be answered from Slack; open it in the web app"
            await _write(_record(press.thread_id, press.interrupt_id, user.identity, why, press, user=user))
            slack_replies.refused(press, why)
            return
        command: dict[str, Any] = {"resume": {pending.id: answer}}
        try:
            await server_runs.start_admitted(
                user, press.thread_id, command, assistant_id=await _assistant_of(graph_id)
            )
        except Auth.exceptions.HTTPException as refusal:
            await _audit_refusal(press, user, str(refusal.detail))
            slack_replies.refused(press, f"not allowed: {refusal.detail}")
            return
        except server_runs.RunNotStarted as not_started:  # accepted: the reconciler records it as not applied
            slack_replies.refused(press, f"accepted, but it cannot be applied: {not_started.why}")
            return
    slack_replies.decided(press, user, reason if press.decision == REJECT else "")


async def _audit_refusal(press: Press, user: User, why: str) -> None:
    """Audit an admission refusal, unless `pipeline.decide` did already (its refusals are on the record).

    Admission refuses some presses before the gate (a thread that is not theirs, a busy thread);
    the API leaves those to its HTTP answer, a channel keeps them on the trail.
    """
    trail = await audit.trail(press.thread_id)
    last = trail[-1] if trail else None
    if not (
        last
        and last.get("outcome") == "refused"
        and last.get("reviewer") == user.identity
        and last.get("refusal") == why
    ):
        await _write(_record(press.thread_id, press.interrupt_id, user.identity, why, press, user=user))


def _answer(pending: Pending, decision: str, reason: str) -> Any:  # noqa: ANN401  (the answer's shape follows the interrupt's)
    """The resume answer to `pending` for an Approve or Reject press, or None if the shape allows none."""
    if decision == REJECT:
        return rejection(pending, reason)
    asked = read(pending.value)
    if asked is None or not all(APPROVE in ask.decisions for ask in asked.asks):
        return None
    match asked.kind:  # every published kind (`hitl.contracts.asks`): mypy checks none is missed
        case "batched":
            return {"decisions": [{"type": APPROVE} for _ in asked.asks]}
        case "tool_approval":
            return {"type": APPROVE}
        case "approval_request":
            return {"approved": True, "reason": None}
        case "form" | "mcp_elicitation":  # its fields (or an MCP server's question) are the person's to fill
            return None
        case _:
            assert_never(asked.kind)


async def _assistant_of(graph_id: str) -> str:
    """The id of the server's own assistant for `graph_id` (run admission reads runs by assistant id)."""
    found = await get_client().assistants.search(
        graph_id=graph_id, metadata={"created_by": "system"}, limit=1
    )
    return str(found[0]["assistant_id"]) if found else graph_id


async def _pending(thread_id: str, interrupt_id: str) -> Pending | None:
    """The interrupt still waiting on the thread's current checkpoint (escalations applied), if any.

    Raises:
        LookupError: there is no such thread.
    """
    try:
        state = await get_client().threads.get_state(thread_id)
    except Exception as error:
        if is_not_found(error):
            raise LookupError(thread_id) from None
        raise
    waiting = await threads.escalated(thread_id, Pending.from_state(dict(state)))
    return next((p for p in waiting if p.id == interrupt_id), None)


async def _why_not_pending(press: Press) -> str:
    """Why the pressed interrupt waits no more: who answered it, or that it expired."""
    trail = await audit.trail(press.thread_id)
    answered = [
        r
        for r in trail
        if r.get("outcome") == "accepted" and press.interrupt_id in str(r.get("interrupt_id"))
    ]
    if not answered:
        return "already answered"
    last = answered[-1]
    if last.get("reviewer") == "system":
        return "expired: nobody decided before the deadline"
    return f"already answered: {last.get('decision')} by {last.get('reviewer')}"


async def _refused_signed(verdict: Verdict, press: Press | None) -> None:
    """Audit the first refusal of a signed but stale or replayed press, in its thread's trail."""
    if press is None:
        await _write(
            _record(CHANNEL_TRAIL, "", "unverified", verdict.value, detail="an unreadable signed request")
        )
        return
    user = hitl_user(press.slack_user)
    who = user.identity if user else f"slack:{press.slack_user}"
    await _write(_record(press.thread_id, press.interrupt_id, who, verdict.value, press, user=user))


class UnverifiedRequests:
    """Requests refused before being read (forged, stale, replayed): counted, logged at most once a minute.

    Anyone who can reach the route can send forged ones, so none is written to the audit trail
    (300 of them wrote 300 records): the metric `hitl_slack_unverified_requests` counts each,
    and the log says how many came in each minute that had some. A stale or replayed press
    carries a real signature: its first refusal is audited (`first_refusal`), its repeats only
    counted. Refusals of fresh signed presses (an unmapped member, the gate) are audited.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """Count with `clock` (monotonic seconds)."""
        self.clock = clock
        self.since_logged: Counter[str] = Counter()
        self.logged_at: float | None = None

    def refused(self, verdict: Verdict) -> None:
        """Count one refused request; log the counts if the last line is a minute old."""
        reason = verdict.name.lower()
        metrics.SLACK_UNVERIFIED.labels(reason=reason).inc()
        self.since_logged[reason] += 1
        now = self.clock()
        if self.logged_at is None or now - self.logged_at >= LOG_INTERVAL_SECONDS:
            counts = ", ".join(f"{n} {r}" for r, n in sorted(self.since_logged.items()))
            logger.warning("slack: refused unverified requests to %s: %s", "/channels/slack/actions", counts)
            self.since_logged.clear()
            self.logged_at = now


LOG_INTERVAL_SECONDS = 60.0
UNVERIFIED = UnverifiedRequests()


def _record(  # noqa: PLR0913  (where, who, why, and what was pressed)
    thread_id: str,
    interrupt_id: str,
    who: str,
    why: str,
    press: Press | None = None,
    *,
    user: User | None = None,
    detail: str = "",
) -> AuditRecord:
    """A refused Slack request, as an audit record."""
    said = f"via Slack: {press.decision} pressed by {press.slack_user}" if press else f"via Slack: {detail}"
    return AuditRecord(
        thread_id=thread_id,
        interrupt_id=interrupt_id,
        tool_call_id="",
        agent="",
        tool="",
        requested_args={},
        decision="refused",
        final_args=None,
        message=said[:500],
        reviewer=who,
        roles=user.memberships if user else [],
        decided_at=datetime.now(UTC).isoformat(),
        outcome="refused",
        refusal=why,
    )


async def _write(record: AuditRecord) -> None:
    """Append one record to its trail (a failure is logged: the refusal stands either way)."""
    try:
        await audit.write([record])
    except Exception:
        logger.exception("slack: could not audit a refused request")


async def channel_trail(request: Request) -> JSONResponse:
    """GET /channels/slack/audit: refused Slack requests that name no trustworthy thread (supervisors)."""
    if request.user["role"] != "supervisor":
        return JSONResponse({"detail": "Only a supervisor may read the Slack channel's audit trail."}, 403)
    return JSONResponse({"records": await audit.trail(CHANNEL_TRAIL)})
