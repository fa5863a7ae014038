"""Signed receipts: what a decision binds, as a JWS (EdDSA) anyone can check against the JWKS.

A receipt's `signed` field is a compact JWS whose claims name the thread, the interrupt, the
tool call, the agent and tool (for an MCP server's tool: the server, its tool name and the digest of
the input schema approved), SHA-256 digests of the requested and final args, the decision, who decided
(and every approver of a quorum; a first-line reviewer's model), when, the policy's revision and the
audit chain's head before it. `check` says what is wrong with a receipt: a bad signature, an unknown
key, or any field that differs from what was signed. Signing is the server's (`sign`).

A token this process signed or already verified is remembered with the key that signs it
(`VERIFIED_KEPT` of them): checking it again gives the same claims while that key is still in the
key set asked about, without the signature's cost. A cache of a pure function, not a record: a
replica that never saw a token verifies it in full.
"""

from __future__ import annotations

import calendar
import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

import jwt
from jwt.utils import base64url_decode

from hitl.policy.quorum import digest
from hitl.proof.receipt_keys import ALGORITHM
from hitl.recently_used import RecentlyUsed

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hitl.proof.receipt_keys import Keyring

SIGNED_FIELD = "signed"
TOKEN_TYPE = "hitl-receipt+jwt"  # noqa: S105  (the JWS `typ`, not a secret)
BOUND = ("thread_id", "interrupt_id", "tool_call_id", "agent", "tool", "decision", "message", "decided_at")
"""Receipt fields the claims carry as they are."""
FIELD_OF = {
    "requested_args_sha256": "requested_args",
    "final_args_sha256": "final_args",
    "approver": "reviewer or roles",
    "iat": "decided_at",
}
"""The receipt field behind each claim that carries it in another form."""
VERIFIED_KEPT = 1024
"""Tokens remembered as verified (with their key and claims), the most recently used kept."""

_verified: RecentlyUsed[str, tuple[dict[str, Any], str]] = RecentlyUsed(VERIFIED_KEPT)
"""Token to the JWK that verified it and its claims as JSON."""


def args_digest(args: object) -> str | None:
    """SHA-256 of the canonical JSON of `args` (`hitl.policy.quorum.digest`); None for no args (a reject)."""
    return digest(args) if isinstance(args, dict) else None


def claims(
    receipt: Mapping[str, Any], thread_id: str, *, policy_revision: str, audit_head: str
) -> dict[str, Any]:
    """What a receipt's signature binds."""
    try:
        issued = calendar.timegm(datetime.fromisoformat(str(receipt.get("decided_at"))).utctimetuple())
    except ValueError:
        issued = 0
    bound = {field: receipt.get(field) for field in BOUND}
    if receipt.get("mcp") is not None:  # a tool of an MCP server: its server, tool and schema digest too
        bound["mcp"] = receipt.get("mcp")
    return {
        **bound,
        "thread_id": thread_id,
        "requested_args_sha256": args_digest(receipt.get("requested_args")),
        "final_args_sha256": args_digest(receipt.get("final_args")),
        "approver": {"identity": receipt.get("reviewer"), "roles": list(receipt.get("roles") or [])},
        "approvals": receipt.get("approvals"),
        "first_line": receipt.get("first_line"),
        "policy_revision": policy_revision,
        "audit_head": audit_head,
        "iat": issued,
    }


def sign(receipt: Mapping[str, Any], thread_id: str, keys: Keyring, **bound: str) -> dict[str, Any]:
    """`receipt` with its `signed` JWS (see `claims` for `bound`: policy_revision, audit_head)."""
    token = jwt.encode(
        claims(receipt, thread_id, **bound),
        keys.signing_key,
        algorithm=ALGORITHM,
        headers={"kid": keys.kid, "typ": TOKEN_TYPE},
    )
    own = next(
        (k for k in keys.jwks.get("keys") or [] if isinstance(k, dict) and k.get("kid") == keys.kid), None
    )
    if own is not None:  # signed by this process: its claims are the payload as written
        _verified.put(token, (own, base64url_decode(token.split(".")[1]).decode()))
    return {**receipt, SIGNED_FIELD: token}


def _recalled(token: str, jwks: Mapping[str, Any]) -> dict[str, Any] | None:
    """The claims of a token verified before by a key `jwks` still lists; None when not known so."""
    held = _verified.get(token)
    if held is None or held[0] not in (jwks.get("keys") or []):
        return None
    return dict(json.loads(held[1]))


class ReceiptInvalidError(Exception):
    """A receipt that does not verify; the message says why."""


def signed_claims(token: object, jwks: Mapping[str, Any]) -> dict[str, Any]:
    """The claims of a receipt's JWS, once its signature checks out against a key of `jwks`.

    Raises:
        ReceiptInvalidError: not a JWS, a key the JWKS does not list, or a bad signature.
    """
    if not isinstance(token, str) or not token:
        raise ReceiptInvalidError("it is not signed")
    if (known := _recalled(token, jwks)) is not None:
        return known
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as error:
        msg = f"its signature is not a JWS ({error})"
        raise ReceiptInvalidError(msg) from None
    kid = header.get("kid")
    listed = [k for k in jwks.get("keys") or [] if isinstance(k, dict) and k.get("kid") == kid]
    if header.get("alg") != ALGORITHM or not listed:
        msg = f"it is signed with a key the JWKS does not list ({kid!r}, {header.get('alg')})"
        raise ReceiptInvalidError(msg)
    try:
        key = jwt.PyJWK(listed[0]).key
        claims = dict(
            jwt.decode(token, key, algorithms=[ALGORITHM], options={"verify_exp": False, "verify_iat": False})
        )
    except jwt.PyJWTError as error:
        msg = f"its signature does not verify ({error})"
        raise ReceiptInvalidError(msg) from None
    _verified.put(token, (listed[0], json.dumps(claims)))
    return claims


def check(receipt: Mapping[str, Any], jwks: Mapping[str, Any], thread_id: str | None = None) -> list[str]:
    """What is wrong with `receipt` (a receipt or accepted audit record): empty when it verifies."""
    try:
        signed = signed_claims(receipt.get(SIGNED_FIELD), jwks)
    except ReceiptInvalidError as invalid:
        return [str(invalid)]
    thread = str(receipt.get("thread_id") or thread_id or "")
    expected = claims(
        receipt,
        thread,
        policy_revision=str(signed.get("policy_revision")),
        audit_head=str(signed.get("audit_head")),
    )
    wrong = [name for name, value in {"mcp": None, **expected}.items() if signed.get(name) != value]
    if thread_id is not None and signed.get("thread_id") != thread_id and "thread_id" not in wrong:
        wrong.append("thread_id")
    named = dict.fromkeys(FIELD_OF.get(name, name) for name in wrong)
    return [f"{name} differs from what was signed" for name in named]


def describe(receipt: Mapping[str, Any]) -> str:
    """A receipt in a few words, for reports: 'send_invoice (call_1) approve by reviewer1'."""
    return (
        f"{receipt.get('tool')} ({receipt.get('tool_call_id') or receipt.get('interrupt_id')}) "
        f"{receipt.get('decision')} by {receipt.get('reviewer')} at {receipt.get('decided_at')}"
    )
