"""Whether anyone can answer an approval at all: the roles the people this server knows may have.

People come from `HITL_USERS` (each with a role) and from the OIDC provider (any role
`HITL_OIDC_ROLES` maps a group to); a supervisor counts as a reviewer too. `check_policies`
refuses, at start-up, an agent whose policy names a decider nobody can be (naming the agent, the
tool and the role); `answerable` tells the watcher that a pending approval has lost its last
possible answerer (a person removed, a role emptied), so it escalates instead of leaving it.
Not for whether one person may answer (`server.identity.users.User.may_decide`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.identity import oidc
from server.identity.users import ROLES, canonical, directory

if TYPE_CHECKING:
    from collections.abc import Iterable

    from hitl.policy.served import AgentCard

DECIDERS = ("owner", "reviewer", "supervisor")
COVERS = {"supervisor": {"supervisor", "reviewer"}, "reviewer": {"reviewer"}, "requester": set()}
"""The deciders a person of each role may be."""


class UnanswerablePolicyError(ValueError):
    """An agent's policy gives a call to a decider nobody this server knows can be."""


def possible_deciders() -> frozenset[str]:
    """The staff deciders someone known may be (`reviewer`, `supervisor`); the owner is always possible."""
    roles = {user.role for user in directory().users()}
    provider = oidc.provider()
    if provider is not None:
        roles |= set(provider.config.roles.values())
    return frozenset(d for role in roles if role in ROLES for d in COVERS[role])


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

    A fixed decider must be a role someone has; one chosen from the call's args may name a
    supervisor (unreadable args always do), so someone must be a supervisor.

    Raises:
        UnanswerablePolicyError: naming each agent, tool and role.
    """
    possible = possible_deciders()
    problems = []
    for card in cards:
        for tool, gates in sorted(card.catalog.gates.items()):
            for gate in gates:
                decider = gate.decider if isinstance(gate.decider, str) else None
                role = decider or "supervisor"
                if decider is not None and decider not in DECIDERS:
                    problems.append(f"{card.name}: {tool} is decided by {decider!r}, which is no role here")
                elif role != "owner" and role not in possible:
                    how = "is decided by" if decider else "may be decided (by its arguments) by"
                    problems.append(f"{card.name}: {tool} {how} a {role}, and nobody here is one")
    if problems:
        known = ", ".join(sorted(possible)) or "no reviewer or supervisor"
        msg = (
            "Some approvals could never be answered: " + "; ".join(dict.fromkeys(problems)) + f". The people "
            f"this server knows (HITL_USERS, HITL_OIDC_ROLES) can be: {known}. Give someone that role, "
            "or change the policy."
        )
        raise UnanswerablePolicyError(msg)
