"""What new input may say: human messages of text only (a supervisor's: no tool calls), no gate-owned keys.

The one check of a run's `input`, a command's `update` and a supervisor's direct state write
(`check_state_write`): the keys the gate and the server own are refused to everyone, and a
message carries only role/type, text content, an id and a name. Pure; raises `ResumeRefused`.
"""

from __future__ import annotations

import json
from typing import Any

from hitl.contracts.edits import NUL
from hitl.gate.trusted_state import CLEARANCES_KEY, RUN_POLICY_KEY
from hitl.policy.allowances import STATE_KEY as ALLOWANCES_KEY
from server.decisions.pending import ResumeRefused

GATE_OWNED_KEYS = frozenset(
    {"hitl_edited_tool_calls", "approval_receipts", ALLOWANCES_KEY, RUN_POLICY_KEY, CLEARANCES_KEY}
)
"""State keys only the server's and the gate's own code write."""


HUMAN_TYPES = frozenset({"human", "user"})


SUPERVISOR_TYPES = HUMAN_TYPES | {"ai", "assistant", "system"}


MESSAGE_KEYS = frozenset({"role", "type", "content", "id", "name", "additional_kwargs", "response_metadata"})
"""Fields a client's message may carry (as `useStream` sends them); the extras must be empty."""


EMPTY_FIELDS = ("additional_kwargs", "response_metadata")


TEXT_BLOCK_KEYS = frozenset({"type", "text"})


def supervisor_only(supervisor: bool, what: str) -> None:  # noqa: FBT001
    """Refuse (403) what only a supervisor may send, saying what a run may take instead."""
    if not supervisor:
        raise ResumeRefused(
            403,
            f"Only a supervisor may send {what}. A run takes new messages, or a command with only a resume.",
        )


def check_input(given: object, *, supervisor: bool, max_bytes: int) -> None:
    """A run's new input: an object of human messages within `max_bytes` (a supervisor's: more keys)."""
    if given is None:
        return
    if not isinstance(given, dict):
        raise ResumeRefused(422, 'input must be an object: {"messages": [...]}.')
    size = len(json.dumps(given, default=str))
    if size > max_bytes:
        raise ResumeRefused(
            413, f"The run's input is {size} bytes; the limit is {max_bytes} (MAX_INPUT_BYTES)."
        )
    state_write(given, "input", supervisor=supervisor)


def check_state_write(values: dict[str, Any]) -> None:
    """A supervisor's direct state write: any key but the gate's, messages without tool calls.

    Raises:
        ResumeRefused: 422 naming what may not be written.
    """
    state_write(values, "values", supervisor=True)


def state_write(values: dict[str, Any], where: str, *, supervisor: bool) -> None:
    """Keys and messages of an input or update: messages only, human ones (a supervisor: no tool calls)."""
    if owned := sorted(set(values) & GATE_OWNED_KEYS):
        raise ResumeRefused(
            422,
            f"{where} may not set {', '.join(owned)}: the approval gate and the server write these. "
            "Allowances come from an approve's `allow`; a run's policy override goes in "
            'context={"policy": ...}.',
        )
    if others := sorted(k for k in values if k != "messages"):
        supervisor_only(supervisor, f"state keys other than messages in {where} ({', '.join(others)})")
    messages = values.get("messages")
    if messages is None:
        return
    for index, message in enumerate(messages if isinstance(messages, list) else [messages]):
        _message(message, f"{where}.messages[{index}]", supervisor=supervisor)


def _message(message: object, where: str, *, supervisor: bool) -> None:
    if isinstance(message, str):
        _text(message, where)
        return
    if not isinstance(message, dict):
        raise ResumeRefused(422, f"{where} must be an object with a role and text content.")
    kind = str(message.get("type") or message.get("role") or "")
    if kind not in (SUPERVISOR_TYPES if supervisor else HUMAN_TYPES):
        raise ResumeRefused(
            403 if kind in SUPERVISOR_TYPES else 422,
            f"{where} is a {kind or 'untyped'} message; a client sends human messages only "
            "(no tool calls, tool results or other messages).",
        )
    if extra := sorted(set(message) - MESSAGE_KEYS):
        raise ResumeRefused(
            422,
            f"{where} may hold only role/type, content, id and name (got {', '.join(extra)}): "
            "no tool calls or other fields.",
        )
    if filled := [f for f in EMPTY_FIELDS if message.get(f)]:
        raise ResumeRefused(422, f"{where}: {', '.join(filled)} must be empty (no tool calls or metadata).")
    for field in ("id", "name"):
        if message.get(field) is not None and not isinstance(message[field], str):
            raise ResumeRefused(422, f"{where}.{field} must be text.")
    _content(message.get("content"), where)


def _content(content: object, where: str) -> None:
    if isinstance(content, str):
        _text(content, where)
    elif isinstance(content, list):
        for block in content:
            if not (
                isinstance(block, dict)
                and block.get("type") == "text"
                and not set(block) - TEXT_BLOCK_KEYS
                and isinstance(block.get("text"), str)
            ):
                raise ResumeRefused(422, f"{where}: content blocks must be text blocks.")
            _text(block["text"], where)
    else:
        raise ResumeRefused(422, f"{where}: content must be text.")


def _text(text: str, where: str) -> None:
    if NUL in text:
        raise ResumeRefused(422, f"{where} must not contain a NUL byte.")
