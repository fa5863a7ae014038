"""Group names: the teams a policy names as deciders ("finance", "sre", "finance-leads").

A decider is `owner` (the thread's owner) or a group; the three roles are groups everyone with
that role is in (a supervisor is in `reviewer` too). People get further groups from `HITL_USERS`
and the OIDC groups claim. Only the name's shape is checked here; who is in a group is the server's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard, get_args

from hitl.contracts.interrupts import GROUP_PATTERN, MAX_GROUP_CHARS, OWNER, Role

if TYPE_CHECKING:
    from collections.abc import Mapping

ROLE_GROUPS: frozenset[str] = frozenset(get_args(Role))
"""The roles (`hitl.contracts.interrupts.Role`), which are groups of their own: nobody is put in one by
naming it as a group. `OWNER` is not a group: the thread's owner answers their own questions."""
_NAME = re.compile(GROUP_PATTERN)


def is_group_name(name: object) -> TypeGuard[str]:
    """Whether `name` is shaped as a group: lowercase letters, digits, `-`, `_`, `.`; 1 to 64 characters."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def is_decider(name: object) -> TypeGuard[str]:
    """Whether `name` may decide an approval: the owner, a role or any well-formed group."""
    return name == OWNER or is_group_name(name)


def check_decider(where: str, name: object) -> str:
    """`name`, if a policy may name it as a decider.

    Raises:
        ValueError: naming `where` and the rule a group name follows.
    """
    if not is_decider(name):
        msg = (
            f"{where} names {name!r} as its decider: use 'owner' or a group name (lowercase letters, "
            f"digits, '-', '_', '.'; at most {MAX_GROUP_CHARS} characters), e.g. 'reviewer' or 'finance'"
        )
        raise ValueError(msg)
    return str(name)


def extra_groups(where: str, names: list[str]) -> frozenset[str]:
    """The groups `names` lists beside a person's role (HITL_USERS), checked.

    Raises:
        ValueError: naming `where` and the bad name: malformed, a role, or `owner`.
    """
    for name in names:
        if not is_group_name(name) or name in ROLE_GROUPS or name == OWNER:
            msg = (
                f"{where} lists group {name!r}: a group name is lowercase letters, digits, '-', '_', '.' "
                f"(at most {MAX_GROUP_CHARS} characters), and neither a role nor 'owner' (give a role "
                "in the role field)"
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
        if not equals or not value or not is_group_name(group) or group == OWNER or group in mapping:
            msg = (
                f"{setting} entry {entry!r} must be group=value, each group once (a group: lowercase "
                f"letters, digits, '-', '_', '.'; at most {MAX_GROUP_CHARS} characters)"
            )
            raise ValueError(msg)
        mapping[group] = value
    return mapping
