"""Invoices and credit notes: looked up, voided once, credited once per tool call, owned by their customer.

The billing MCP server (`services.billing_mcp`) acts on them for an agent. Each write names the
tool call it is made for, so a call run again (a resumed run, a retried request) finds the row it
already wrote and writes nothing more. A request made for a customer (`owner=`) sees and changes only
that customer's invoices; one made with no owner (staff) any.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError

from services.database import credit_notes, invoices
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine


class Invoice(TypedDict):
    """An invoice as billing shows it: what is left to credit is `amount` minus `credited`."""

    invoice_id: str
    order_id: str
    amount: float
    status: str
    owner: str | None
    credited: float


class CreditNote(TypedDict):
    """A credit note: part of an invoice's amount given back, and why."""

    credit_note_id: str
    tool_call_id: str
    invoice_id: str
    amount: float
    reason: str
    created_at: str


class Invoices:
    """Reads and changes invoices in the business database."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def add(self, invoice_id: str, *, order_id: str, amount: float, owner: str | None) -> None:
        """Add an open invoice (tests and demos add their own)."""
        with self._engine.begin() as conn:
            conn.execute(
                insert(invoices).values(
                    invoice_id=invoice_id, order_id=order_id, amount=amount, status="open", owner=owner
                )
            )

    def get(self, invoice_id: str, *, owner: str | None = None) -> Invoice:
        """The invoice `invoice_id`, if it is `owner`'s (any when `owner` is None).

        Raises:
            BusinessRuleError: there is no such invoice, or it belongs to someone else.
        """
        with self._engine.connect() as conn:
            return _invoice(conn, invoice_id, owner)

    def void(self, invoice_id: str, *, tool_call_id: str, owner: str | None = None) -> Invoice:
        """Void `invoice_id` once; a replay of the same tool call returns it as it left it.

        Raises:
            BusinessRuleError: no such invoice (for `owner`), it is void already (by another call),
                or it has credit notes (void those first).
        """
        with self._engine.begin() as conn:
            invoice = _invoice(conn, invoice_id, owner)
            voided_by = conn.scalar(select(invoices.c.voided_by).where(invoices.c.invoice_id == invoice_id))
            if voided_by == tool_call_id:
                return invoice
            if invoice["status"] == "void":
                msg = f"Invoice {invoice_id} is void already."
                raise BusinessRuleError(msg)
            if invoice["credited"]:
                msg = (
                    f"Invoice {invoice_id} has credit notes of {invoice['credited']:g}; it cannot be voided."
                )
                raise BusinessRuleError(msg)
            done = conn.execute(
                update(invoices)
                .where(invoices.c.invoice_id == invoice_id, invoices.c.status == "open")
                .values(status="void", voided_by=tool_call_id)
            )
            if done.rowcount != 1:  # voided by another call a moment ago
                msg = f"Invoice {invoice_id} is void already."
                raise BusinessRuleError(msg)
            return {**invoice, "status": "void"}

    def credit(
        self, invoice_id: str, *, amount: float, reason: str, tool_call_id: str, owner: str | None = None
    ) -> CreditNote:
        """Write a credit note of `amount` on `invoice_id` once per tool call.

        Raises:
            BusinessRuleError: no such invoice (for `owner`), it is void, or `amount` is not more
                than 0 and at most what is left to credit.
        """
        with self._engine.begin() as conn:
            if (done := _credit_of(conn, tool_call_id)) is not None:
                return done
            invoice = _invoice(conn, invoice_id, owner)
            left = invoice["amount"] - invoice["credited"]
            if invoice["status"] == "void":
                msg = f"Invoice {invoice_id} is void; nothing can be credited on it."
                raise BusinessRuleError(msg)
            if not 0 < amount <= left:
                msg = (
                    f"A credit note on {invoice_id} must be more than 0 and at most {left:g} (got {amount:g})"
                )
                raise BusinessRuleError(msg)
        note = CreditNote(
            credit_note_id=f"CN-{uuid.uuid4().hex[:8].upper()}",
            tool_call_id=tool_call_id,
            invoice_id=invoice_id,
            amount=amount,
            reason=reason,
            created_at=datetime.now(UTC).isoformat(),
        )
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(credit_notes).values(**note))
        except IntegrityError:  # the same call, run twice at once, got there first
            with self._engine.connect() as conn:
                found = _credit_of(conn, tool_call_id)
            if found is None:
                raise
            return found
        return note

    def credit_notes(self, invoice_id: str) -> list[CreditNote]:
        """Every credit note on `invoice_id`, oldest first."""
        with self._engine.connect() as conn:
            rows = conn.execute(
                select(credit_notes)
                .where(credit_notes.c.invoice_id == invoice_id)
                .order_by(credit_notes.c.created_at)
            ).mappings()
            return [CreditNote(**row) for row in rows]  # type: ignore[typeddict-item]


def _invoice(conn: Connection, invoice_id: str, owner: str | None) -> Invoice:
    query = select(invoices).where(invoices.c.invoice_id == invoice_id)
    if owner is not None:
        query = query.where(invoices.c.owner == owner)
    row = conn.execute(query).first()
    if row is None:
        mine = f" for {owner}" if owner is not None else ""
        msg = f"There is no invoice {invoice_id}{mine}."
        raise BusinessRuleError(msg)
    credited = conn.scalar(
        select(func.coalesce(func.sum(credit_notes.c.amount), 0.0)).where(
            credit_notes.c.invoice_id == invoice_id
        )
    )
    return Invoice(
        invoice_id=row.invoice_id,
        order_id=row.order_id,
        amount=float(row.amount),
        status=row.status,
        owner=row.owner,
        credited=float(credited or 0),
    )


def _credit_of(conn: Connection, tool_call_id: str) -> CreditNote | None:
    query = select(credit_notes).where(credit_notes.c.tool_call_id == tool_call_id)
    row = conn.execute(query).mappings().first()
    return None if row is None else CreditNote(**row)  # type: ignore[typeddict-item]
