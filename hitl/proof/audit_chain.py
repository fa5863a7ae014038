"""The audit trail's hash chain: each record carries the hash of the one before it in its thread.

`link` stamps a record with `prev_hash` and its own `hash` (SHA-256 of its canonical JSON); the
thread's head (the last hash and key) is kept beside the trail, where no client reaches. `check`
names every record that was edited, deleted or cut off the end. Where records are stored is the
writers' business: a graph's own records (`hitl.gate.tool_outcome`, `hitl.proof.receipt_check`) go to its
Store, or inside a server to the server's trail (`keep_in`, set by `server.records.audit`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from langgraph.store.base import BaseStore

AUDIT_NAMESPACE = "audit"
"""Store namespace (then the thread id) of the trail; `server.records.audit` reads and writes it too."""
HEAD_NAMESPACE = ("hitl_records", "audit_head")
"""Store namespace (then the thread id) of each thread's head; `hitl_records` is the server's own."""
HEAD_KEY = "head"
NOT_HASHED = frozenset({"hash", "key"})
"""A record's own hash, and the store key `server.records.audit.trail` adds, are not part of its content."""


def record_hash(record: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of `record` (with its `prev_hash`, without `hash` and `key`)."""
    body = {k: v for k, v in record.items() if k not in NOT_HASHED}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def link(record: Mapping[str, Any], prev_hash: str) -> dict[str, Any]:
    """`record` chained after the record whose hash is `prev_hash` ('' for a thread's first)."""
    linked = {**record, "prev_hash": prev_hash}
    return {**linked, "hash": record_hash(linked)}


def head(key: str, record_hash_: str) -> dict[str, str]:
    """The head item: the last record's store key and hash."""
    return {"key": key, "hash": record_hash_}


def _writes(
    thread_id: str, key: str, record: Mapping[str, Any], current: object
) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    """The store writes that append `record` after the head `current`: the record, then the new head."""
    previous = current.get("hash", "") if isinstance(current, dict) else ""
    linked = link(record, str(previous))
    return [
        ((AUDIT_NAMESPACE, thread_id), key, linked),
        ((*HEAD_NAMESPACE, thread_id), HEAD_KEY, head(key, linked["hash"])),
    ]


_keeper: list[Callable[[Mapping[str, Any]], None]] = []


def keep_in(keeper: Callable[[Mapping[str, Any]], None]) -> None:
    """Inside a server: append the graph's records with `keeper` (the server's trail), not to its Store.

    `keeper(record)` appends one record (with its `thread_id`) and chains it (blocking).
    """
    _keeper[:] = [keeper]


def put(store: BaseStore, thread_id: str, key: str, record: Mapping[str, Any]) -> None:
    """Append `record` to `thread_id`'s trail in a graph's store, chained (sync tool nodes)."""
    if _keeper:
        _keeper[0]({**record, "thread_id": thread_id})
        return
    current = store.get((*HEAD_NAMESPACE, thread_id), HEAD_KEY)
    for namespace, item_key, value in _writes(thread_id, key, record, current.value if current else None):
        store.put(namespace, item_key, value, index=False)


async def aput(store: BaseStore, thread_id: str, key: str, record: Mapping[str, Any]) -> None:
    """`put` for async tool nodes."""
    if _keeper:
        await asyncio.to_thread(_keeper[0], {**record, "thread_id": thread_id})
        return
    current = await store.aget((*HEAD_NAMESPACE, thread_id), HEAD_KEY)
    for namespace, item_key, value in _writes(thread_id, key, record, current.value if current else None):
        await store.aput(namespace, item_key, value, index=False)


def _name(record: Mapping[str, Any], index: int) -> str:
    what = f"{record.get('decision')} of {record.get('tool') or 'the thread'} by {record.get('reviewer')}"
    return f"record #{index + 1} ({record.get('key', '?')}: {what})"


def check(records: Sequence[Mapping[str, Any]], head_item: Mapping[str, Any] | None = None) -> list[str]:
    """What is wrong with a thread's trail (oldest first): empty when the chain is whole.

    `head_item` is the server's last hash; without it a cut at the end cannot be seen.
    """
    problems: list[str] = []
    previous: Mapping[str, Any] | None = None
    for index, record in enumerate(records):
        name = _name(record, index)
        if "hash" not in record or "prev_hash" not in record:
            problems.append(f"{name} is not chained (no hash): it was added outside the server's trail")
            previous = record
            continue
        if record_hash(record) != record["hash"]:
            problems.append(f"{name} was changed after it was written (its hash does not match)")
        expected = str(previous.get("hash", "")) if previous is not None else ""
        if record["prev_hash"] != expected:
            after = f"after {_name(previous, index - 1)}" if previous is not None else "at the start"
            problems.append(
                f"{name} does not follow the record before it: a record {after} was deleted or replaced"
            )
        previous = record
    if head_item is not None and isinstance(head_item.get("hash"), str):
        last = str(previous.get("hash", "")) if previous is not None else ""
        if head_item["hash"] != last:
            problems.append(
                f"the trail ends early: the server's last record is {head_item.get('key')}, "
                f"which is missing or changed (deleted at the end)"
            )
    return problems
