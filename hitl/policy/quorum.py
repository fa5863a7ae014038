"""Quorum: calls that need several distinct approvers, counted round by round.

A call whose gate says `approvals_required: N` pauses as usual; each approve is one round.
While fewer than N rounds approved the call's current arguments, the gate asks again, in the
same node (a new interrupt, with who approved so far). Any reject or respond ends it; an edit
starts the count again on the edited arguments, its sender counted first.

Rounds are folded from the answers alone, so a resumed node replays them the same way. Who
approved is the server's word: it names, in every run it admits, the approvers each call has
so far (`APPROVALS_KEY`, read from the thread's sealed receipts); the gate runs a quorum call
only when those are N distinct people. A run without a server (scripts, tests) has no names:
there the rounds alone count, as every other person check is the server's there too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hitl.policy.first_line import is_model_actor

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

APPROVALS_KEY = "hitl_approvals"
"""The run's `configurable` key the server sets: {tool_call_id: {"args": digest, "approved_by": [...]}}."""
COUNTED = frozenset({"approve", "edit"})


def digest(args: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a call's args: what an approval is bound to."""
    text = json.dumps(dict(args), sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Progress:
    """One call's answers so far: the decision that stands, the args it holds, approving rounds."""

    decision: dict[str, Any]
    args: dict[str, Any]
    rounds: int = 0
    history: tuple[str, ...] = field(default=())

    def fold(self, answer: Mapping[str, Any]) -> Progress:
        """This call after one more answer: an approve adds a round, an edit restarts, others end."""
        kind = answer.get("type")
        history = (*self.history, str(kind))
        if kind == "approve":
            standing = self.decision if self.decision.get("type") == "edit" else dict(answer)
            return Progress(standing, self.args, self.rounds + 1, history)
        if kind == "edit":
            edited = answer["edited_action"]
            return Progress(dict(answer), dict(edited["args"]), 1, history)
        return Progress(dict(answer), self.args, 0, history)

    def waiting(self, needed: int) -> bool:
        """Whether this call still needs approvers: approved or edited, by fewer rounds than `needed`."""
        return self.decision.get("type") in COUNTED and self.rounds < needed


def start(args: Mapping[str, Any], answer: Mapping[str, Any]) -> Progress:
    """A call's progress after its first answer."""
    return Progress({}, dict(args)).fold(answer)


def approvers(
    call_id: str, args: Mapping[str, Any], config: Mapping[str, Any] | None = None
) -> list[str] | None:
    """Who approved `args` of this call so far, as the server told this run; None without a server."""
    if config is None:
        # Imported here: `digest` is also what `hitl verify` checks receipts with, and the CLI starts
        # 0.4 s faster without the graph runtime (langgraph.config pulls in langchain-core's runnables).
        from langgraph.config import get_config  # noqa: PLC0415

        try:
            config = dict(get_config())
        except RuntimeError:
            return None
    named = (config.get("configurable") or {}).get(APPROVALS_KEY)
    if not isinstance(named, dict):
        return None
    entry = named.get(call_id)
    if not isinstance(entry, dict) or entry.get("args") != digest(args):
        return []
    people = entry.get("approved_by")
    return [p for p in people if isinstance(p, str)] if isinstance(people, list) else []


def tally(receipts: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Who approved each quorum call's current args, from receipts in the order they were given.

    Only receipts that carry `approvals` count (calls that need several approvers), and never a
    first-line reviewer's (`model:<name>`): a model is no approver of a quorum. An edit restarts
    its call's list with the editor; an approve of the same args adds its sender once; a reject
    or respond ends the call.
    """
    found: dict[str, dict[str, Any]] = {}
    for receipt in receipts:
        call_id = str(receipt.get("tool_call_id") or "")
        if (
            not call_id
            or not isinstance(receipt.get("approvals"), dict)
            or is_model_actor(receipt.get("reviewer"))
        ):
            continue
        kind, final = receipt.get("decision"), receipt.get("final_args")
        if kind not in COUNTED or not isinstance(final, dict):
            found.pop(call_id, None)
            continue
        held = found.get(call_id)
        who = str(receipt.get("reviewer") or "")
        if kind == "edit" or held is None or held["args"] != digest(final):
            found[call_id] = {"args": digest(final), "approved_by": [who]}
        elif who not in held["approved_by"]:
            held["approved_by"].append(who)
    return found
