"""Group names: the teams a policy names as deciders ("finance", "sre", "finance-leads"), and who decides.

A decider is `owner` (the thread's owner) or a group; the three roles are groups everyone with
that role is in (a supervisor is in `reviewer` too). People get further groups from `HITL_USERS`
and the OIDC groups claim; `deciding` is the one rule for which of them someone decides for (a
requester: none). Names the server writes for itself (`RESERVED_NAMES`) are nobody's and no group.
Who is in a group is the server's (`server.identity`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard, get_args

from hitl.contracts.interrupts import GROUP_PATTERN, MAX_GROUP_CHARS, OWNER, Role

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

ROLE_GROUPS: frozenset[str] = frozenset(get_args(Role))
"""The roles (`hitl.contracts.interrupts.Role`), which are groups of their own: nobody is put in one by
naming it as a group. `OWNER` is not a group: the thread's owner answers their own questions."""
DECIDING_ROLES = frozenset({"reviewer", "supervisor"})
"""The roles whose holders decide for groups; a requester answers only their own thread's questions."""
SYSTEM_ACTOR = "system"
"""The server's own actor: who signs the watcher's expiries and escalations."""
UNKNOWN_ACTOR = "unknown"
"""Who decided, in analytics and metrics, when a record's roles cannot be read."""
RESERVED_NAMES = frozenset({SYSTEM_ACTOR, UNKNOWN_ACTOR})
"""Names the server writes for itself: no person (`HITL_USERS`, OIDC), group or decider may take one."""
_NAME = re.compile(GROUP_PATTERN)
_RULE = (
    f"lowercase letters, digits, '-', '_', '.'; at most {MAX_GROUP_CHARS} characters; neither 'owner' "
    f"nor a name the server keeps for itself ({', '.join(sorted(RESERVED_NAMES))})"
)


def is_group_name(name: object) -> TypeGuard[str]:
    """Whether `name` may name a group (a role is one): lowercase letters, digits, `-`, `_`, `.`; 1 to 64.

    Never `owner` (the thread's owner is no group) nor a reserved name (`system`, `unknown`).
    """
    return (
        isinstance(name, str)
        and _NAME.fullmatch(name) is not None
        and name != OWNER
        and name not in RESERVED_NAMES
    )


def is_team(name: object) -> TypeGuard[str]:
    """Whether a person may be put in group `name` beside their role: a group name that is no role."""
    return is_group_name(name) and name not in ROLE_GROUPS


def is_decider(name: object) -> TypeGuard[str]:
    """Whether `name` may decide an approval: the owner, a role or any well-formed group."""
    return name == OWNER or is_group_name(name)


def deciding(held: Iterable[str]) -> frozenset[str]:
    """The groups someone holding `held` (their roles, then their teams) decides for.

    A requester is never a decider: teams make a reviewer or supervisor decide a team's calls, and
    give a requester nothing to decide and nobody else's approvals to see (they answer their own
    thread's questions as `owner`). The inbox, its counts, every decision, `/me`, the gate and the
    start-up check read this.
    """
    held = frozenset(held)
    return held if held & DECIDING_ROLES else frozenset()


def check_decider(where: str, name: object) -> str:
    """`name`, if a policy may name it as a decider.

    Raises:
        ValueError: naming `where` and the rule a group name follows.
    """
    if not is_decider(name):
        msg = (
            f"{where} names {name!r} as its decider: use 'owner' or a group name ({_RULE}), "
            "e.g. 'reviewer' or 'finance'"
        )
        raise ValueError(msg)
    return str(name)


def extra_groups(where: str, names: list[str]) -> frozenset[str]:
    """The groups `names` lists beside a person's role (HITL_USERS), checked.

    Raises:
        ValueError: naming `where` and the bad name: malformed, a role, `owner` or a reserved name.
    """
    for name in names:
        if not is_team(name):
            msg = (
                f"{where} lists group {name!r}: a group name is {_RULE}, and no role (give a role in the "
                "role field)"
            )
            raise ValueError(msg)
    return frozenset(names)


@dataclass(frozen=True)
class Tiers:
    """Who decides by a number among the call's args, as a policy says it in words.

    `Tiers("amount", "finance", ((500, "finance-leads"),))`: finance decides up to 500, finance-leads
    above. A `ToolGate.decider`; unreadable args go to a supervisor (`ToolGate.required_role`). The
    start-up check reads `deciders` to know each group it may name.
    """

    arg: str
    first: str
    above: tuple[tuple[float, str], ...] = ()

    def __post_init__(self) -> None:
        """Refuse a malformed group or limits that do not rise.

        Raises:
            ValueError: naming the tier.
        """
        for where, name in [("Tiers first", self.first), *((f"Tiers above {n:g}", g) for n, g in self.above)]:
            check_decider(where, name)
        limits = [limit for limit, _ in self.above]
        if limits != sorted(set(limits)):
            msg = f"Tiers limits must rise, each once (got {limits})"
            raise ValueError(msg)

    def __call__(self, args: Mapping[str, Any]) -> str:
        """The group that decides a call with `args` (the tier of `args[arg]`)."""
        amount = float(args[self.arg])
        return next((name for limit, name in reversed(self.above) if amount > limit), self.first)

    @property
    def deciders(self) -> frozenset[str]:
        """Every decider a call may need."""
        return frozenset({self.first, *(name for _, name in self.above)})


def who(decider: str) -> str:
    """A decider in words: `the thread's owner`, `a supervisor`, `someone in finance`."""
    if decider == OWNER:
        return "the thread's owner"
    return f"a {decider}" if decider in ROLE_GROUPS else f"someone in {decider}"


def group_map(setting: str, spec: str) -> dict[str, str]:
    """`group=value` entries, comma-separated (`finance=fin@example.com,sre=sre@example.com`), as a mapping.

    Raises:
        ValueError: naming `setting` and the entry: no `=`, a malformed group, an empty value, a group twice.
    """
    mapping: dict[str, str] = {}
    for entry in filter(None, (e.strip() for e in spec.split(","))):
        group, equals, value = (part.strip() for part in entry.partition("="))
        if not equals or not value or not is_group_name(group) or group in mapping:
            msg = f"{setting} entry {entry!r} must be group=value, each group once (a group: {_RULE})"
            raise ValueError(msg)
        mapping[group] = value
    return mapping
