"""Approval policy: which tool calls pause, what a reviewer may decide, and who may decide.

A policy is data an agent hands to `ApprovalGate`; it never runs tools. Building a gate
checks the policy against the agent's tools, so a typo can never silently turn a gate off.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hitl.policy.groups import check_decider, is_decider

if TYPE_CHECKING:
    from collections.abc import Iterable

    from hitl.contracts.decisions import DecisionType
    from hitl.contracts.interrupts import Decider
    from hitl.policy.deadlines import Deadline
    from hitl.policy.first_line import FirstLineReviewer

ArgsPredicate = Callable[[Mapping[str, Any]], bool]
Describer = Callable[[str, Mapping[str, Any]], str]
Quorum = int | Callable[[Mapping[str, Any]], int]
ArgsCheck = Callable[[Mapping[str, Any]], "str | None"]
"""A call's args -> what is wrong with them against the business records, in words naming the argument."""
QUORUM_ON_UNREADABLE = 2
"""Distinct approvers a call needs when its quorum cannot be read from its args (never fewer)."""

DECISION_TYPES: frozenset[DecisionType] = frozenset({"approve", "edit", "reject", "respond"})

BUILTIN_TOOLS = frozenset(
    {"write_todos", "ls", "read_file", "write_file", "edit_file", "glob", "grep", "execute", "task"}
)
"""Tools every Deep Agent gets from its middleware, which a policy may gate as well."""


@dataclass(frozen=True)
class ToolGate:
    """How one tool is reviewed.

    Attributes:
        allowed_decisions: what a reviewer may answer.
        when: pause only when this returns True for the call's args (always when None).
            It must give the same answer for the same args: it runs again on resume.
        description: the text a reviewer reads, static or built from the call.
        decider: who may answer: `owner` or a group (`reviewer`, `supervisor`, a team such as
            `finance`), fixed or chosen from the call's args (`hitl.policy.groups.Tiers`).
        deadline: how long a pending call may wait and what then (the agent's default when None).
        auto_approve_limit: calls whose `limit_arg` is a number up to this run without a
            person (no limit when None); a run's policy override may change it.
        limit_arg: the argument `auto_approve_limit` reads.
        always_review: calls for which this returns True always pause, whatever a run's
            override or a thread's allowance says (e.g. refunds over the supervisor limit).
        fixed_on_edit: arguments an edit may not change: what the call is about (the order a
            refund goes to, the booking to cancel). Both the server and the gate refuse such edits.
        self_approval: whether the person who asked for the call (the thread's owner, or the
            caller of the run that made it) may also approve, edit or answer it. Off: four eyes.
            Questions the owner answers by design (`decider="owner"`) are the owner's anyway.
        approvals_required: how many distinct people with the required role must approve
            (fixed, or chosen from the call's args). Each approve is recorded and the call
            stays pending ("1 of 2") until the last; any reject ends it, an edit starts the
            count again on the edited args (the editor counts as its first approver).
        check_args: what a call's args must satisfy beyond the tool's schema, read from the
            business records (a refund at most what its order was paid): None when they do,
            else the problem naming the argument. The server refuses an edit that fails it
            (422) before anything is saved; the tool's service refuses such a call as well.
        may_allow: whether a reviewer's approve may also allow later calls of this tool in the
            thread ("always allow", within bounds the reviewer sets). Off by default: a tool
            that moves money or sends something must opt in. Never for what `always_review`
            marks, an owner's own question or a call that needs several approvers.
        first_line: a model that decides the routine calls first (`hitl.policy.first_line`), within
            its bounds; what it does not approve goes to the people `decider` names, with its reason.
            Refused with a quorum for every call or a decider it does not stand in front of.
    """

    allowed_decisions: tuple[DecisionType, ...]
    when: ArgsPredicate | None = None
    description: str | Describer | None = None
    decider: Decider | Callable[[Mapping[str, Any]], Decider] = "reviewer"
    deadline: Deadline | None = None
    auto_approve_limit: float | None = None
    limit_arg: str = "amount"
    always_review: ArgsPredicate | None = None
    fixed_on_edit: tuple[str, ...] = ()
    self_approval: bool = False
    approvals_required: Quorum = 1
    check_args: ArgsCheck | None = None
    may_allow: bool = False
    first_line: FirstLineReviewer | None = None

    def __post_init__(self) -> None:
        """Refuse an empty or misspelled list of decisions, a malformed decider, an unmeetable quorum."""
        if not callable(self.decider):
            check_decider("decider", self.decider)
        unknown = set(self.allowed_decisions) - DECISION_TYPES
        if not self.allowed_decisions or unknown:
            msg = (
                f"allowed_decisions must be a non-empty subset of {sorted(DECISION_TYPES)} "
                f"(got {list(self.allowed_decisions)})"
            )
            raise ValueError(msg)
        fixed = self.approvals_required
        if not callable(fixed) and (isinstance(fixed, bool) or not isinstance(fixed, int) or fixed < 1):
            msg = f"approvals_required must be a whole number of at least 1 (got {fixed!r})"
            raise ValueError(msg)
        if (callable(fixed) or fixed > 1) and "approve" not in self.allowed_decisions:
            msg = "approvals_required needs 'approve' among allowed_decisions"
            raise ValueError(msg)
        if (callable(fixed) or fixed > 1) and self.decider == "owner":
            msg = "approvals_required counts distinct approvers; an owner's own question has one"
            raise ValueError(msg)
        if (problem := self.first_line_problem()) is not None:
            raise ValueError(problem)

    def pauses(self, args: Mapping[str, Any]) -> bool:
        """Whether a call with `args` waits for a person; unreadable args always do."""
        if self.always_reviews(args):
            return True
        try:
            if self.auto_approve_limit is not None and float(args[self.limit_arg]) <= self.auto_approve_limit:
                return False
            return self.when is None or bool(self.when(args))
        except (TypeError, ValueError, KeyError):
            return True

    def args_problem(self, args: Mapping[str, Any]) -> str | None:
        """What `check_args` finds wrong with `args`; a check that cannot run says so (and refuses)."""
        if self.check_args is None:
            return None
        try:
            return self.check_args(args)
        except Exception as error:  # noqa: BLE001  (a failed lookup refuses the edit, in words)
            return f"its arguments could not be checked ({error})"

    def always_reviews(self, args: Mapping[str, Any]) -> bool:
        """Whether policy marks this call as always reviewed; unreadable args are."""
        if self.always_review is None:
            return False
        try:
            return bool(self.always_review(args))
        except (TypeError, ValueError, KeyError):
            return True

    def allows_later(self, args: Mapping[str, Any]) -> bool:
        """Whether an approve of this call may allow later ones in the thread (`allow`): opted in, and fit."""
        return (
            self.may_allow
            and "approve" in self.allowed_decisions
            and self.required_role(args) != "owner"
            and not self.always_reviews(args)
            and self.approvals_needed(args) == 1
        )

    def four_eyes(self, args: Mapping[str, Any]) -> bool:
        """Whether the person who asked for a call with `args` must leave its approval to someone else."""
        return not self.self_approval and self.required_role(args) != "owner"

    def approvals_needed(self, args: Mapping[str, Any]) -> int:
        """How many distinct people must approve a call with `args`; unreadable args need a quorum."""
        if not callable(self.approvals_required):
            return self.approvals_required
        try:
            needed = self.approvals_required(args)
        except (TypeError, ValueError, KeyError):
            return QUORUM_ON_UNREADABLE
        return needed if isinstance(needed, int) and needed >= 1 else QUORUM_ON_UNREADABLE

    def required_role(self, args: Mapping[str, Any]) -> Decider:
        """Who may answer a call with `args`; unreadable args (or a malformed choice) need a supervisor."""
        if isinstance(self.decider, str):
            return self.decider
        try:
            chosen = self.decider(args)
        except (TypeError, ValueError, KeyError):
            return "supervisor"
        return chosen if is_decider(chosen) else "supervisor"

    def first_line_problem(self) -> str | None:
        """What contradicts this gate's first-line reviewer, in words; None when it fits (or there is none).

        A quorum for every call, an owner's question or a fixed decider it does not stand in front of
        (a supervisor tier) are refused at build time. Where the decider or the quorum depends on the
        args (`Tiers`, a function), it takes only the calls outside those (`not_delegated`).
        """
        reviewer = self.first_line
        if reviewer is None:
            return None
        where = f"first_line ({reviewer.actor})"
        fixed, decider = self.approvals_required, self.decider
        if not callable(fixed) and fixed > 1:
            return (
                f"{where}: this gate needs {fixed} approvers for every call, and a model never counts toward "
                "a quorum. Drop first_line, or let approvals_required depend on the args."
            )
        if isinstance(decider, str) and decider not in reviewer.stands_for:
            return (
                f"{where}: this gate's decider is {decider!r}, which it does not stand in front of "
                f"(stands_for: {', '.join(reviewer.stands_for)}); a model never stands in for a supervisor "
                "or answers an owner's question."
            )
        tiers = getattr(decider, "deciders", None)
        if isinstance(tiers, frozenset) and not tiers & set(reviewer.stands_for):
            return f"{where}: none of this gate's deciders ({', '.join(sorted(tiers))}) is in its stands_for"
        if missing := sorted(set(reviewer.may) - set(self.allowed_decisions)):
            return f"{where}: it may {', '.join(missing)}, which this gate's allowed_decisions do not list"
        return None

    def not_delegated(  # noqa: PLR0911  (each bound says why, in its own words)
        self, args: Mapping[str, Any], askers: Iterable[str] = ()
    ) -> str | None:
        """Why a paused call with `args` is not the first-line reviewer's to decide; None when it is.

        `askers` are the groups of the people whose request the call is: where one of them holds the
        decider's group, separation of duties asks for another person, which a model is not.
        """
        reviewer = self.first_line
        if reviewer is None:
            return "no first-line reviewer is named for it"
        needed = self.required_role(args)
        if self.always_reviews(args):
            return "its policy always asks a person for it"
        if self.approvals_needed(args) > 1:
            return "it needs several people to approve (a quorum)"
        if needed not in reviewer.stands_for:
            return f"it needs {needed}, which the first-line reviewer does not stand in front of"
        if self.four_eyes(args) and needed in set(askers):
            return "its asker could decide it, so separation of duties asks for another person"
        if reviewer.limit is not None:
            try:
                amount = float(args[self.limit_arg])
            except (KeyError, TypeError, ValueError):
                return f"its {self.limit_arg} cannot be read as a number"
            if not amount <= reviewer.limit:
                return f"its {self.limit_arg} {amount:g} is over the first-line limit {reviewer.limit:g}"
        try:
            inside = reviewer.within is None or bool(reviewer.within(args))
        except (KeyError, TypeError, ValueError):
            inside = False
        return None if inside else "it is outside the bounds its policy gives the first-line reviewer"

    def describe(self, name: str, args: Mapping[str, Any], prefix: str) -> str:
        """The text a reviewer reads for this call; without a description of its own, one line naming it.

        E.g. `receipt_checker asks before acting: flag_receipt receipt_id="R-9", reason="altered"`.
        """
        if callable(self.description):
            try:
                return self.description(name, args)
            except (TypeError, ValueError, KeyError):
                pass
        elif self.description:
            return self.description
        said = ", ".join(f"{key}={json.dumps(value, default=str)}" for key, value in args.items())
        return f"{prefix}: {name} {said}".rstrip()


Policy = Mapping[str, ToolGate]
"""Tool name to its gate; tools not named run without a person."""


def check_policy(agent: str, policy: Policy, tool_names: Iterable[str]) -> None:
    """Fail loudly when `policy` names a tool that `agent` does not have.

    Raises:
        ValueError: naming the agent, the unknown tools and the tools it has.
    """
    available = set(tool_names) | BUILTIN_TOOLS
    unknown = sorted(set(policy) - available)
    if unknown:
        msg = (
            f"Policy for agent {agent!r} names tools it does not have: {', '.join(unknown)}. "
            f"Its tools are: {', '.join(sorted(available))}."
        )
        raise ValueError(msg)
