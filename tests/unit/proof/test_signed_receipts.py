"""Signed receipts and the audit chain, as a third party checks them (`hitl.proof.verification`)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from unittest.mock import patch

import jwt
import pytest

from hitl.proof import audit_chain, signed_receipts
from hitl.proof.receipt_keys import Keyring, load, rotate
from hitl.proof.signed_receipts import ReceiptInvalidError, check, sign, signed_claims
from hitl.proof.verification import Evidence, verify
from hitl.recently_used import RecentlyUsed
from hitl.settings import Settings
from server.runtime.topology import SharedTopologyError, check_topology

THREAD = "thread-1"
RECEIPT = {
    "interrupt_id": "int-1",
    "tool_call_id": "call-1",
    "agent": "support",
    "tool": "issue_refund",
    "requested_args": {"order_id": "B1", "amount": 450},
    "decision": "edit",
    "final_args": {"order_id": "B1", "amount": 400},
    "message": None,
    "reviewer": "supervisor1",
    "roles": ["reviewer", "supervisor"],
    "decided_at": "2026-12-01T14:00:00+00:00",
    "approvals": {"required": 2, "approved_by": ["supervisor1"]},
    "thread_id": THREAD,
}


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path, _env_file=None)


def signed(settings: Settings, receipt=RECEIPT, head: str = "") -> dict:
    return sign(receipt, THREAD, load(settings), policy_revision="rev-1", audit_head=head)


def test_a_signed_receipt_verifies_against_the_published_keys(settings):
    """sign: the receipt verifies against the JWKS, which holds no private part."""
    receipt = signed(settings)
    jwks = load(settings).jwks
    assert check(receipt, jwks, THREAD) == []
    assert all("d" not in key for key in jwks["keys"])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("interrupt_id", "int-2"),
        ("tool_call_id", "call-2"),
        ("agent", "refund_specialist"),
        ("tool", "send_email"),
        ("requested_args", {"order_id": "B1", "amount": 451}),
        ("decision", "approve"),
        ("final_args", {"order_id": "B1", "amount": 4000}),
        ("message", "ok"),
        ("reviewer", "supervisor2"),
        ("roles", ["supervisor"]),
        ("decided_at", "2026-12-01T14:00:01+00:00"),
        ("approvals", {"required": 2, "approved_by": ["supervisor1", "supervisor2"]}),
        ("thread_id", "thread-2"),
    ],
)
def test_a_receipt_with_any_field_changed_fails(settings, field, value):
    """tamper: changing any field of a signed receipt names that field; the rest still verify."""
    receipt = {**signed(settings), field: value}
    problems = check(receipt, load(settings).jwks, THREAD)
    assert problems, field
    assert any(field.split("_")[0] in p or "approver" in p for p in problems), problems


def test_a_changed_signature_or_unknown_key_fails(settings, tmp_path):
    """tamper: an edited JWS payload, or a key the JWKS does not list, fail verification."""
    receipt = signed(settings)
    header, payload, signature = receipt["signed"].split(".")
    forged = {**receipt, "signed": f"{header}.{payload[:-2]}AA.{signature}"}
    assert "does not verify" in " ".join(check(forged, load(settings).jwks, THREAD))
    other = Settings(data_dir=tmp_path / "other", _env_file=None)
    assert "does not list" in " ".join(check(receipt, load(other).jwks, THREAD))
    assert check({**receipt, "signed": None}, load(settings).jwks, THREAD) == ["it is not signed"]


def test_rotating_the_key_keeps_old_receipts_valid(settings):
    """rotation: new receipts use the new key; the old key stays published and old receipts verify."""
    old_receipt = signed(settings)
    old_kid, new_kid = rotate(settings)
    assert old_kid != new_kid
    ring = load(settings)
    assert ring.kid == new_kid
    assert {k["kid"] for k in ring.jwks["keys"]} == {old_kid, new_kid}
    assert check(old_receipt, ring.jwks, THREAD) == []
    assert check(signed(settings), ring.jwks, THREAD) == []


def trail(settings: Settings, count: int = 4) -> tuple[list[dict], dict]:
    """A chained trail of `count` accepted, signed decisions, each signed after the head before it."""
    records, head = [], ""
    for index in range(count):
        receipt = signed(settings, {**RECEIPT, "tool_call_id": f"call-{index}"}, head)
        record = audit_chain.link({**receipt, "outcome": "accepted"}, head)
        record["key"] = f"{index:020d}-000"
        head = record["hash"]
        records.append(record)
    return records, {"key": records[-1]["key"], "hash": head}


def evidence(settings, records, head, receipts=()) -> Evidence:
    return Evidence(THREAD, load(settings).jwks, records, head, list(receipts))


def test_a_whole_trail_verifies(settings):
    """chain: an untouched trail and its receipts verify, one verdict per signed record."""
    records, head = trail(settings)
    report = verify(evidence(settings, records, head, [records[0]]))
    assert report.ok, report.as_json()
    assert [r.verified for r in report.receipts] == [True] * 4


def test_an_edited_record_breaks_the_chain_and_is_named(settings):
    """chain: an edited record (its hash left as it was) is named by its key."""
    records, head = trail(settings)
    edited = copy.deepcopy(records)
    edited[1]["reviewer"] = "requester1"
    report = verify(evidence(settings, edited, head))
    assert not report.ok
    assert any(records[1]["key"] in p and "changed" in p for p in report.trail_problems), (
        report.trail_problems
    )


def test_an_edited_record_rehashed_is_caught_by_the_next_receipt(settings):
    """chain: an edited record whose hashes are all recomputed no longer matches a later receipt's head."""
    records, _ = trail(settings)
    rewritten, prev = [], ""
    for record in copy.deepcopy(records):
        if record["tool_call_id"] == "call-1":
            record["message"] = "rewritten"
        body = {k: v for k, v in record.items() if k not in {"hash", "key", "prev_hash"}}
        relinked = {**audit_chain.link(body, prev), "key": record["key"]}
        prev = relinked["hash"]
        rewritten.append(relinked)
    report = verify(evidence(settings, rewritten, {"key": rewritten[-1]["key"], "hash": prev}))
    assert not report.ok
    said = " ".join(p for r in report.receipts for p in r.problems)
    assert "message differs" in said
    assert "trail was rewritten" in said


def test_a_deleted_record_breaks_the_chain_and_is_named(settings):
    """chain: deleting a record names the record after the gap and the one before it."""
    records, head = trail(settings)
    report = verify(evidence(settings, [records[0], *records[2:]], head, [records[1]]))
    assert not report.ok
    (problem,) = report.trail_problems
    assert records[2]["key"] in problem
    assert records[0]["key"] in problem
    assert "deleted" in problem
    said = " ".join(p for r in report.receipts for p in r.problems)
    assert "no audit record holds this receipt" in said


def test_a_record_cut_off_the_end_is_seen_through_the_head(settings):
    """chain: deleting the last record is caught by the server's head."""
    records, head = trail(settings)
    report = verify(evidence(settings, records[:-1], head))
    assert any("ends early" in p and head["key"] in p for p in report.trail_problems)


def test_evidence_round_trips_through_its_export(settings):
    """export: `hitl verify --save` output reads back to the same verdict (offline verification)."""
    records, head = trail(settings, 2)
    exported = evidence(settings, records, head).as_json()
    assert verify(Evidence.from_json(exported)).ok
    with pytest.raises(ValueError, match="jwks"):
        Evidence.from_json({"thread_id": THREAD, "records": []})


def test_a_key_from_the_variable_and_its_retired_keys_are_published(settings, tmp_path):
    """HITL_RECEIPT_KEY (a one-line PEM) signs; the keys in HITL_RECEIPT_RETIRED_KEYS stay published."""
    old = signed(settings)
    old_jwks = load(settings).jwks
    one_line = subprocess.run(
        [sys.executable, "-m", "hitl.proof.receipt_keys", "new"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert "\n" not in one_line
    from_variable = Settings(
        data_dir=tmp_path / "replica",
        hitl_receipt_key=one_line,
        hitl_receipt_retired_keys=json.dumps(old_jwks),
        _env_file=None,
    )
    ring = load(from_variable)
    assert ring.kid not in {k["kid"] for k in old_jwks["keys"]}
    assert check(old, ring.jwks, THREAD) == []
    assert check(signed(from_variable), ring.jwks, THREAD) == []


def test_a_replica_without_a_shared_receipt_key_does_not_start():
    """topology: on a shared runtime, no HITL_RECEIPT_KEY(_FILE) is refused, naming the variable."""
    base = {
        "database_url": "postgresql+psycopg://x/y",
        "hitl_database_url": "postgresql+psycopg://x/z",
        "hitl_seal_key": "s" * 32,
        "_env_file": None,
    }
    with patch("server.runtime.topology._custom_checkpointer", return_value=False):
        with pytest.raises(SharedTopologyError, match="HITL_RECEIPT_KEY"):
            check_topology(Settings(**base), edition="pg")
        check_topology(Settings(**base, hitl_receipt_key="pem"), edition="pg")


def test_the_receipts_of_one_decision_share_the_head_before_them(settings):
    """batch: receipts signed together name the same head; a refused record first makes '' wrong."""
    batch, head = [], ""
    for index in range(2):
        receipt = signed(settings, {**RECEIPT, "tool_call_id": f"call-{index}"}, "")
        record = {**audit_chain.link({**receipt, "outcome": "accepted"}, head), "key": f"{index:020d}-000"}
        head = record["hash"]
        batch.append(record)
    assert verify(evidence(settings, batch, {"key": batch[-1]["key"], "hash": head})).ok

    refused = {**audit_chain.link({"decision": "refused", "outcome": "refused"}, ""), "key": "0" * 19 + "0-x"}
    moved, head = [refused], refused["hash"]
    for record in batch:
        relinked = {**audit_chain.link({k: v for k, v in record.items() if k not in {"hash", "key"}}, head)}
        relinked["key"] = record["key"]
        head = relinked["hash"]
        moved.append(relinked)
    report = verify(evidence(settings, moved, {"key": moved[-1]["key"], "hash": head}))
    assert "signed on an empty trail, but 1 record(s) precede it" in " ".join(
        p for r in report.receipts for p in r.problems
    )


STARTING_TOGETHER = """
import os, sys, time
from pathlib import Path
data, go, which, role = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
os.environ["DATA_DIR"] = str(data)
from hitl.proof import receipt_keys, seal
key = data / ("seal.key" if which == "seal" else "receipt-keys/signing.pem")
while not go.exists():
    time.sleep(0.001)
if role == "reader":  # reads the moment the file appears, as a worker that comes just after
    while not key.exists():
        pass
print(seal.seal("test", "thread", 1) if which == "seal" else receipt_keys.load().kid)
"""


@pytest.mark.parametrize(("which", "made"), [("receipt", "receipt-keys/signing.pem"), ("seal", "seal.key")])
def test_servers_starting_together_make_one_key_and_all_read_it_whole(tmp_path, which, made):
    """8 processes (test workers, replicas) find no key at once: one key is made, none reads half of it.

    Two make it; six read it the moment its file appears. All then sign (or seal) alike.
    """
    go, data = tmp_path / "go", tmp_path / "data"
    starting = [
        subprocess.Popen(
            [sys.executable, "-c", STARTING_TOGETHER, str(data), str(go), which, role],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("HITL_")},
        )
        for role in ["maker"] * 2 + ["reader"] * 6
    ]
    go.touch()
    outcomes = [process.communicate(timeout=60) for process in starting]
    assert [process.returncode for process in starting] == [0] * 8, [err for _, err in outcomes]
    assert len({out.strip() for out, _ in outcomes}) == 1
    assert (data / made).stat().st_mode & 0o777 == 0o600
    assert not list(data.rglob("*.tmp"))


def test_a_token_is_verified_once_and_recalled_only_while_its_key_is_listed(settings, tmp_path, monkeypatch):
    """hot path: a token checked again costs no signature check; a key dropped from the set refuses it.

    A keyring whose own key set does not list it signs without remembering, as a token from another
    replica arrives: the first check verifies it in full, later ones recall the same claims.
    """
    ring = load(settings)
    unlisted = Keyring(ring.signing_key, ring.kid, {"keys": []})
    token = sign(RECEIPT, THREAD, unlisted, policy_revision="rev-1", audit_head="")["signed"]
    with patch("jwt.decode", wraps=jwt.decode) as decode:
        first = signed_claims(token, ring.jwks)
        first["decision"] = "approve"  # the caller's copy: the next check is not changed by it
        again = signed_claims(token, ring.jwks)
        assert decode.call_count == 1
    assert again["decision"] == "edit"
    assert again["tool_call_id"] == "call-1"
    other = load(Settings(data_dir=tmp_path / "other", _env_file=None)).jwks
    with pytest.raises(ReceiptInvalidError, match="does not list"):
        signed_claims(token, other)
    monkeypatch.setattr(signed_receipts, "_verified", RecentlyUsed(2))
    signed_claims(token, ring.jwks)  # verified in full, and remembered in a cache of two
    for index in range(2):  # two tokens signed after it push it out
        sign({**RECEIPT, "tool_call_id": f"c{index}"}, THREAD, ring, policy_revision="r", audit_head="")
    with patch("jwt.decode", wraps=jwt.decode) as decode:
        assert signed_claims(token, ring.jwks)["tool_call_id"] == "call-1"
        assert decode.call_count == 1


def test_a_token_this_process_signed_is_recalled_with_the_claims_a_full_check_gives(settings):
    """sign remembers its own token: the recalled claims equal what verifying the JWS yields."""
    ring = load(settings)
    token = signed(settings)["signed"]
    key = jwt.PyJWK(next(k for k in ring.jwks["keys"] if k["kid"] == ring.kid)).key
    full = jwt.decode(token, key, algorithms=["EdDSA"], options={"verify_exp": False, "verify_iat": False})
    with patch("jwt.decode", wraps=jwt.decode) as decode:
        assert signed_claims(token, ring.jwks) == full
        assert decode.call_count == 0
