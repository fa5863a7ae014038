"""A client's side of the interrupts: which shape a value has, what it asks of whom, and its answer by call.

`hitl.contracts.interrupts.InterruptShapes` lists every interrupt the layer sends by kind (published;
the web app's guards read it) and `InterruptKind` names them; `kind_of` tells a value's kind by its
shape, `read` checks a value against its shape and says what it asks (`Asked`, one `Ask` per thing a
person decides), `deciders_of` who must answer it. The CLI, Slack and e-mail read interrupts through
this module; none keeps its own list of shapes, deciders or decisions. `build_resume` writes the
answer to pending interrupts from decisions keyed by tool call id, never by position, so a reordered
list never approves the wrong call. Not for building values (`hitl.gate.review_requests`) or checking
answers (`hitl.contracts.answers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, assert_never, cast, get_args

from pydantic import ValidationError

from hitl.contracts.decisions import McpAction
from hitl.contracts.interrupts import catalogue

if TYPE_CHECKING:
    from collections.abc import Iterable

    from hitl.contracts.decisions import Decision
    from hitl.contracts.interrupts import (
        ApprovalRequest,
        BatchedApprovalRequest,
        Decider,
        FirstLineNote,
        FormRequest,
        McpElicitationRequest,
    )

__all__ = [
    "KINDS",
    "Ask",
    "Asked",
    "InterruptKind",
    "ResumeError",
    "build_resume",
    "deciders_of",
    "kind_of",
    "pending_interrupts",
    "read",
    "tool_call_ids",
]

InterruptKind = Literal["batched", "tool_approval", "form", "approval_request", "mcp_elicitation"]
"""The kinds of interrupt the layer sends: the keys of `hitl.contracts.interrupts.InterruptShapes`."""
KINDS: tuple[InterruptKind, ...] = get_args(InterruptKind)


Answers = Literal["decisions", "fields"]
"""How an interrupt is answered: per call with decisions, or with an object of its answer's own schema."""


@dataclass(frozen=True)
class Ask:
    """One thing a person decides in an interrupt: a gated call, a form to fill in, a sign-off."""

    subject: str
    """The tool, the form or the action asked about."""
    agent: str
    tool_call_id: str
    text: str
    """What the person reads: the review text, the form's title or the sign-off's message."""
    fields: Mapping[str, Any]
    """The call's args, or the form's context."""
    decisions: tuple[str, ...]
    """The decisions allowed (a sign-off: approve or reject); none for a form, answered with its fields."""
    decider: Decider
    approvals_required: int = 1
    approved_by: tuple[str, ...] = ()
    self_approval: bool = False
    first_line: FirstLineNote | None = None
    """What a first-line reviewer (a model) said of the call it left to people; None if none looked."""


@dataclass(frozen=True)
class Asked:
    """One interrupt as its shape says: its kind, what it asks, who asked and until when."""

    kind: InterruptKind
    asks: tuple[Ask, ...]
    answered_with: Answers
    """`decisions` (approve, edit, reject, respond per call), or `fields`: an object of the answer's own
    schema (a form's, a sign-off's `{approved, reason}`), as the interrupt's `response_schema` says."""
    agent: str
    requested_by: tuple[str, ...]
    deadline: str | None
    on_expiry: str | None
    escalates_to: Decider
    escalated_seconds: float | None = None
    """How long an escalated approval waits more before it is rejected."""

    def deciders(self, *, escalated: bool = False) -> frozenset[Decider]:
        """Who must answer: every ask's decider; once escalated, the group it escalated to."""
        return frozenset({self.escalates_to}) if escalated else frozenset(a.decider for a in self.asks)


def kind_of(value: object) -> InterruptKind | None:
    """The kind of interrupt `value` is by its tag (a batch: by its keys), unchecked; None for no kind."""
    if not isinstance(value, Mapping):
        return None
    tag, known = value.get("type"), catalogue()
    for kind in KINDS:
        expected, own = known.tags[kind], known.own_keys[kind]
        if (expected is not None and tag == expected) or (
            expected is None and tag is None and own and own <= value.keys()
        ):
            return kind
    return None


def read(value: object) -> Asked | None:
    """`value` checked against its published shape, and what it asks; None for a value of no shape."""
    kind = kind_of(value)
    if kind is None:
        return None
    try:
        checked = catalogue().adapters[kind].validate_python(value)
    except ValidationError:
        return None
    asked, answered_with = _asks(kind, checked)
    return Asked(
        kind=kind,
        asks=asked,
        answered_with=answered_with,
        agent=checked["agent"],
        requested_by=tuple(checked.get("requested_by", ())),
        deadline=checked.get("deadline"),
        on_expiry=checked.get("on_expiry"),
        escalates_to=checked.get("escalate_to", catalogue().escalates_to),
        escalated_seconds=checked.get("escalated_seconds"),
    )


def deciders_of(value: object) -> set[Decider]:
    """Who must answer the interrupt `value` (before any escalation), read without checking it whole.

    Each call of a batch by its review config; a value without `required_role` by its shape's default.
    A stock LangChain request (no deciders named) and a value of no kind go to a reviewer.
    """
    unnamed = catalogue().unnamed
    if not isinstance(value, Mapping):
        return {unnamed}
    configs = value.get("review_configs")
    if isinstance(configs, list):
        named = {str(c.get("required_role", unnamed)) for c in configs if isinstance(c, Mapping)}
        return named or {unnamed}
    kind = kind_of(value)
    default = catalogue().default_deciders.get(kind, unnamed) if kind else unnamed
    return {str(value.get("required_role") or default)}


def _asks(kind: InterruptKind, value: Any) -> tuple[tuple[Ask, ...], Answers]:  # noqa: ANN401  (checked `kind`)
    """What an interrupt of `kind` asks, and how it is answered; every kind has its case (mypy checks)."""
    match kind:
        case "batched":
            batch = cast("BatchedApprovalRequest", value)
            calls = zip(batch["action_requests"], batch["review_configs"], strict=False)
            return tuple(_call(action, config) for action, config in calls), "decisions"
        case "tool_approval":
            return (_call(value, value),), "decisions"
        case "form":
            form = cast("FormRequest", value)
            return (
                Ask(
                    subject=form["form"],
                    agent=form["agent"],
                    tool_call_id=form["tool_call_id"],
                    text=form["title"],
                    fields=form["context"],
                    decisions=(),
                    decider=form.get("required_role", catalogue().default_deciders[kind]),
                ),
            ), "fields"
        case "approval_request":
            sign_off = cast("ApprovalRequest", value)
            return (
                Ask(
                    subject=sign_off["action"],
                    agent=sign_off["agent"],
                    tool_call_id=sign_off["tool_call_id"],
                    text=sign_off["message"],
                    fields={},
                    decisions=("approve", "reject"),
                    decider=sign_off.get("required_role", catalogue().default_deciders[kind]),
                ),
            ), "fields"
        case "mcp_elicitation":
            question = cast("McpElicitationRequest", value)
            mcp = question["mcp"]
            return (
                Ask(
                    subject=f"{mcp['server']}.{mcp['tool']}",
                    agent=question["agent"],
                    tool_call_id=question["tool_call_id"],
                    text=question["message"],
                    fields=question["args"],
                    decisions=get_args(McpAction),
                    decider=question["required_role"],
                ),
            ), "fields"
        case _:
            assert_never(kind)


def _call(action: Mapping[str, Any], config: Mapping[str, Any]) -> Ask:
    """A gated call, from its action request and its review config (one value for a per-call request)."""
    return Ask(
        subject=action["name"],
        agent=action["agent"],
        tool_call_id=action["tool_call_id"],
        text=action["description"],
        fields=action["args"],
        decisions=tuple(config.get("allowed_decisions", ())),
        decider=config["required_role"],
        approvals_required=config.get("approvals_required", 1),
        approved_by=tuple(config.get("approved_by", ())),
        self_approval=config.get("self_approval", False),
        first_line=action.get("first_line"),
    )


class ResumeError(ValueError):
    """The decisions do not match the pending tool calls."""


def pending_interrupts(thread: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every pending interrupt of a thread as `threads.get` returns it."""
    return [dict(i) for batch in (thread.get("interrupts") or {}).values() for i in batch]


def tool_call_ids(interrupt: Mapping[str, Any]) -> list[str]:
    """The tool calls an interrupt asks about, in the order its answer must follow."""
    value = interrupt.get("value") or {}
    if isinstance(value.get("action_requests"), list):
        return [str(a.get("tool_call_id", "")) for a in value["action_requests"]]
    return [str(value["tool_call_id"])] if value.get("tool_call_id") else []


def build_resume(
    interrupts: Iterable[Mapping[str, Any]], by_tool_call: Mapping[str, Decision]
) -> dict[str, Any]:
    """`{interrupt_id: answer}` for every interrupt whose tool calls all have a decision.

    A batched interrupt gets `{"decisions": [...]}` in its own order; a per-call one gets
    the decision itself. Interrupts none of whose calls are decided are left pending.

    Raises:
        ResumeError: a decision names a call that is not pending, or a batch is only
            partly decided (a batch is answered whole or not at all).
    """
    remaining = dict(by_tool_call)
    resume: dict[str, Any] = {}
    for interrupt in interrupts:
        ids = tool_call_ids(interrupt)
        decided = [i for i in ids if i in remaining]
        if not decided:
            continue
        if len(decided) != len(ids):
            missing = ", ".join(i for i in ids if i not in remaining)
            msg = f"Interrupt {interrupt['id']} asks about several calls; decide these too: {missing}"
            raise ResumeError(msg)
        value = interrupt.get("value") or {}
        answers = [remaining.pop(i) for i in ids]
        resume[str(interrupt["id"])] = (
            {"decisions": answers} if isinstance(value.get("action_requests"), list) else answers[0]
        )
    if remaining:
        msg = f"No pending approval for tool call(s): {', '.join(remaining)}"
        raise ResumeError(msg)
    return resume
