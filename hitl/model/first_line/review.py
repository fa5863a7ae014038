"""How the gate puts a paused call to a first-line reviewer before any person, when its policy says so.

The server registers how a call is reviewed (`keep_in`) at start-up: it classifies the call and
records an approve or reject through the same checks, acceptance, signing and trail as a
person's, keyed by the tool call, so a node that runs again gets the same verdict. The graph
knows no server: without one (scripts, in-process tests) nothing is registered and a person
decides. `ask` puts a call within the reviewer's bounds (`ToolGate.not_delegated`) to
it; its `Verdict` approves (the call runs under the model's signed receipt), rejects (the agent
gets its reason as a tool error) or refers (a person decides, shown its reason). What the gate
does with a verdict is the gate's (`hitl.gate.gate`, `hitl.gate.per_call`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from langgraph.config import get_config

from hitl.gate.caller import current_caller, requested_by, thread_owner

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from langchain_core.messages import ToolCall

    from hitl.contracts.interrupts import FirstLineNote
    from hitl.policy.first_line import FirstLineReviewer
    from hitl.policy.gates import ToolGate


@dataclass(frozen=True)
class DelegatedCall:
    """A paused call within a first-line reviewer's bounds, as the gate puts it to the server."""

    thread_id: str
    graph_id: str | None
    agent: str
    tool_call_id: str
    name: str
    args: dict[str, Any]
    description: str
    required_role: str
    allowed_decisions: tuple[str, ...]
    requested_by: tuple[str, ...]
    reviewer: FirstLineReviewer


@dataclass(frozen=True)
class Verdict:
    """What became of a delegated call: approved or rejected (with the signed receipt), or referred."""

    decision: Literal["approve", "reject", "refer"]
    reason: str
    reviewer: str
    model: str
    cause: str = "model"
    receipt: Mapping[str, Any] | None = field(default=None)

    def note(self) -> FirstLineNote:
        """What the card shows of a referral."""
        return {"reviewer": self.reviewer, "model": self.model, "reason": self.reason, "cause": self.cause}  # type: ignore[typeddict-item]

    def decision_value(self) -> dict[str, Any]:
        """The decision the gate applies: an approve, or a reject whose message the model reads."""
        if self.decision == "approve":
            return {"type": "approve"}
        return {
            "type": "reject",
            "message": f"Rejected by the first-line reviewer {self.reviewer}: {self.reason}",
        }


_reviews: list[Callable[[DelegatedCall], Verdict]] = []


def keep_in(review: Callable[[DelegatedCall], Verdict] | None) -> None:
    """Inside the server: put delegated calls to `review` from now on (None: nobody, people decide)."""
    _reviews.clear()
    if review is not None:
        _reviews.append(review)


def ask(
    call: ToolCall, gate: ToolGate, *, agent: str, thread_id: str | None, description: str
) -> Verdict | None:
    """The first-line verdict on a paused `call`; None when a person decides with no word from it.

    None without a server, without a reviewer on the gate, or for a call outside its bounds.
    Blocking (the server records the verdict): the gate calls it off the event loop.
    """
    reviewer = gate.first_line
    if not _reviews or reviewer is None or thread_id is None or not call["id"]:
        return None
    if gate.not_delegated(call["args"], _askers()) is not None:
        return None
    asked = DelegatedCall(
        thread_id=thread_id,
        graph_id=_graph_id(),
        agent=agent,
        tool_call_id=call["id"],
        name=call["name"],
        args=dict(call["args"]),
        description=description,
        required_role=gate.required_role(call["args"]),
        allowed_decisions=tuple(gate.allowed_decisions),
        requested_by=tuple(requested_by().get("requested_by", [])),
        reviewer=reviewer,
    )
    return _reviews[0](asked)


def may_ask(gate: ToolGate) -> bool:
    """Whether a call of `gate` may be put to a first-line reviewer in this process (a server is there)."""
    return bool(_reviews) and gate.first_line is not None


def _askers() -> set[str]:
    """The groups of the people who asked for what runs (the owner, the caller), as the server named them."""
    asked = set(requested_by().get("requested_by", []))
    people = [p for p in (thread_owner(), current_caller()) if p is not None and p.identity in asked]
    return {group for person in people for group in person.roles}


def _graph_id() -> str | None:
    try:
        graph_id = get_config().get("configurable", {}).get("graph_id")
    except RuntimeError:
        return None
    return graph_id if isinstance(graph_id, str) else None
