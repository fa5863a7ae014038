"""An inbox row: one pending call as the inbox, the watcher and the channels show it, and its source.

`rows_of` turns a thread's pending interrupts (escalations applied) into one row per call, with
who may decide it, its quorum's progress and what else waits on the thread for whom;
`IndexedRow` is what the pending index keeps of one; `interrupted_threads`, `pending_of`,
`runs_in_flight` and `newest_update` read the engine, as the server.
Not for keeping rows current (`pending_index`) or for paging them (`inbox`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hitl.policy.groups import SYSTEM_ACTOR
from server.decisions.pending import Pending
from server.identity.users import User
from server.records import threads

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from langgraph_sdk.client import LangGraphClient

    from server.identity.users import Decider
    from server.records.threads import Escalation

logger = logging.getLogger(__name__)


SEARCH_PAGE = 1000


SERVER_VIEW = User(identity=SYSTEM_ACTOR, role="supervisor")


FIELDS = ["thread_id", "updated_at", "metadata", "interrupts", "status"]


RowKey = tuple[str, str, str, int]
"""A row's place in the inbox: (created_at, thread_id, interrupt_id, action index)."""


@dataclass(frozen=True, slots=True)
class IndexedRow:
    """What the index keeps of one inbox row: its place, its filters, and who may decide it.

    The row itself (args, description, ...) is rebuilt from its thread for the rows served,
    so a pending approval costs the index a few hundred bytes, not a copy of itself.
    """

    key: RowKey
    agent: str | None
    graph_id: str | None
    tool: str | None
    deciders: frozenset[Decider]
    owner: str | None

    def visible_to(self, user: User) -> bool:
        """Whether `user` may decide this row."""
        return all(user.may_decide(d, self.owner) for d in self.deciders)


def rows_of(
    thread: dict[str, Any], pending_list: list[Pending], escalations: Mapping[str, Escalation]
) -> list[tuple[dict[str, Any], IndexedRow]]:
    """The inbox rows of one thread (without their age), each with what the index keeps of it.

    Who decides and until when come from the server's `escalations` records; of the thread's
    metadata only strings are read (`owner`, set by the server; `graph_id`, a filter only).
    """
    metadata = thread.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    owner, graph_id = (v if isinstance(v := metadata.get(k), str) else None for k in ("owner", "graph_id"))
    since = str(thread.get("updated_at") or "")
    roles = threads.roles(escalations)
    escalated = [listed.escalated(roles) for listed in pending_list]
    waiting = [
        (
            pending.id,
            {"interrupt_id": pending.id, "tool": action["tool"], "required_role": max(pending.deciders)},
        )
        for pending in escalated
        for action in actions_of(pending)
    ]
    rows = []
    for pending in escalated:
        escalation = escalations.get(pending.id)
        deciders = frozenset(pending.deciders)
        others = [row for interrupt_id, row in waiting if interrupt_id != pending.id]
        for index, action in enumerate(actions_of(pending)):
            row = {
                "thread_id": str(thread["thread_id"]),
                "interrupt_id": pending.id,
                "action_index": index,
                "kind": action["kind"],
                "agent": action["agent"],
                "graph_id": graph_id,
                "tool": action["tool"],
                "tool_call_id": action["tool_call_id"],
                "args": action["args"],
                "description": action["description"],
                "allowed_decisions": action["allowed_decisions"],
                "required_role": max(deciders),
                "owner": owner,
                "created_at": since,
                "deadline": escalation.deadline.isoformat() if escalation else pending.deadline,
                "escalated": pending.escalated_to is not None,
                **({"approvals": action["approvals"]} if action.get("approvals") else {}),
                **({"also_waiting": others} if others else {}),
            }
            kept = IndexedRow(row_key(row), row["agent"], row["graph_id"], row["tool"], deciders, owner)
            rows.append((row, kept))
    return rows


def row_key(row: dict[str, Any]) -> RowKey:
    """Where `row` sorts: oldest first, then by thread, interrupt and action."""
    return (row["created_at"], row["thread_id"], row["interrupt_id"], row["action_index"])


def actions_of(pending: Pending) -> list[dict[str, Any]]:
    """What a reviewer decides on in `pending`: one entry per action of a batch, else one."""
    value = pending.value if isinstance(pending.value, dict) else {}
    if isinstance(value.get("action_requests"), list):
        configs = value.get("review_configs") or []
        return [
            {
                "kind": "batched",
                "agent": action.get("agent", value.get("agent")),
                "tool": action.get("name"),
                "tool_call_id": action.get("tool_call_id"),
                "args": action.get("args", {}),
                "description": action.get("description", ""),
                "allowed_decisions": (configs[i] if i < len(configs) else {}).get("allowed_decisions", []),
                "approvals": _approvals(configs[i] if i < len(configs) else {}),
            }
            for i, action in enumerate(value["action_requests"])
        ]
    kind = str(value.get("type") or "interrupt")
    return [
        {
            "kind": kind,
            "agent": value.get("agent"),
            "tool": value.get("name") or value.get("form") or value.get("action") or kind,
            "tool_call_id": value.get("tool_call_id"),
            "args": value.get("args") or value.get("context") or {},
            "description": value.get("description") or value.get("title") or value.get("message") or "",
            "allowed_decisions": value.get("allowed_decisions") or [],
            "approvals": _approvals(value),
        }
    ]


def _approvals(config: object) -> dict[str, Any] | None:
    """A quorum's progress as an inbox row shows it: `{"required": 2, "approved_by": [...]}`, else None."""
    if not isinstance(config, dict) or not isinstance(required := config.get("approvals_required"), int):
        return None
    approved = config.get("approved_by")
    return {
        "required": required,
        "approved_by": [str(p) for p in approved] if isinstance(approved, list) else [],
    }


async def interrupted_threads(client: LangGraphClient) -> AsyncIterator[dict[str, Any]]:
    """Every interrupted thread, a search page at a time."""
    offset = 0
    while True:
        page = await client.threads.search(
            status="interrupted",
            limit=SEARCH_PAGE,
            offset=offset,
            select=FIELDS,  # type: ignore[arg-type]
        )
        for thread in page:
            yield dict(thread)
        if len(page) < SEARCH_PAGE:
            return
        offset += SEARCH_PAGE


async def pending_of(client: LangGraphClient, thread: dict[str, Any]) -> list[Pending]:
    """A thread's waiting interrupts; several are re-read from state (the record can lag)."""
    listed = Pending.from_thread(thread)
    if len(listed) <= 1:
        return listed
    return Pending.from_state(dict(await client.threads.get_state(str(thread["thread_id"]))))


async def runs_in_flight(client: LangGraphClient, thread_id: str) -> bool:
    """Whether a run of `thread_id` is pending or running (unreadable: taken as yes, the mark stays)."""
    try:
        for status in ("running", "pending"):
            if await client.runs.list(thread_id, status=status, limit=1):  # type: ignore[arg-type]
                return True
    except Exception:  # noqa: BLE001  (the mark is kept, at most SETTLE_SECONDS)
        return True
    return False


async def newest_update(client: LangGraphClient) -> str:
    """The `updated_at` of the thread the engine changed last ("" when it has none)."""
    page = await client.threads.search(sort_by="updated_at", sort_order="desc", limit=1, select=FIELDS)  # type: ignore[arg-type]
    return str(page[0].get("updated_at") or "") if page else ""
