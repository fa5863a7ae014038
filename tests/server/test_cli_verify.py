"""`hitl verify` end to end: a subprocess against the real server, then offline from its export."""

from __future__ import annotations

import json

import pytest

from agents.offline import phrases
from tests.server.test_cli import hitl, run_json

pytestmark = pytest.mark.server


def test_verify_a_thread_online_then_offline_and_see_tampering(server, server_order, tmp_path):
    """verify: online ok (exit 0); the saved export verifies offline; an edited or deleted record is named."""
    thread = run_json(server, phrases.refund_in_full(server_order(450)))["thread_id"]
    hitl(server, "dev-supervisor1", "approve", thread)

    saved = tmp_path / "evidence.json"
    online = hitl(server, "dev-requester1", "verify", thread, "--save", str(saved))
    assert "✓ issue_refund" in online.stdout
    assert "verified: 1 receipt(s) and the audit chain" in online.stdout
    offline = hitl(server, "", "verify", "--offline", str(saved), "--json")
    assert json.loads(offline.stdout)["ok"] is True

    evidence = json.loads(saved.read_text())
    (record,) = evidence["records"]
    evidence["records"][0] = {**record, "final_args": {**record["final_args"], "amount": 4500}}
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(evidence))
    done = hitl(server, "", "verify", "--offline", str(edited), check=False)
    assert done.returncode == 1
    assert "final_args differs from what was signed" in done.stdout
    assert f"{record['key']}" in done.stdout
    assert "was changed after it was written" in done.stdout

    evidence["records"] = []
    deleted = tmp_path / "deleted.json"
    deleted.write_text(json.dumps(evidence))
    done = hitl(server, "", "verify", "--offline", str(deleted), check=False)
    assert done.returncode == 1
    assert "no audit record holds this receipt" in done.stdout
    assert f"the server's last record is {record['key']}" in done.stdout


def test_verify_one_receipt_file(server, server_order, tmp_path):
    """--receipt: a receipt file verifies against the JWKS; a changed field fails; a bare JWS verifies too."""
    thread = run_json(server, phrases.refund_in_full(server_order(450)))["thread_id"]
    hitl(server, "dev-supervisor1", "approve", thread)
    shown = json.loads(hitl(server, "dev-supervisor1", "show", thread, "--json").stdout)
    (receipt,) = shown["receipts"]

    good = tmp_path / "receipt.json"
    good.write_text(json.dumps(receipt))
    assert "✓ verified" in hitl(server, "", "verify", "--receipt", str(good)).stdout
    bare = tmp_path / "receipt.jws"
    bare.write_text(receipt["signed"])
    assert "issue_refund" in hitl(server, "", "verify", "--receipt", str(bare)).stdout

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**receipt, "reviewer": "requester1"}))
    done = hitl(server, "", "verify", "--receipt", str(bad), check=False)
    assert done.returncode == 1
    assert "reviewer or roles differs from what was signed" in done.stdout

    jwks = tmp_path / "other.jwks.json"
    jwks.write_text(json.dumps({"keys": []}))
    done = hitl(server, "", "verify", "--receipt", str(good), "--jwks", str(jwks), check=False)
    assert done.returncode == 1
    assert "does not list" in done.stdout
