"""Whether anyone can answer an approval at all: the groups the people this server knows may decide for.

People come from `HITL_USERS` (each with a role and any groups) and from the OIDC provider (any role
`HITL_OIDC_ROLES` maps a claim value to; with `HITL_OIDC_GROUPS_CLAIM` set, any group at all, since
the provider's groups are open-ended); a supervisor counts as a reviewer too, and a requester decides
for no group whatever groups they are in (`hitl.policy.groups.deciding`). `check_policies` refuses, at
start-up, an agent whose policy names a decider (or `run_by` group) nobody can be, naming the agent,
the tool and the group; `answerable` tells the watcher that a pending approval has lost its last
possible answerer (a person removed, a group emptied), so it escalates instead of leaving it. Not for
whether one person may answer (`server.identity.users.User.may_decide`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hitl.policy.deadlines import ESCALATES_TO
from hitl.policy.groups import OWNER, ROLE_GROUPS, deciding
from server.identity import oidc
from server.identity.users import canonical, directory, held_roles

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from hitl.policy.deadlines import Deadline
    from hitl.policy.served import AgentCard


class UnanswerablePolicyError(ValueError):
    """An agent's policy gives a call to a decider nobody this server knows can be."""


class Possible(frozenset[str]):
    """The groups someone known may decide for (or be in); with OIDC groups on, any group beyond the roles."""

    open_groups: bool = False
    members: frozenset[str] = frozenset()
    """Every group someone known is in, deciding or not (a requester's teams): to say why nobody decides."""

    def __contains__(self, decider: object) -> bool:
        """Whether someone may be `decider`: a listed group, or any non-role group when groups are open."""
        if self.open_groups and isinstance(decider, str) and decider not in ROLE_GROUPS | {OWNER}:
            return True
        return super().__contains__(decider)


def possible_deciders() -> Possible:
    """The staff deciders someone known may be (`reviewer`, `supervisor`, groups); the owner always is.

    A group only requesters are in is none (`deciding`); its name is kept in `members`. With OIDC on
    and `HITL_OIDC_GROUPS_CLAIM` set, a provider's token may put anyone in any group: every
    well-formed group beyond the roles counts as possible, if the provider may sign in a reviewer or
    a supervisor at all.
    """
    possible = _possible(deciding)
    possible.members = _possible(frozenset)
    return possible


def _possible(judge: Callable[[Iterable[str]], frozenset[str]]) -> Possible:
    """The groups `judge` finds in what each person known holds (their roles, then their groups)."""
    held = [user.memberships for user in directory().users()]
    provider = oidc.provider()
    signed_in = [held_roles(role) for role in provider.config.roles.values()] if provider is not None else []
    possible = Possible(group for roles in [*held, *signed_in] for group in judge(roles))
    possible.open_groups = (
        provider is not None and bool(provider.config.groups_claim) and any(map(judge, signed_in))
    )
    return possible


def may_run(card: AgentCard, members: frozenset[str]) -> bool:
    """Whether someone known may be in a group of `card.run_by` (a role there: as before, unchecked)."""
    if card.run_by is None or card.run_by & ROLE_GROUPS:
        return True
    return any(group in members for group in card.run_by)


def answerable(deciders: Iterable[str], owner: str | None, possible: frozenset[str] | None = None) -> bool:
    """Whether someone may still answer an interrupt that `deciders` must answer (all of them at once).

    An owner's question needs its owner: one `HITL_USERS` still lists, or any name while the OIDC
    provider is on (it may sign them in).
    """
    possible = possible_deciders() if possible is None else possible
    for decider in deciders:
        if decider == "owner":
            known = {canonical(u.identity) for u in directory().users()}
            if owner is None or (oidc.provider() is None and canonical(owner) not in known):
                return False
        elif decider not in possible:
            return False
    return True


def check_policies(cards: Iterable[AgentCard]) -> None:
    """Refuse to start when a served agent's policy names a decider nobody can be.

    A fixed decider must be a group someone is in (a role is a group); one chosen from the call's
    args may name a supervisor (unreadable args always do), so someone must be a supervisor, and
    each group its `Tiers` name, and the group an overdue call escalates to (`Deadline.escalate_to`).
    An agent only some groups may run (`run_by`) needs someone in one.

    Raises:
        UnanswerablePolicyError: naming each agent, tool and group.
    """
    possible = possible_deciders()
    problems = []
    for card in cards:
        if not may_run(card, possible.members):
            problems.append(f"{card.name} may be run by {card.who_may_run}, and nobody here is in that group")
        for tool, gates in sorted(card.catalog.gates.items()):
            for gate in gates:
                problems += [f"{card.name}: {tool} {why}" for why in _unanswerable(gate.decider, possible)]
                problems += [f"{card.name}: {tool} {why}" for why in _unescalatable(gate.deadline, possible)]
        for group in sorted(card.answerers):
            asked = f"{card.name}: its MCP servers' questions"
            problems += [f"{asked} {why}" for why in _unanswerable(group, possible)]
    if problems:
        known = ", ".join(sorted(possible)) or "no reviewer or supervisor"
        msg = (
            "Some approvals could never be answered: " + "; ".join(dict.fromkeys(problems)) + ". The people "
            f"this server knows (HITL_USERS, HITL_OIDC_ROLES) can be: {known}. Put a reviewer or a "
            "supervisor in that group (HITL_USERS name:role+group:token, or HITL_OIDC_GROUPS_CLAIM), or "
            "change the policy."
        )
        raise UnanswerablePolicyError(msg)


def _unescalatable(deadline: Deadline | None, possible: Possible) -> list[str]:
    """Where an overdue call escalates, if to a team nobody is in (a supervisor is the watcher's, as ever)."""
    target = deadline.escalate_to if deadline is not None and deadline.then == "escalate" else ESCALATES_TO
    if target == ESCALATES_TO or target in possible:
        return []
    return [f"escalates to {_nobody(target, possible)}"]


def _unanswerable(decider: object, possible: Possible) -> list[str]:
    """What is wrong with one gate's decider: each group it may name that nobody here may decide for."""
    if isinstance(decider, str):
        if decider == OWNER or decider in possible:
            return []
        return [f"is decided by {_nobody(decider, possible)}"]
    named: object = getattr(decider, "deciders", frozenset())
    chosen = sorted({"supervisor", *(named if isinstance(named, frozenset) else ())})
    return [
        f"may be decided (by its arguments) by {_nobody(group, possible)}"
        for group in chosen
        if group != OWNER and group not in possible
    ]


def _nobody(group: str, possible: Possible) -> str:
    """`group`, and why nobody decides for it: nobody holds it, or only requesters are in it."""
    if group in ROLE_GROUPS:
        return f"a {group}, and nobody here is one"
    if group in possible.members:
        return (
            f"{group!r}, a group nobody may decide for (only requesters are in it; requesters never decide)"
        )
    return f"{group!r}, a group nobody here is in"
