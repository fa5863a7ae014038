"""The approval inbox: every pending approval the caller may decide, a page at a time, oldest first.

Served from the layer's own table (`server.coordination.inbox_table`), scoped in SQL to the
groups the caller decides as and to their own questions; each group's rows are read by its index
(`hitl_inbox_by_group`) and merged, so a page costs its own size whatever waits. The cursor is the
position of the last item returned (keyset), not an offset, so a page stays stable while other
approvals are being resolved. `counts` (per group, the caller's whole inbox) are read from the
counts kept with the rows (`server.ledger.inbox_counts`), and so is `total` (the rows the filters
match) unless a filter besides the group narrows it; both are kept for `COUNTS_SECONDS`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, func, or_, select, tuple_, union_all

from server.coordination.inbox_rows import RowKey, rows_of
from server.coordination.inbox_table import TABLE
from server.coordination.inbox_table_rows import listed, utc_stamp, written
from server.http.instants import instant
from server.ledger import inbox_counts
from server.ledger.storage import inbox

if TYPE_CHECKING:
    from collections.abc import Mapping

    from langgraph_sdk.client import LangGraphClient
    from sqlalchemy import ColumnElement, Engine

    from server.decisions.pending import Pending
    from server.identity.users import User
    from server.records.threads import Escalation

MAX_PAGE = 500
MAX_CURSOR_CHARS = 1024
"""A cursor this server makes is a few hundred characters; longer ones are refused unread."""
MAX_FILTER_CHARS = 200
ROW_KEY_PARTS = 4
"""A cursor decodes to the four parts of a `RowKey`."""
OWNER = "owner"
"""The `group` of a question its thread's owner answers: in the inbox of that owner only."""
GROUP_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
COUNTS_SECONDS = 1.0
"""How long a count is kept: within the inbox's freshness across replicas, and dropped by any write here."""
COUNTS_KEPT = 256
TRUE_WORDS = {"true": True, "1": True, "false": False, "0": False, "": False}


@dataclass(frozen=True)
class InboxQuery:
    """Filters and the page asked for."""

    agent: str | None = None
    tool: str | None = None
    group: str | None = None
    mine: bool = False
    """Waiting for me: rows whose quorum the caller has not yet approved."""
    deadline_before: str | None = None
    """UTC ISO: rows whose deadline comes before it."""
    asked_by: str | None = None
    """Rows of threads this person started."""
    limit: int = 50
    after: RowKey | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> InboxQuery:
        """The query `GET /inbox?agent=&tool=&group=&mine=&deadline_before=&asked_by=&limit=&cursor=`.

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
        names = {name: _name(params, name) for name in ("agent", "tool", "asked_by", "group")}
        if (group := names["group"]) is not None and group != OWNER and not GROUP_NAME.fullmatch(group):
            msg = (
                "group must be a group's name (lowercase letters, digits, '.', '_', '-'; up to 64) or 'owner'"
            )
            raise ValueError(msg)
        raw_mine = params.get("mine", "")
        if raw_mine.lower() not in TRUE_WORDS:
            msg = f"mine must be true or false (got {raw_mine[:20]!r})"
            raise ValueError(msg)
        return cls(
            agent=names["agent"],
            tool=names["tool"],
            group=group,
            mine=TRUE_WORDS[raw_mine.lower()],
            deadline_before=_instant("deadline_before", params.get("deadline_before")),
            asked_by=names["asked_by"],
            limit=limit,
            after=cls.decode_cursor(params.get("cursor")),
        )

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

    @property
    def filters(self) -> tuple[object, ...]:
        """What narrows the rows (not the page): a key for the counts kept."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.name not in {"limit", "after"})


def _name(params: Mapping[str, str], name: str) -> str | None:
    value = params.get(name) or None
    if value is not None and (len(value) > MAX_FILTER_CHARS or not value.isprintable()):
        msg = f"{name} must be a name of at most {MAX_FILTER_CHARS} printable characters"
        raise ValueError(msg)
    return value


def _instant(name: str, raw: str | None) -> str | None:
    """The time `name` says, as the inbox table's deadlines are written (`utc_stamp`)."""
    moment = instant(name, raw, zoned=True)
    return None if moment is None else utc_stamp(moment)


KEY = (inbox.c.created_at, inbox.c.thread_id, inbox.c.interrupt_id, inbox.c.action_index)


def scopes(user: User, group: str | None) -> list[ColumnElement[bool]]:
    """One condition per way `user` may decide a row (a group each, their own questions), each on an index."""
    mine = [inbox.c.decided_by == g for g in sorted(user.groups) if group in {None, g}]
    if group in {None, OWNER}:
        mine.append(and_(inbox.c.owner == user.identity, inbox.c.decided_by == OWNER))
    return mine


def narrowed(query: InboxQuery, user: User) -> list[ColumnElement[bool]]:
    """The filters of `query` as conditions (the scope aside)."""
    found: list[ColumnElement[bool]] = []
    if query.agent is not None:
        found.append(or_(inbox.c.agent == query.agent, inbox.c.graph_id == query.agent))
    if query.tool is not None:
        found.append(inbox.c.tool == query.tool)
    if query.asked_by is not None:
        found.append(inbox.c.owner == query.asked_by)
    if query.deadline_before is not None:
        found.append(and_(inbox.c.deadline.is_not(None), inbox.c.deadline < query.deadline_before))
    if query.mine:
        found.append(~inbox.c.approved_by.contains(f",{user.identity},", autoescape=True))
    return found


def read_page(engine: Engine, user: User, query: InboxQuery) -> tuple[list[dict[str, Any]], bool]:
    """Up to `query.limit` rows after the cursor that `user` may decide, oldest first; whether more follow.

    Each scope reads at most a page by its own index; the union is sorted and cut (blocking).
    """
    scoped = scopes(user, query.group)
    if not scoped:
        return [], False
    after = [tuple_(*KEY) > tuple_(*query.after)] if query.after is not None else []
    parts = [
        select(inbox.c.row, *KEY)
        .where(scope, *narrowed(query, user), *after)
        .order_by(*KEY)
        .limit(query.limit + 1)
        for scope in scoped
    ]
    wrapped = [select(*part.subquery().c) for part in parts]  # SQLite: no ORDER BY inside a compound
    merged = parts[0] if len(parts) == 1 else union_all(*wrapped).subquery().select()
    if len(parts) > 1:
        columns = merged.selected_columns
        merged = merged.order_by(
            columns.created_at, columns.thread_id, columns.interrupt_id, columns.action_index
        ).limit(query.limit + 1)
    with engine.connect() as conn:
        rows = [json.loads(r[0]) for r in conn.execute(merged)]
    for row in rows:
        listed(row["thread_id"], row["interrupt_id"], row["created_at"])
    return rows[: query.limit], len(rows) > query.limit


def read_counts(engine: Engine, user: User, query: InboxQuery) -> tuple[int, dict[str, int]]:
    """How many rows `query`'s filters match, and how many of the caller's whole inbox each group has.

    The counts per group are kept with the rows (`server.ledger.inbox_counts`): O(the caller's
    groups). So is the total when nothing but `group` narrows it; a filter on agent, tool, owner,
    deadline or "mine" counts the matching rows of the caller's groups by their indexes.
    """
    with engine.connect() as conn:
        counts = inbox_counts.of_reader(conn, user.groups, user.identity)
        if narrowed(query, user):
            total = sum(
                conn.scalar(select(func.count()).select_from(inbox).where(scope, *narrowed(query, user))) or 0
                for scope in scopes(user, query.group)
            )
        else:
            total = sum(n for group, n in counts.items() if query.group in {None, group})
    return total, dict(sorted(counts.items()))


def encode_cursor(item: dict[str, Any]) -> str:
    """The cursor that continues after `item`."""
    key = (item["created_at"], item["thread_id"], item["interrupt_id"], item["action_index"])
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode()


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


_counted: dict[tuple[object, ...], tuple[float, int, dict[str, int]]] = {}


def _counts(engine: Engine, user: User, query: InboxQuery) -> tuple[int, dict[str, int]]:
    """`read_counts`, kept for `COUNTS_SECONDS` per caller and filters while this process wrote nothing."""
    key = (written(), user.identity, tuple(sorted(user.groups)), query.filters)
    now = time.monotonic()
    if (kept := _counted.get(key)) is not None and now - kept[0] < COUNTS_SECONDS:
        return kept[1], kept[2]
    if len(_counted) >= COUNTS_KEPT:
        _counted.clear()
    total, counts = read_counts(engine, user, query)
    _counted[key] = (now, total, counts)
    return total, counts


async def page_of(client: LangGraphClient, user: User, query: InboxQuery) -> dict[str, Any]:
    """One page of the inbox, the cursor of the next one (None at the end), its total and counts per group.

    Read from the table only: no thread is read again here, whatever others wrote meanwhile
    (`server.http.inbox_marks`), so a page costs its own size.
    """
    await TABLE.ready(client)

    def read() -> tuple[list[dict[str, Any]], bool, int, dict[str, int]]:
        engine = TABLE.engine
        rows, more = read_page(engine, user, query)
        total, counts = _counts(engine, user, query)
        return rows, more, total, counts

    rows, more, total, counts = await asyncio.to_thread(read)
    now = datetime.now(UTC)
    items = [with_age(row, now) for row in rows]
    return {
        "items": items,
        "next_cursor": encode_cursor(items[-1]) if more and items else None,
        "total": total,
        "counts": counts,
    }
