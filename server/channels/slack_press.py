"""One Approve or Reject pressed in a Slack message, read from the press's signed payload.

Read only after the signature verified (`slack_signature`); anything that is not a press of
our two buttons reads as None. Not for deciding (`slack`) or for replying (`slack_replies`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from server.channels.slack_message import APPROVE, REASON_BLOCK, REASON_INPUT, REJECT


@dataclass(frozen=True)
class Press:
    """One button press, read from a signed payload."""

    slack_user: str
    decision: str
    thread_id: str
    interrupt_id: str
    reason: str
    response_url: str
    message: dict[str, Any] | None

    @classmethod
    def read(cls, body: bytes) -> Press | None:
        """The press in Slack's form-encoded `payload`, or None for anything else."""
        try:
            payload = json.loads(parse_qs(body.decode())["payload"][0])
            action = payload["actions"][0]
            target = json.loads(action["value"])
            press = cls(
                slack_user=str(payload["user"]["id"]),
                decision=str(action["action_id"]),
                thread_id=str(target["thread_id"]),
                interrupt_id=str(target["interrupt_id"]),
                reason=_reason(payload),
                response_url=str(payload.get("response_url") or ""),
                message=payload.get("message") if isinstance(payload.get("message"), dict) else None,
            )
        except (KeyError, IndexError, TypeError, ValueError, UnicodeDecodeError, RecursionError):
            return None
        return press if press.decision in {APPROVE, REJECT} else None


def _reason(payload: dict[str, Any]) -> str:
    """What the presser typed into the message's reason box, if anything."""
    values = ((payload.get("state") or {}).get("values") or {}).get(REASON_BLOCK) or {}
    typed = (values.get(REASON_INPUT) or {}).get("value")
    return typed.strip()[:2000] if isinstance(typed, str) else ""
