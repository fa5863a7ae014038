"""`hitl verify`'s reading and printing: receipt files, exports, and a report in a few lines.

The checking itself is `hitl.proof.verification` (a thread) and `hitl.proof.signed_receipts` (one receipt);
this module only turns files into their inputs and their results into text for a terminal.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hitl.proof.signed_receipts import SIGNED_FIELD, ReceiptInvalidError, check, signed_claims

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from hitl.proof.verification import ReceiptResult, Report


def read_receipt(path: Path) -> dict[str, Any]:
    """A receipt from `path`: a JSON receipt (with `signed`), or a bare compact JWS.

    Raises:
        ValueError: the file holds neither.
    """
    text = path.read_text().strip()
    if text.count(".") == 2 and not text.startswith(("{", "[")):  # noqa: PLR2004  (a JWS has three parts)
        return {SIGNED_FIELD: text}
    value = json.loads(text)
    if not isinstance(value, dict) or not isinstance(value.get(SIGNED_FIELD), str):
        msg = f"{path} holds no receipt: a JSON object with a 'signed' JWS, or the JWS itself"
        raise ValueError(msg)  # noqa: TRY004  (a file with the wrong content: its reader's ValueError)
    return value


def receipt_problems(receipt: dict[str, Any], jwks: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """What is wrong with one receipt, and its signed claims (empty when the signature fails).

    A bare JWS is checked for its signature only; a full receipt field by field too.
    """
    try:
        claims = signed_claims(receipt[SIGNED_FIELD], jwks)
    except ReceiptInvalidError as invalid:
        return [str(invalid)], {}
    bare = set(receipt) == {SIGNED_FIELD}
    return ([] if bare else check(receipt, jwks)), claims


def render_receipt(problems: list[str], claims: dict[str, Any], out: Console) -> None:
    """One receipt's verdict and what it binds (a first-line reviewer's model, when a model decided)."""
    if claims:
        who = claims.get("approver") or {}
        stamp = claims.get("first_line")
        if isinstance(stamp, dict):
            out.print(
                f"decided by a first-line reviewer (a model, not a person): {stamp.get('model')}",
                highlight=False,
            )
        out.print(
            f"receipt: {claims.get('tool')} ({claims.get('tool_call_id') or claims.get('interrupt_id')}) "
            f"{claims.get('decision')} by {who.get('identity')} ({', '.join(who.get('roles') or [])}) "
            f"on thread {claims.get('thread_id')} at {claims.get('decided_at')}",
            highlight=False,
        )
        out.print(
            f"  final args sha256 {claims.get('final_args_sha256')}, policy {claims.get('policy_revision')}",
            highlight=False,
        )
    for problem in problems:
        out.print(f"  [red]✗[/red] {problem}", highlight=False)
    if not problems:
        out.print("  [green]✓ verified[/green] against the JWKS")


def _line(result: ReceiptResult, out: Console, who: str) -> None:
    mark = "[green]✓[/green]" if result.verified else "[red]✗[/red]"
    subject = f"{result.tool} ({result.tool_call_id or result.interrupt_id}) {result.decision}{who}"
    out.print(f"  {mark} {subject} at {result.decided_at}", highlight=False)
    for problem in result.problems:
        out.print(f"      {problem}", highlight=False)


def render(report: Report, out: Console) -> None:
    """A thread's verdict: each receipt, the chain, notes, and one summary line."""
    out.print(f"thread {report.thread_id}")
    people = [r for r in report.receipts if not r.by_model]
    models = [r for r in report.receipts if r.by_model]
    for result in people:
        _line(result, out, f" by {result.decided_by}" if result.decided_by else "")
    if models:
        out.print("  decided by a first-line reviewer (a model, not a person):")
    for result in models:
        stamp = result.first_line or {}
        revision = str(stamp.get("policy_revision", ""))[:12]
        said = f" by {result.decided_by} ({stamp.get('model', 'model unknown')}, policy {revision})"
        _line(result, out, said)
    for problem in report.trail_problems:
        out.print(f"  [red]✗ audit trail:[/red] {problem}", highlight=False)
    for note in report.notes:
        out.print(f"  note: {note}", highlight=False)
    wrong = sum(not r.verified for r in report.receipts) + len(report.trail_problems)
    if report.ok:
        out.print(f"[green]verified:[/green] {len(report.receipts)} receipt(s) and the audit chain")
    else:
        out.print(f"[red]NOT verified:[/red] {wrong} problem(s)")
