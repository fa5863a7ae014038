"""A first-line reviewer: a model a policy hands the routine calls of one tool to, within stated bounds.

`FirstLineReviewer` is what a `ToolGate` names as `first_line`: the model, its instructions (and the
offline rules the scripted classifier follows), what it may answer (approve only by default), its
bounds, the deciders it stands in front of, the share of its approvals sampled for people, its
timeout and circuit breaker. Which calls of a gate are its to decide is the gate's
(`ToolGate.first_line_problem`, checked at build time, and `ToolGate.not_delegated`, per call). Pure
data: the gate asks it (`hitl.model.first_line.review`), the server runs it (`server.first_line`). It is
never a person: never counted toward a quorum, a supervisor tier or separation of duties.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from hitl.policy.groups import OWNER, is_group_name

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from hitl.model.first_line.triage import Triage

FirstLineAnswer = Literal["approve", "reject"]
"""What a first-line reviewer may answer itself; everything else it sends to people."""
ANSWERS: frozenset[str] = frozenset({"approve", "reject"})
NEVER_STANDS_FOR = frozenset({"supervisor", OWNER})
"""Deciders no model stands in front of: the supervisor tier, and an owner's own questions."""
ACTOR_PREFIX = "model:"
"""How a first-line reviewer is named in receipts and the trail (`model:support-triage`): never a person."""


def is_model_actor(identity: object) -> bool:
    """Whether `identity` names a first-line reviewer (`model:<name>`), not a person."""
    return isinstance(identity, str) and identity.startswith(ACTOR_PREFIX)


@dataclass(frozen=True)
class FirstLineReviewer:
    """A model that decides the routine calls of a gate before any person sees them.

    Attributes:
        name: what it signs as, `model:<name>` (lowercase letters, digits, `-`, `_`, `.`).
        instructions: what a real model is told to approve; the call's arguments are shown to it
            as data, never as instructions.
        model: `scripted` (offline, deterministic: follows `offline`) or `provider:model`
            (`openai:gpt-4o-mini`), as LangChain's `init_chat_model` reads it.
        offline: the rules the scripted classifier follows (`hitl.model.first_line.triage.Triage`);
            without them it sends every call to people.
        may: what it may answer itself: approve only by default; `reject` too if the policy says so
            (the agent gets its reason as a tool error, as from a reviewer's reject). Never edit or respond.
        limit: calls whose `limit_arg` (the gate's) is a number up to this, only (None: no limit of its own).
        within: a further bound on the call's args; a call it returns False for (or cannot read) goes to
            people.
        stands_for: the deciders (groups) whose calls it takes; never `supervisor` or `owner`.
        sample_rate: the share of its approvals put before a person afterwards (0 to 1), chosen by the
            call's id, so the same call is always sampled or never.
        timeout_seconds: how long one classification may take; slower ones go to people.
        refusals_in_a_row: this many calls in a row on one thread it did not approve (rejected, sent to
            people, failed) open its circuit breaker on that thread: people decide there for an hour.
        refusals_per_hour: this many in the last hour, on any thread, open it everywhere.
    """

    name: str
    instructions: str
    model: str = "scripted"
    offline: Triage | None = None
    may: tuple[FirstLineAnswer, ...] = ("approve",)
    limit: float | None = None
    within: Callable[[Mapping[str, Any]], bool] | None = None
    stands_for: tuple[str, ...] = ("reviewer",)
    sample_rate: float = 0.1
    timeout_seconds: float = 5.0
    refusals_in_a_row: int = 3
    refusals_per_hour: int = 20

    def __post_init__(self) -> None:
        """Refuse a malformed name, answer, model spec, decider, rate or bound, naming the field."""
        where = f"first-line reviewer {self.name!r}"
        if not is_group_name(self.name):
            msg = f"{where}: name must be lowercase letters, digits, '-', '_', '.' (at most 64 characters)"
            raise ValueError(msg)
        if not self.may or not set(self.may) <= ANSWERS:
            msg = f"{where}: may must be a non-empty subset of {sorted(ANSWERS)} (got {list(self.may)})"
            raise ValueError(msg)
        provider, _, model = self.model.partition(":")
        if self.model != "scripted" and not (provider and model):
            msg = f"{where}: model must be 'scripted' or 'provider:model', e.g. 'openai:gpt-4o-mini'"
            raise ValueError(msg)
        bad = [d for d in self.stands_for if not is_group_name(d) or d in NEVER_STANDS_FOR]
        if not self.stands_for or bad:
            msg = (
                f"{where}: stands_for must name the groups whose calls it takes, never supervisor or owner "
                f"(got {list(self.stands_for)})"
            )
            raise ValueError(msg)
        if not 0 <= self.sample_rate <= 1:
            msg = f"{where}: sample_rate must be between 0 and 1 (got {self.sample_rate})"
            raise ValueError(msg)
        if not (self.timeout_seconds > 0 and math.isfinite(self.timeout_seconds)):
            msg = f"{where}: timeout_seconds must be a positive number (got {self.timeout_seconds})"
            raise ValueError(msg)
        if self.refusals_in_a_row < 1 or self.refusals_per_hour < 1:
            msg = f"{where}: refusals_in_a_row and refusals_per_hour must be at least 1"
            raise ValueError(msg)
        if self.limit is not None and not math.isfinite(self.limit):
            msg = f"{where}: limit must be a number (got {self.limit})"
            raise ValueError(msg)

    @property
    def actor(self) -> str:
        """What it signs receipts as: `model:<name>`."""
        return f"{ACTOR_PREFIX}{self.name}"

    def bounded(self, decision: str, reason: str) -> tuple[str, str, str]:
        """What the model's answer becomes under this policy: (decision, reason, cause).

        Its approve or reject stands when `may` lists it (cause `model`); an answer `may` does not
        list becomes a referral (`not_allowed`), with what it would have done; a refer stays one.
        """
        if decision == "refer" or decision in self.may:
            return decision, reason, "model"
        return (
            "refer",
            f"it would {decision} this ({reason}), which its policy does not let it do",
            "not_allowed",
        )
