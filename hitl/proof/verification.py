"""Verify a thread's decisions from outside: every receipt against the JWKS, and the audit chain.

Input is what anyone allowed to read the thread can fetch, or export to a file (`Evidence`):
the published keys, the thread's audit trail and head, and the receipts in its state. The
result lists each receipt with what is wrong with it and who it names (a first-line reviewer's,
`model:<name>`, apart from people's), and what is wrong with the trail. Used by
`hitl verify` (online or offline) and the server's `GET /audit/{thread_id}/verification`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hitl.policy.first_line import is_model_actor
from hitl.proof import audit_chain
from hitl.proof.signed_receipts import SIGNED_FIELD, ReceiptInvalidError, check, describe, signed_claims

FAILED = "failed"
"""A tool's failure after a decision: written by the graph, which holds no signing key."""


@dataclass(frozen=True)
class Evidence:
    """What verification reads; `as_json` is the export format (`hitl verify --save`)."""

    thread_id: str
    jwks: dict[str, Any]
    records: list[dict[str, Any]]
    head: dict[str, Any] | None = None
    receipts: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The evidence as one JSON object."""
        return {
            "thread_id": self.thread_id,
            "jwks": self.jwks,
            "records": self.records,
            "head": self.head,
            "receipts": self.receipts,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        """Evidence from its export.

        Raises:
            ValueError: the object lacks a part verification needs.
        """
        missing = [k for k in ("thread_id", "jwks", "records") if k not in data]
        if missing:
            msg = f"the export lacks {', '.join(missing)}"
            raise ValueError(msg)
        return cls(
            thread_id=str(data["thread_id"]),
            jwks=dict(data["jwks"]),
            records=list(data["records"]),
            head=data.get("head"),
            receipts=list(data.get("receipts") or []),
        )


@dataclass(frozen=True)
class ReceiptResult:
    """One receipt's verdict: `verified` when it has no problems."""

    interrupt_id: str
    tool_call_id: str
    tool: str
    decision: str
    decided_at: str
    problems: list[str]
    decided_by: str = ""
    first_line: dict[str, Any] | None = None
    """A first-line reviewer's model and rules when a model decided (`decided_by` is `model:<name>`)."""

    @property
    def by_model(self) -> bool:
        """Whether a first-line reviewer (a model), not a person, decided: shown apart."""
        return is_model_actor(self.decided_by)

    @property
    def verified(self) -> bool:
        """Whether the receipt checks out (signature, fields, audit record, chain position)."""
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        """The verdict as JSON (the server route's `receipts` items)."""
        found: dict[str, Any] = {
            "interrupt_id": self.interrupt_id,
            "tool_call_id": self.tool_call_id,
            "tool": self.tool,
            "decision": self.decision,
            "decided_at": self.decided_at,
            "verified": self.verified,
            "problems": self.problems,
            "decided_by": self.decided_by,
        }
        if self.first_line is not None:
            found["first_line"] = self.first_line
        return found


@dataclass(frozen=True)
class Report:
    """A thread's verdict: its receipts, and the trail's own problems."""

    thread_id: str
    receipts: list[ReceiptResult]
    trail_problems: list[str]
    notes: list[str]

    @property
    def ok(self) -> bool:
        """Whether everything verifies."""
        return not self.trail_problems and all(r.verified for r in self.receipts)

    def as_json(self) -> dict[str, Any]:
        """The report as JSON."""
        return {
            "thread_id": self.thread_id,
            "ok": self.ok,
            "receipts": [r.as_json() for r in self.receipts],
            "trail_problems": self.trail_problems,
            "notes": self.notes,
        }


def _result(receipt: dict[str, Any], problems: list[str]) -> ReceiptResult:
    stamp = receipt.get("first_line")
    return ReceiptResult(
        interrupt_id=str(receipt.get("interrupt_id", "")),
        tool_call_id=str(receipt.get("tool_call_id", "")),
        tool=str(receipt.get("tool", "")),
        decision=str(receipt.get("decision", "")),
        decided_at=str(receipt.get("decided_at", "")),
        problems=problems,
        decided_by=str(receipt.get("reviewer") or ""),
        first_line=dict(stamp) if isinstance(stamp, dict) else None,
    )


def _audit_head(record: dict[str, Any], jwks: dict[str, Any]) -> str | None:
    """The audit head a signed record's receipt names; None when unsigned or its signature fails."""
    try:
        return str(signed_claims(record.get(SIGNED_FIELD), jwks).get("audit_head", ""))
    except ReceiptInvalidError:
        return None  # its signature's own problem is reported by `check`


def _chain_position(index: int, heads: list[str | None], hashes: dict[str, int]) -> str | None:
    """Whether the audit head record `index`'s receipt was signed after names a record before it.

    The receipts of one decision are signed together, so they share the head before them; ''
    (an empty trail) holds only for the signed records a thread's trail starts with.
    """
    head = heads[index]
    if head is None:
        return None
    if head == "":
        if all(earlier == "" for earlier in heads[:index]):
            return None
        return f"it was signed on an empty trail, but {index} record(s) precede it"
    where = hashes.get(head)
    if where is None or where >= index:
        return "the audit record it was signed after is not in the trail before it (the trail was rewritten)"
    return None


def verify(evidence: Evidence) -> Report:
    """Check every signed record and receipt against the JWKS, and the trail's chain."""
    records = evidence.records
    hashes = {str(r.get("hash")): i for i, r in enumerate(records) if r.get("hash")}
    results: list[ReceiptResult] = []
    by_token: dict[str, int] = {}
    heads = [_audit_head(r, evidence.jwks) if isinstance(r.get(SIGNED_FIELD), str) else None for r in records]
    for index, record in enumerate(records):
        token = record.get(SIGNED_FIELD)
        if not isinstance(token, str):
            continue
        by_token[token] = index
        problems = check(record, evidence.jwks, evidence.thread_id)
        if (position := _chain_position(index, heads, hashes)) is not None:
            problems.append(position)
        results.append(_result(record, [f"audit record #{index + 1}: {p}" for p in problems]))
    notes: list[str] = []
    for receipt in evidence.receipts:
        token = receipt.get(SIGNED_FIELD)
        if not isinstance(token, str):
            if receipt.get("decision") == FAILED:
                notes.append(f"{describe(receipt)}: a tool failure, recorded by the graph (not signed)")
            else:
                results.append(_result(receipt, [f"receipt {describe(receipt)} is not signed"]))
            continue
        problems = check(receipt, evidence.jwks, evidence.thread_id)
        if token not in by_token:
            problems.append("no audit record holds this receipt (deleted from the trail, or never written)")
        if problems:
            results.append(_result(receipt, [f"receipt in the thread's state: {p}" for p in problems]))
    return Report(
        thread_id=evidence.thread_id,
        receipts=results,
        trail_problems=audit_chain.check(records, evidence.head),
        notes=notes,
    )
