"""Who may call the server: bearer tokens mapped to users and their roles.

Read from `HITL_USERS` (dev users in `.env.example`); production sets its own list or
replaces `UserDirectory.authenticate` with a call to its identity provider.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, get_args

from hitl.settings import get_settings

if TYPE_CHECKING:
    from hitl.contracts import Decider

Role = Literal["requester", "reviewer", "supervisor"]
ROLES: tuple[Role, ...] = get_args(Role)
SYSTEM_ACTOR = "system"


@dataclass(frozen=True)
class User:
    """An authenticated caller."""

    identity: str
    role: Role

    @property
    def roles(self) -> list[str]:
        """The user's roles, supervisors counting as reviewers too."""
        return ["reviewer", "supervisor"] if self.role == "supervisor" else [self.role]

    @property
    def is_staff(self) -> bool:
        """Reviewers and supervisors may read threads they did not start."""
        return self.role in {"reviewer", "supervisor"}

    def may_decide(self, decider: Decider, owner: str | None) -> bool:
        """Whether this user may answer an interrupt that `decider` must answer."""
        if decider == "owner":
            return owner is not None and self.identity == owner
        return decider in self.roles


class UserDirectory:
    """Bearer token to user, parsed from `name:role:token` entries."""

    def __init__(self, spec: str) -> None:
        """Parse `spec`; a malformed entry or an unknown role fails start-up loudly.

        Raises:
            ValueError: naming the bad entry.
        """
        self._by_token: dict[str, User] = {}
        for raw in filter(None, (entry.strip() for entry in spec.split(","))):
            name, _, rest = raw.partition(":")
            role, _, token = rest.partition(":")
            if not (name and token) or role not in ROLES:
                msg = f"HITL_USERS entry {raw.split(':')[0]!r} must be name:role:token with role in {ROLES}"
                raise ValueError(msg)
            self._by_token[token] = User(identity=name, role=role)  # type: ignore[arg-type]

    def authenticate(self, token: str) -> User | None:
        """The user holding `token`, if any."""
        return self._by_token.get(token)

    def users(self) -> list[User]:
        """Every known user."""
        return list(self._by_token.values())


@lru_cache(maxsize=1)
def directory() -> UserDirectory:
    """The process's user directory, from the settings."""
    return UserDirectory(get_settings().hitl_users)
