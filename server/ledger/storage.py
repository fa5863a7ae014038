"""The approval layer's own store: its tables, in a database of their own that every replica shares.

Run starts and Slack replays (`hitl_approval_claims`), the watcher's acts and leases
(`server.coordination.leadership`), the audit trail and its heads (`server.records.trail`), accepted
decisions and the interrupts they decided (`server.decisions.store`), the notices to deliver
(`server.coordination.outbox`), the inbox's rows and their counts (`server.coordination.inbox_table`,
`server.ledger.inbox_counts`), the graph each thread runs (`server.records.threads`) and what a
first-line reviewer made of each call put to it (`server.first_line`).
They live in the database `HITL_DATABASE_URL` names (SQLite `DATA_DIR/hitl.db` by default;
PostgreSQL on replicas), never in the business database: no agent tool, SQL console or business
connection reaches them (`server.ledger.apart` checks it at start; a store made by an
older release, inside the business database, is moved out by `server.ledger.move`). Tables
are made on first use under a lock (`schema_lock`). Not for business data.
"""

from __future__ import annotations

import logging
import time
import weakref
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import (
    Column,
    Engine,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    func,
    select,
)
from sqlalchemy.exc import DBAPIError

from hitl.databases import SCHEMA_LOCK, open_database, schema_lock
from hitl.settings import get_settings

if TYPE_CHECKING:
    from collections.abc import Callable

logger = logging.getLogger(__name__)
T = TypeVar("T")

METADATA = MetaData()

approval_claims = (
    Table(  # a run starting on a thread (`server.coordination.run_starts`), a Slack press seen once
        "hitl_approval_claims",
        METADATA,
        Column("interrupt_id", String(200), primary_key=True),  # "run-start:<thread>", "slack:<...>"
        Column("claimed_by", Text, nullable=False),  # a run id or a user identity: no length bound of ours
        Column("claimed_at", Float, nullable=False),  # seconds since the epoch
    )
)

watcher_acts = Table(  # what the watcher did once, fenced by its lease (`server.coordination.leadership`)
    "hitl_watcher_acts",
    METADATA,
    Column("key", String(300), primary_key=True),  # "notice:<interrupt>:<event>", "escalated:<interrupt>"
    Column("token", Integer, nullable=False),  # the lease token of the leader that did it
    Column("done_at", Float, nullable=False),  # seconds since the epoch
)

leases = Table(  # which process leads a duty such as the watcher (`server.coordination.leadership`)
    "hitl_leases",
    METADATA,
    Column("name", String(64), primary_key=True),
    Column("holder", String(300), nullable=False),  # host-pid-random (`server.coordination.leadership`)
    Column("token", Integer, nullable=False),  # fencing token: grows with every change of holder
    Column("expires_at", Float, nullable=False),  # seconds since the epoch
)

audit_records = Table(  # one line of a thread's audit trail (`server.records.trail`)
    "hitl_audit_records",
    METADATA,
    Column("thread_id", String(200), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),  # 1, 2, ... in the thread's trail
    Column("record", Text, nullable=False),  # the chained record's JSON, `key` and `hash` included
)

audit_heads = Table(  # the last record of each thread's trail: appends lock this row (`server.records.trail`)
    "hitl_audit_heads",
    METADATA,
    Column("thread_id", String(200), primary_key=True),
    Column("seq", Integer, nullable=False),
    Column("key", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
)

decisions = Table(  # an accepted decision, and how far its effect got (`server.decisions.store`)
    "hitl_decisions",
    METADATA,
    Column("decision_id", String(64), primary_key=True),
    Column("thread_id", String(200), nullable=False, index=True),
    Column("reviewer", Text, nullable=False),
    Column("role", String(32), nullable=False),
    Column("answer_sha256", String(64), nullable=False),  # of the command as its sender sent it
    Column("idempotency_key", String(200), nullable=True),  # the sender's Idempotency-Key, if any
    Column("sent", Text, nullable=False),  # JSON: the command as sent (the reconciler sends it again)
    Column("command", Text, nullable=False),  # JSON: the command as accepted, receipts in its update
    Column("receipts", Text, nullable=False),  # JSON: the signed receipts
    Column(
        "seal", String(64), nullable=True
    ),  # the server's seal over the rest (server.decisions.provenance)
    Column("assistant_id", String(200), nullable=True),
    Column("run_id", String(64), nullable=True),  # the run applying it (None: not known yet)
    Column("state", String(16), nullable=False),  # accepted | applied | failed
    Column("attempts", Integer, nullable=False),  # runs started to apply it
    Column("accepted_at", Float, nullable=False),  # seconds since the epoch
    Column("tried_at", Float, nullable=False),  # when its latest run was admitted
)

decided_interrupts = Table(  # the claim an accepted decision holds on each interrupt it answers
    "hitl_decided_interrupts",
    METADATA,
    Column("interrupt_id", String(200), primary_key=True),
    Column("decision_id", String(64), nullable=False, index=True),
)

notice_outbox = (
    Table(  # a notice the watcher's leader must deliver at least once (`server.coordination.outbox`)
        "hitl_notice_outbox",
        METADATA,
        Column("notice_id", String(400), primary_key=True),  # stable: receivers dedupe on it
        Column("channel", String(32), nullable=False),  # webhook | slack | email
        Column("payload", Text, nullable=False),  # JSON: where to and what
        Column("created_at", Float, nullable=False),
        Column("delivered_at", Float, nullable=True),  # None until the receiver accepted it
        Column("attempts", Integer, nullable=False),
        Column("next_try_at", Float, nullable=False),  # a delivery in flight holds it until then
    )
)

thread_graphs = Table(  # the graph of each thread's first run, written once (`server.records.threads`)
    "hitl_thread_graphs",
    METADATA,
    Column("thread_id", String(200), primary_key=True),
    Column("graph_id", String(200), nullable=False),
    Column("recorded_at", Float, nullable=False),  # seconds since the epoch
)

store_marks = Table(  # what was done to this store once, for good (`server.ledger.move`)
    "hitl_store_marks",
    METADATA,
    Column("mark", String(64), primary_key=True),  # "moved-from-business": an older release's records came in
    Column("made_at", Float, nullable=False),  # seconds since the epoch
)

inbox = Table(  # one pending call, as the inbox serves it (`server.coordination.inbox_table`)
    "hitl_inbox",
    METADATA,
    Column("thread_id", String(200), primary_key=True),
    Column("interrupt_id", String(200), primary_key=True),
    Column("action_index", Integer, primary_key=True, autoincrement=False),
    Column("created_at", String(40), nullable=False),  # ISO: when its thread paused (the inbox's order)
    Column("decided_by", String(200), nullable=False),  # the group (a role is one) or "owner" that decides it
    Column("owner", String(200), nullable=True),  # who started the thread (the "asked by" filter)
    Column("agent", String(200), nullable=True),
    Column("graph_id", String(200), nullable=True),
    Column("tool", String(200), nullable=True),
    Column("deadline", String(40), nullable=True),  # ISO, UTC: when the watcher acts (None: never)
    Column("approved_by", Text, nullable=False),  # ",a,b,": a quorum's approvers so far ("waiting for me")
    Column("noticed", Integer, nullable=False),  # 0 until the watcher's leader announced it
    Column("row", Text, nullable=False),  # JSON: the row as `GET /inbox` serves it (without its age)
    Column("written_at", Float, nullable=False),  # seconds since the epoch
    Index("hitl_inbox_by_group", "decided_by", "created_at", "thread_id", "interrupt_id", "action_index"),
    Index("hitl_inbox_by_owner", "owner", "decided_by", "created_at", "thread_id", "interrupt_id"),
    Index("hitl_inbox_by_deadline", "deadline"),
    Index("hitl_inbox_unnoticed", "noticed"),
)

inbox_counts = Table(  # how many `hitl_inbox` rows each key has, kept with them (`inbox_counts`)
    "hitl_inbox_counts",
    METADATA,
    Column("decided_by", String(200), primary_key=True),  # the group (a role is one) or "owner"
    Column("owner", String(200), primary_key=True),  # the owner of an "owner" row; '' for a group's
    Column("tool", String(200), primary_key=True),  # '' for none
    Column("n", Integer, nullable=False),  # rows of that key now (a key at 0 is deleted)
)

inbox_read = Table(  # the record of each thread its `hitl_inbox` rows came from (`inbox_table_rows`)
    "hitl_inbox_read",
    METADATA,
    Column("thread_id", String(200), primary_key=True),
    Column("read_at", String(40), nullable=False),  # its `updated_at`, ISO UTC: no older record is written
)

inbox_seen = Table(  # how far the watchers have read the runtime's thread changes (`inbox_table`)
    "hitl_inbox_seen",
    METADATA,
    Column("name", String(64), primary_key=True),  # "changes"
    Column("seen_until", String(40), nullable=False),  # the newest thread `updated_at` read, ISO
)

first_line_verdicts = Table(  # what a first-line reviewer made of each call put to it (`server.first_line`)
    "hitl_first_line_verdicts",
    METADATA,
    Column("thread_id", String(200), primary_key=True),
    Column("tool_call_id", String(200), primary_key=True),
    Column("reviewer", String(200), nullable=False),  # model:<name>
    Column("agent", String(200), nullable=False),
    Column("tool", String(200), nullable=False),
    Column("stood_for", String(200), nullable=False),  # the group whose call it took
    Column("model", String(300), nullable=False),  # scripted:<name> or provider:model
    Column("decision", String(16), nullable=False),  # approve | reject | refer
    Column("cause", String(16), nullable=False),  # model | not_allowed | timeout | error | ... | breaker
    Column("reason", Text, nullable=False),
    Column("args", Text, nullable=False),  # JSON: the call's args as it decided them
    Column("latency_ms", Float, nullable=False),
    Column("decided_at", Float, nullable=False),  # seconds since the epoch
    Column("refusal", Integer, nullable=False),  # 1: it did not approve (counts toward its circuit breaker)
    Column("sampled", Integer, nullable=False),  # 1: an approve put before a person afterwards
    Column("receipt", Text, nullable=True),  # JSON: the signed receipt of an approve or reject
    Column("review", String(16), nullable=True),  # a person's word afterwards: fine | should_not_have
    Column("reviewed_by", String(200), nullable=True),
    Column("reviewed_at", Float, nullable=True),
    Index("hitl_first_line_by_reviewer", "reviewer", "decided_at"),
    Index("hitl_first_line_by_thread", "thread_id", "reviewer", "decided_at"),
    Index("hitl_first_line_samples", "sampled", "review", "decided_at"),
)

_READY: weakref.WeakSet[Engine] = weakref.WeakSet()


def engine() -> Engine:
    """This process's engine on the layer's own store, with the layer's tables made (blocking)."""
    return ready(open_database(get_settings().resolved_hitl_database_url))


def using(given: Engine | None = None) -> Engine:
    """`given` (a test's store) with the layer's tables made, else `engine()` (blocking)."""
    return engine() if given is None else ready(given)


def ready(database: Engine) -> Engine:
    """`database` with the approval layer's tables made (once per engine; blocking)."""
    if database in _READY:
        return database
    url = database.url.render_as_string(hide_password=False)
    with schema_lock(url), database.begin() as conn:
        if database.dialect.name == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(SCHEMA_LOCK)))
        METADATA.create_all(conn)
    _READY.add(database)
    return database


RETRY_SECONDS = 8.0
"""How long a statement is retried while the database is unreachable (a restart takes 1-3 s)."""


def retrying(work: Callable[[], T], what: str, *, seconds: float = RETRY_SECONDS) -> T:
    """`work()`, again after a lost connection until `seconds` have passed (blocking).

    Only for work that is safe to repeat: a transaction that fails rolls back, but a commit
    cut off by the connection may have happened, so `work` must tell its own earlier commit.
    """
    deadline = time.monotonic() + seconds
    pause = 0.1
    while True:
        try:
            return work()
        except DBAPIError as error:
            if not _lost_connection(error) or time.monotonic() + pause > deadline:
                raise
            logger.warning("%s: the database connection was lost (%s); trying again", what, error.orig)
            time.sleep(pause)
            pause = min(pause * 2, 1.0)


def _lost_connection(error: DBAPIError) -> bool:
    """Whether `error` says the connection failed (not the statement): OperationalError, invalidation."""
    kinds = {kind.__name__ for kind in type(error.orig).__mro__} if error.orig is not None else set()
    return bool(error.connection_invalidated) or bool(kinds & {"OperationalError", "InterfaceError"})
