"""The server's receipt signing key (Ed25519) and the public keys it publishes (JWKS).

The private key comes from `HITL_RECEIPT_KEY` (PEM text) or `HITL_RECEIPT_KEY_FILE`; a missing
file is made on first use (`make dev` makes it up front). Every public key ever used stays in
the published key set (`HITL_RECEIPT_JWKS_FILE`), so receipts signed before a rotation still
verify. Not for checking receipts: that is `hitl.proof.signed_receipts`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from jwt.algorithms import OKPAlgorithm

from hitl.proof import key_files
from hitl.settings import Settings, get_settings

ALGORITHM = "EdDSA"


@dataclass(frozen=True)
class Keyring:
    """The key that signs new receipts (`kid`), and every public key receipts may carry."""

    signing_key: Ed25519PrivateKey
    kid: str
    jwks: dict[str, Any]


def public_jwk(public_key: Ed25519PublicKey) -> dict[str, Any]:
    """The JWK of `public_key`, its `kid` the RFC 7638 thumbprint."""
    jwk = OKPAlgorithm.to_jwk(public_key, as_dict=True)
    members = json.dumps({k: jwk[k] for k in ("crv", "kty", "x")}, separators=(",", ":"), sort_keys=True)
    kid = base64.urlsafe_b64encode(hashlib.sha256(members.encode()).digest()).rstrip(b"=").decode()
    return {"kty": jwk["kty"], "crv": jwk["crv"], "x": jwk["x"], "kid": kid, "alg": ALGORITHM, "use": "sig"}


def key_file(settings: Settings) -> Path:
    """Where the private key lives (`HITL_RECEIPT_KEY_FILE`, else data_dir/receipt-keys/signing.pem)."""
    given = settings.hitl_receipt_key_file
    return Path(given) if given else settings.data_dir / "receipt-keys" / "signing.pem"


def jwks_file(settings: Settings) -> Path:
    """Where the published public keys live (`HITL_RECEIPT_JWKS_FILE`, else beside the key file)."""
    given = settings.hitl_receipt_jwks_file
    return Path(given) if given else key_file(settings).with_name("published.jwks.json")


def _write_new_key(path: Path, *, replace: bool = False) -> None:
    """A new Ed25519 key in `path` (0600); an existing file is kept unless `replace` (`key_files`)."""
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    if replace:
        key_files.replace(path, pem)
    else:
        key_files.create_once(path, pem)


def _private_key(pem: bytes, where: str) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        msg = f"{where} must hold an Ed25519 private key (PEM, PKCS8)."
        raise TypeError(msg)
    return key


def _published(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return _public_only(json.loads(path.read_text()).get("keys"))


def _public_only(keys: object) -> list[dict[str, Any]]:
    """The public JWKs of a `keys` list (anything with a private part, or no `kid`, is left out)."""
    if not isinstance(keys, list):
        return []
    return [k for k in keys if isinstance(k, dict) and "d" not in k and isinstance(k.get("kid"), str)]


def _publish(path: Path, jwk: dict[str, Any]) -> list[dict[str, Any]]:
    """The published keys with `jwk` among them (written back when it was missing)."""
    keys = _published(path)
    if all(k.get("kid") != jwk["kid"] for k in keys):
        keys.append(jwk)
        key_files.replace(path, (json.dumps({"keys": keys}, indent=2) + "\n").encode())
    return keys


def load(settings: Settings | None = None) -> Keyring:
    """The keyring the settings name; a missing key file is made, and its public key published.

    Raises:
        TypeError: the key is not an Ed25519 private key.
    """
    settings = settings or get_settings()
    if settings.hitl_receipt_key:
        key = _private_key(settings.hitl_receipt_key.replace("\\n", "\n").encode(), "HITL_RECEIPT_KEY")
    else:
        path = key_file(settings)
        if not path.is_file():
            _write_new_key(path)
        key = _private_key(path.read_bytes(), str(path))
    jwk = public_jwk(key.public_key())
    published = jwks_file(settings)
    try:
        keys = _publish(published, jwk)
    except OSError:  # a read-only key set (production mounts it): the current key is listed anyway
        keys = [*(k for k in _published(published) if k.get("kid") != jwk["kid"]), jwk]
    retired = _public_only(json.loads(settings.hitl_receipt_retired_keys or "{}").get("keys"))
    keys += [k for k in retired if all(k.get("kid") != held.get("kid") for held in keys)]
    return Keyring(signing_key=key, kid=jwk["kid"], jwks={"keys": keys})


def rotate(settings: Settings | None = None) -> tuple[str, str]:
    """Replace the key file's key with a new one; the old public key stays published.

    Returns:
        The old and the new key id. Restart the server (every replica) to sign with the new key.
    """
    settings = settings or get_settings()
    old = load(settings)
    _write_new_key(key_file(settings), replace=True)
    return old.kid, load(settings).kid


@lru_cache(maxsize=1)
def keyring() -> Keyring:
    """The process's keyring, read once (a rotation needs a restart)."""
    return load()


def main(argv: list[str]) -> int:
    """`python -m hitl.proof.receipt_keys ensure|rotate|new`: make the key if absent, rotate, print one."""
    if argv[1:] == ["new"]:  # for HITL_RECEIPT_KEY: one line, "\n" for line breaks
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        print(pem.decode().strip().replace("\n", "\\n"))  # noqa: T201
        return 0
    if argv[1:] == ["ensure"]:
        ring = load()
        print(f"receipt signing key {ring.kid} in {key_file(get_settings())}")  # noqa: T201
        return 0
    if argv[1:] == ["rotate"]:
        old, new = rotate()
        print(f"rotated receipt signing key {old} -> {new}; {old} stays published. Restart the server.")  # noqa: T201
        return 0
    print("usage: python -m hitl.proof.receipt_keys ensure|rotate|new", file=sys.stderr)  # noqa: T201
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
