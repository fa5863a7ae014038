"""Seals: HMACs that let the gate tell what its own code path wrote from what a client planted.

The server and the gate share one secret (`HITL_SEAL_KEY`, or a key made once in
`data_dir/seal.key`). Whatever the gate trusts in a thread's state (a tool call's clearance,
a receipt, an allowance, the run's policy) carries a seal over its content and the thread;
a value without a valid seal is ignored, whoever managed to write it. Not a signature a third
party can check: receipts for outsiders are a different feature.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from functools import lru_cache
from pathlib import Path
from typing import Any

from hitl.proof import key_files
from hitl.settings import get_settings

SEAL_FIELD = "seal"
MIN_KEY_CHARS = 32


@lru_cache(maxsize=1)
def _key() -> bytes:
    settings = get_settings()
    if settings.hitl_seal_key:
        if len(settings.hitl_seal_key) < MIN_KEY_CHARS:
            msg = f"HITL_SEAL_KEY must be at least {MIN_KEY_CHARS} characters long."
            raise ValueError(msg)
        return settings.hitl_seal_key.encode()
    path = Path(settings.data_dir) / "seal.key"
    if not path.is_file():
        key_files.create_once(path, secrets.token_hex(32).encode())
    return path.read_text().strip().encode()


def canonical(value: object) -> bytes:
    """The JSON bytes a seal covers: sorted keys, no spaces, non-JSON values as strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def seal(purpose: str, thread_id: str | None, value: object) -> str:
    """The seal of `value` for `purpose` (e.g. "clearance") on `thread_id`."""
    message = canonical([purpose, thread_id or "", value])
    return hmac.new(_key(), message, hashlib.sha256).hexdigest()


def verify(purpose: str, thread_id: str | None, value: object, given: object) -> bool:
    """Whether `given` is the seal of `value` for `purpose` on `thread_id` (constant time)."""
    return isinstance(given, str) and hmac.compare_digest(seal(purpose, thread_id, value), given)


def sealed(purpose: str, thread_id: str | None, record: dict[str, Any]) -> dict[str, Any]:
    """`record` with a `seal` field over the rest of it."""
    body = {k: v for k, v in record.items() if k != SEAL_FIELD}
    return {**body, SEAL_FIELD: seal(purpose, thread_id, body)}


def is_sealed(purpose: str, thread_id: str | None, record: object) -> bool:
    """Whether `record` (a dict) carries a valid seal over the rest of it."""
    if not isinstance(record, dict):
        return False
    body = {k: v for k, v in record.items() if k != SEAL_FIELD}
    return verify(purpose, thread_id, body, record.get(SEAL_FIELD))


_key()  # read (or made) once, at import: never as blocking file I/O inside a running graph
