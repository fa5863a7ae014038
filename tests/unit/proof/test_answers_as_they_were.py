"""A tool's own question is recorded as what its answer was, and `hitl verify` says the same (issue 47).

On 52a94d2 a team's `missing-receipt` form (here `expense-note`) answered with a date, a vendor and
an amount was signed, audited and verified as **reject** (`_receipts_for` counted only `decision:
approve` or `approved: true` as an approval). Now a form's answer is `answered`, with its values in
the signed `final_args` digest; a form whose answer model declares `decision: approve | cancel` is
recorded as that word; a sign-off stays approve or reject. The receipt goes through the server's
signing and `hitl verify --receipt` (a subprocess, as a person runs it, against the published keys).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from hitl.contracts.forms import register_form
from hitl.proof.receipt_keys import load
from hitl.proof.signed_receipts import sign
from hitl.settings import Settings
from server.decisions.pending import Accepted, Pending
from server.identity.users import User
from server.records import audit

ROOT = Path(__file__).resolve().parents[3]
HITL = Path(sys.executable).parent / "hitl"
"""The `hitl` command of this environment, as a person runs it."""
OWNER = User("requester1", "requester")


class ExpenseNoteAnswer(BaseModel):
    """A team's form: what was bought, where, for how much."""

    model_config = ConfigDict(extra="forbid")
    date: str
    vendor: str
    amount: float


class BookOrCancel(BaseModel):
    """A form that wants an explicit approve or cancel declares it."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve", "cancel"]


register_form("expense-note", ExpenseNoteAnswer)
register_form("book-or-cancel", BookOrCancel)


def form(name: str) -> Pending:
    value = {
        "type": "form",
        "form": name,
        "title": name,
        "context": {"claim": "C-7"},
        "agent": "expenses",
        "tool_call_id": "call-7",
    }
    return Pending(id="int-7", value=value)


def sign_off() -> Pending:
    value = {
        "type": "approval_request",
        "action": "deploy",
        "message": "Deploy?",
        "agent": "ops",
        "tool_call_id": "call-8",
    }
    return Pending(id="int-8", value=value)


@pytest.mark.parametrize(
    ("pending", "answer", "word"),
    [
        (
            form("expense-note"),
            {"date": "2026-12-01", "vendor": "Cafe Lisboa", "amount": 12.5},
            "answered",
        ),
        (form("book-or-cancel"), {"decision": "approve"}, "approve"),
        (form("book-or-cancel"), {"decision": "cancel"}, "cancel"),
        (sign_off(), {"approved": True, "reason": None}, "approve"),
        (sign_off(), {"approved": False, "reason": "not today"}, "reject"),
    ],
)
def test_an_answer_is_signed_and_verified_as_what_it_was(tmp_path, pending, answer: dict[str, Any], word):
    """answered / approve / cancel / reject: in the receipt, its JWS, and `hitl verify`'s report."""
    (receipt,) = audit.receipts([Accepted(pending, answer)], OWNER)
    assert (receipt["decision"], receipt["final_args"]) == (word, answer)
    keys = load(Settings(data_dir=tmp_path, _env_file=None))
    signed = sign(receipt, "thread-7", keys, policy_revision="rev", audit_head="")
    (tmp_path / "receipt.json").write_text(json.dumps({**signed, "thread_id": "thread-7"}))  # as state has it
    (tmp_path / "jwks.json").write_text(json.dumps(keys.jwks))
    done = subprocess.run(
        [
            str(HITL),
            "verify",
            "--receipt",
            str(tmp_path / "receipt.json"),
            "--jwks",
            str(tmp_path / "jwks.json"),
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    report = json.loads(done.stdout)
    assert (done.returncode, report["ok"], report["claims"]["decision"]) == (0, True, word), done.stderr
