"""Leases in the shared database, so one process among the replicas does a duty (the watcher's).

A lease row names its holder, a fencing token and when it expires. A process takes the lease
when it is free or expired (the token grows), renews it while it holds it, and leads only
until the expiry it wrote; a holder that stops renewing is replaced once that passes. What the
holder must do once (a notice, an escalation) is recorded with `act_once`, which the database
refuses to a holder that lost the lease meanwhile (fencing) and to a second attempt; a notice
is recorded with its act and delivered at least once (`server.coordination.outbox`). Not for claims on
approvals (`server.coordination.claims`).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import time
from typing import TYPE_CHECKING

from sqlalchemy import case, delete, exists, literal, select, update
from sqlalchemy.dialects import postgresql, sqlite

from server.ledger import storage
from server.ledger.storage import leases, watcher_acts

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy import Connection, Engine

    Along = Callable[[Connection, float], None]
    """What is written with an act, in its transaction: (connection, now)."""


def process_id() -> str:
    """A holder name unique to this process: host, pid and a random part (pids are reused)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"


class Lease:
    """One named lease as seen by this process: `hold` to take or renew it, `held` to ask."""

    def __init__(
        self, name: str, seconds: float, *, holder: str | None = None, engine: Engine | None = None
    ) -> None:
        """Lease `name` for `seconds` at a time, as `holder` (this process by default).

        `engine` is the layer's own store by default, opened on the first `hold`.
        """
        self.name = name
        self.seconds = seconds
        self.holder = holder or process_id()
        self.token: int | None = None
        """The fencing token while this process holds the lease, else None."""
        self._engine = engine
        self._until = 0.0

    def held(self, now: float | None = None) -> bool:
        """Whether this process holds the lease at `now` (seconds since the epoch), by what it wrote."""
        now = time.time() if now is None else now
        return self.token is not None and now < self._until

    async def hold(self, now: float | None = None) -> int | None:
        """Take or renew the lease (off the event loop); the fencing token, or None if another holds it."""
        return await asyncio.to_thread(self.hold_now, now)

    async def keep(self, now: float | None = None) -> bool:
        """Whether this process still leads: renews when less than half the lease is left."""
        now = time.time() if now is None else now
        if self.held(now) and self._until - now > self.seconds / 2:
            return True
        return await self.hold(now) is not None

    async def act_once(self, key: str, now: float | None = None, *, with_it: Along | None = None) -> bool:
        """Record that the leader does `key`; False if it was done before, or this process no longer leads.

        `with_it(conn, now)` writes what goes with the act in the same transaction (its notices,
        `server.coordination.outbox`), only when the act is recorded.
        """
        return await asyncio.to_thread(self.act_once_now, key, now, with_it=with_it)

    def act_once_now(self, key: str, now: float | None = None, *, with_it: Along | None = None) -> bool:
        """`act_once`, blocking: one statement that checks the lease row and inserts the act."""
        now = time.time() if now is None else now
        if self.token is None:
            return False
        engine = self._engine = storage.using(self._engine)
        row = leases.c
        leading = exists().where(
            row.name == self.name, row.holder == self.holder, row.token == self.token, row.expires_at > now
        )
        dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
        statement = (
            dialect.insert(watcher_acts)
            .from_select(
                ["key", "token", "done_at"],
                select(literal(key), literal(self.token), literal(now)).where(leading),
            )
            .on_conflict_do_nothing(index_elements=[watcher_acts.c.key])
        )
        with engine.begin() as conn:
            done = conn.execute(statement.returning(watcher_acts.c.key)).first() is not None
            if done and with_it is not None:
                with_it(conn, now)
            return done

    def acts(self, prefix: str) -> set[str]:
        """The keys of every act recorded under `prefix` (blocking; by any holder, ever)."""
        engine = self._engine = storage.using(self._engine)
        with engine.begin() as conn:
            found = conn.scalars(select(watcher_acts.c.key).where(watcher_acts.c.key.startswith(prefix)))
            return set(found)

    def forget_acts(self, before: float) -> None:
        """Delete the acts recorded before `before` (seconds since the epoch; blocking)."""
        engine = self._engine = storage.using(self._engine)
        with engine.begin() as conn:
            conn.execute(delete(watcher_acts).where(watcher_acts.c.done_at < before))

    def hold_now(self, now: float | None = None) -> int | None:
        """`hold`, blocking: for threads and processes that are not on an event loop."""
        now = time.time() if now is None else now
        engine = self._engine = storage.using(self._engine)
        with engine.begin() as conn:
            token = self._renew_or_take_over(conn, now) or self._take_free(conn, now)
        self.token = token
        self._until = now + self.seconds if token is not None else 0.0
        return token

    def _renew_or_take_over(self, conn: Connection, now: float) -> int | None:
        """Renew our lease (same token) or take an expired one (token + 1); None when neither."""
        row = leases.c
        return conn.scalar(
            update(leases)
            .where(row.name == self.name)
            .where((row.holder == self.holder) | (row.expires_at <= now))
            .values(
                token=case((row.holder == self.holder, row.token), else_=row.token + 1),
                holder=self.holder,
                expires_at=now + self.seconds,
            )
            .returning(row.token)
        )

    def _take_free(self, conn: Connection, now: float) -> int | None:
        """Create the lease with token 1 if nobody ever held it; None when it exists."""
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        statement = (
            dialect.insert(leases)
            .values(name=self.name, holder=self.holder, token=1, expires_at=now + self.seconds)
            .on_conflict_do_nothing(index_elements=[leases.c.name])
        )
        return conn.scalar(statement.returning(leases.c.token))
