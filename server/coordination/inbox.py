"""The approval inbox: every pending approval across threads that the caller may decide.

Served from `server.coordination.pending_index.INDEX`, filtered by who may decide, oldest first. The
cursor is the position of the last item returned, not an offset, so a page stays stable
while other approvals are being resolved.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from server.coordination.inbox_rows import IndexedRow, RowKey, row_key, rows_of
from server.coordination.pending_index import INDEX

if TYPE_CHECKING:
    from collections.abc import Mapping

    from langgraph_sdk.client import LangGraphClient

    from server.decisions.pending import Pending
    from server.identity.users import User
    from server.records.threads import Escalation

TOTALS_KEPT = 256
"""Totals remembered per index version (one per user and filter), since counting is O(n)."""
MAX_PAGE = 500
MAX_CURSOR_CHARS = 1024
"""A cursor this server makes is a few hundred characters; longer ones are refused unread."""
MAX_FILTER_CHARS = 200
ROW_KEY_PARTS = 4
"""A cursor decodes to the four parts of a `RowKey`."""


@dataclass(frozen=True)
class InboxQuery:
    """Filters and the page asked for."""

    agent: str | None = None
    tool: str | None = None
    limit: int = 50
    after: RowKey | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> InboxQuery:
        """The query `GET /inbox?agent=&tool=&limit=&cursor=` asks for.

        Raises:
            ValueError: naming the parameter that is wrong and what it must be.
        """
        raw_limit = params.get("limit", str(cls.limit))
        if not (raw_limit.isascii() and raw_limit.isdigit() and len(raw_limit) <= len(str(MAX_PAGE))):
            msg = f"limit must be a whole number between 1 and {MAX_PAGE} (got {raw_limit[:20]!r})"
            raise ValueError(msg)
        limit = int(raw_limit)
        if not 1 <= limit <= MAX_PAGE:
            msg = f"limit must be between 1 and {MAX_PAGE} (got {limit})"
            raise ValueError(msg)
        filters = {}
        for name in ("agent", "tool"):
            value = params.get(name) or None
            if value is not None and (len(value) > MAX_FILTER_CHARS or not value.isprintable()):
                msg = f"{name} must be a name of at most {MAX_FILTER_CHARS} printable characters"
                raise ValueError(msg)
            filters[name] = value
        after = cls.decode_cursor(params.get("cursor"))
        return cls(agent=filters["agent"], tool=filters["tool"], limit=limit, after=after)

    @staticmethod
    def decode_cursor(cursor: str | None) -> RowKey | None:
        """The position a cursor points after.

        Raises:
            ValueError: for a cursor this server did not make.
        """
        if not cursor:
            return None
        msg = "cursor is not one this server returned; start again without it"
        if len(cursor) > MAX_CURSOR_CHARS or not cursor.isascii():
            raise ValueError(msg)
        try:
            key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        except (ValueError, TypeError, RecursionError) as error:
            raise ValueError(msg) from error
        if not (
            isinstance(key, list)
            and len(key) == ROW_KEY_PARTS
            and all(isinstance(part, str) for part in key[:3])
            and type(key[3]) is int
        ):
            raise ValueError(msg)
        return key[0], key[1], key[2], key[3]

    def keeps(self, user: User) -> Any:  # noqa: ANN401  (a row predicate)
        """The predicate for rows `user` may decide that match this query's filters."""

        def keep(indexed: IndexedRow) -> bool:
            return (
                (self.agent is None or self.agent in {indexed.agent, indexed.graph_id})
                and (self.tool is None or indexed.tool == self.tool)
                and indexed.visible_to(user)
            )

        return keep


def encode_cursor(item: dict[str, Any]) -> str:
    """The cursor that continues after `item`."""
    return base64.urlsafe_b64encode(json.dumps(list(row_key(item))).encode()).decode()


def items_of(
    thread: dict[str, Any],
    pending_list: list[Pending],
    escalations: Mapping[str, Escalation],
    user: User,
    now: datetime,
) -> list[dict[str, Any]]:
    """The inbox rows of one thread that `user` may decide, with their age at `now`."""
    return [
        with_age(row, now)
        for row, kept in rows_of(thread, pending_list, escalations)
        if kept.visible_to(user)
    ]


def with_age(row: dict[str, Any], now: datetime) -> dict[str, Any]:
    """`row` as served: with how long it has waited, in seconds."""
    try:
        age = max(0.0, (now - datetime.fromisoformat(row["created_at"])).total_seconds())
    except ValueError:
        age = 0.0
    return {**row, "age_seconds": age}


_totals: dict[tuple[object, ...], int] = {}


async def page_of(client: LangGraphClient, user: User, query: InboxQuery) -> dict[str, Any]:
    """One page of the inbox and the cursor of the next one (None at the end)."""
    await INDEX.sync(client)
    keep = query.keeps(user)
    rows, more = INDEX.page(query.after, query.limit, keep)
    now = datetime.now(UTC)
    items = [with_age(row, now) for row in rows]
    return {
        "items": items,
        "next_cursor": encode_cursor(items[-1]) if more and items else None,
        "total": _total(user, query, keep),
    }


def _total(user: User, query: InboxQuery, keep: Any) -> int:  # noqa: ANN401  (a row predicate)
    """How many rows `user` may decide under `query`'s filters, counted once per index version."""
    key = (INDEX.version, user.identity, tuple(sorted(user.roles)), query.agent, query.tool)
    if (total := _totals.get(key)) is None:
        if len(_totals) >= TOTALS_KEPT or any(k[0] != INDEX.version for k in _totals):
            _totals.clear()
        total = _totals[key] = INDEX.count(keep)
    return total
