"""The mail outbox: an e-mail is written once per tool call; delivery is out of scope."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from services.database import outbox
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine


class Email(TypedDict):
    """An outbox row."""

    email_id: str
    tool_call_id: str
    to_address: str
    subject: str
    body: str
    created_at: str


class Outbox:
    """Queues e-mails in the business database."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def send(self, *, tool_call_id: str, to: str, subject: str, body: str) -> Email:
        """Queue one e-mail; a replay of the same tool call returns the first one."""
        if "@" not in to:
            msg = f"{to!r} is not an e-mail address."
            raise BusinessRuleError(msg)
        email = Email(
            email_id=f"M-{uuid.uuid4().hex[:10]}",
            tool_call_id=tool_call_id,
            to_address=to,
            subject=subject,
            body=body,
            created_at=datetime.now(UTC).isoformat(),
        )
        try:
            with self._engine.begin() as conn:
                if (done := _by_tool_call(conn, tool_call_id)) is not None:
                    return done
                conn.execute(insert(outbox).values(**email))
        except IntegrityError:
            with self._engine.connect() as conn:
                done = _by_tool_call(conn, tool_call_id)
            if done is None:
                raise
            return done
        return email

    def sent_to(self, address: str) -> list[Email]:
        """Every e-mail queued for `address`."""
        with self._engine.connect() as conn:
            rows = conn.execute(select(outbox).where(outbox.c.to_address == address)).mappings()
            return [Email(**row) for row in rows]  # type: ignore[typeddict-item]


def _by_tool_call(conn: Connection, tool_call_id: str) -> Email | None:
    row = conn.execute(select(outbox).where(outbox.c.tool_call_id == tool_call_id)).mappings().first()
    return None if row is None else Email(**row)  # type: ignore[typeddict-item]
