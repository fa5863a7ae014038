"""What waits on a thread, in words: the refusal of a run that would pass a pending approval by.

A new message, a fake tool result or `goto` sent while an approval waits is refused with 409; the
refusal names each waiting call, who may decide it and who asked, so a generic client's person
knows what to do. Pure: reads the interrupt values only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hitl.contracts.asks import deciders_of
from hitl.policy.groups import ROLE_GROUPS, who

if TYPE_CHECKING:
    from server.decisions.pending import Pending


def refusal(pending: list[Pending], owner: object) -> str:
    """The 409 text for a run that answers nothing: '2 approvals wait on this thread: ... first; ...'."""
    asks = [ask for item in pending for ask in _asks(item, owner)]
    one = len(asks) == 1
    counted = "An approval waits" if one else f"{len(asks)} approvals wait"
    return (
        f"{counted} on this thread: {_listed(asks)}. Answer {'it' if one else 'them'} first; "
        f"a new message or ending the thread would pass {'it' if one else 'them'} by."
    )


def _asks(item: Pending, owner: object) -> list[str]:
    """One phrase per call or question an interrupt waits on: what, who decides, who asked."""
    value = item.value if isinstance(item.value, dict) else {}
    asked = value.get("requested_by")
    by = f"; asked by {', '.join(str(p) for p in asked)}" if isinstance(asked, list) and asked else ""
    actions = value.get("action_requests")
    if isinstance(actions, list):
        configs = value.get("review_configs") or []
        return [
            f"{action.get('name')} ({_who(item, config, owner)}{by})"
            for action, config in zip(actions, [*configs, *[{}] * len(actions)], strict=False)
            if isinstance(action, dict)
        ]
    return [f"{item.subject} ({_who(item, value, owner)}{by})"]


def _who(item: Pending, config: Any, owner: object) -> str:  # noqa: ANN401  (an interrupt's config, any shape)
    """Who decides a call: 'a supervisor decides', '2 different reviewers decide (1 so far: ...)'."""
    config = config if isinstance(config, dict) else {}
    role = item.escalated_to or next(iter(deciders_of(config)))  # a call's config, or the value itself
    if role == "owner":
        return f"the thread's owner{f' ({owner})' if owner else ''} answers"
    needed = config.get("approvals_required")
    if isinstance(needed, int) and needed > 1:
        approved = [str(p) for p in config.get("approved_by") or []]
        so_far = f", {len(approved)} of {needed} so far: {', '.join(approved)}" if approved else ""
        kind = f"{role}s" if role in ROLE_GROUPS else f"people in {role}"
        return f"{needed} different {kind} approve{so_far}"
    return f"{who(role)} decides"


def _listed(phrases: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} and {phrases[-1]}"
