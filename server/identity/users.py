"""Who may call the server: bearer tokens mapped to users, their roles and their groups.

Static tokens come from `HITL_USERS` (dev users in `.env.example`; `name:role:token`, or
`name:role+group+group:token` for a person in teams such as `finance`); with `HITL_OIDC_ISSUER`
set, a JWT from that identity provider names the user too (`server.identity.oidc`, see `identify`).
The published `dev-*` tokens work only in dev mode (`HITL_DEV_MODE=true` in the environment)
and only over loopback; outside dev mode they stop the server at start.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, get_args

from disarm import is_mixed_script, skeleton_key

from hitl.contracts.interrupts import Role
from hitl.policy.first_line import ACTOR_PREFIX
from hitl.policy.groups import RESERVED_NAMES, deciding, extra_groups
from hitl.settings import get_settings

if TYPE_CHECKING:
    from starlette.requests import Request

    from hitl.contracts.interrupts import Decider

ROLES: tuple[Role, ...] = get_args(Role)
DEV_TOKEN_PREFIX = "dev-"  # noqa: S105  (a prefix that marks published tokens, not a secret)
"""Tokens anyone can read in `.env.example`; see `check_dev_tokens`."""


def canonical(name: str) -> str:
    """A person's name in the one form names are compared in: Unicode NFKC, case-folded, stripped.

    `Supervisor1`, `supervisor1 ` and full-width `supervisor` + U+FF11 are all `supervisor1`.
    """
    return unicodedata.normalize("NFKC", name).casefold().strip()


def looks_like(name: str) -> str:
    """What `name` looks like (TR39 skeleton, `disarm.skeleton_key`): Cyrillic dze (U+0455) reads as `s`."""
    return skeleton_key(canonical(name))


def is_reserved(name: str) -> bool:
    """Whether `name` is the server's own (`system`, `unknown`) or a first-line reviewer's (`model:...`).

    However written (`SYSTEM`, full-width or a look-alike): a person never takes an actor's or a model's name.
    """
    seen = looks_like(name)
    return seen in {looks_like(kept) for kept in RESERVED_NAMES} or seen.startswith(looks_like(ACTOR_PREFIX))


def held_roles(role: Role) -> list[str]:
    """The roles someone with `role` holds: a supervisor is a reviewer too."""
    return ["reviewer", "supervisor"] if role == "supervisor" else [role]


def confusable(name: str) -> bool:
    """Whether `name` mixes writing systems (Latin `s` beside Cyrillic U+0455): a look-alike is refused."""
    return is_mixed_script(canonical(name))


class TokenRefused(Exception):  # noqa: N818  (a refusal, not a crash)
    """A bearer token that says who it is for, but may not come in; the message says why."""

    def __init__(self, message: str) -> None:
        """Refuse a token, telling its holder `message`."""
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class User:
    """An authenticated caller."""

    identity: str
    role: Role
    extra_groups: frozenset[str] = frozenset()
    """Teams beside their role (`finance`, `sre`): from HITL_USERS or the OIDC groups claim.

    A reviewer or supervisor decides for them; a requester is only in them (`run_by`), never a decider.
    """

    @property
    def roles(self) -> list[str]:
        """The user's roles, supervisors counting as reviewers too."""
        return held_roles(self.role)

    @property
    def groups(self) -> frozenset[str]:
        """Every group this user may decide as, their roles among them (the owner's questions aside).

        None for a requester, whatever teams they are in (`hitl.policy.groups.deciding`).
        """
        return deciding(self.memberships)

    @property
    def memberships(self) -> list[str]:
        """`roles`, then the extra groups in order: what the server tells a run its caller holds."""
        return [*self.roles, *sorted(self.extra_groups - set(self.roles))]

    @property
    def is_staff(self) -> bool:
        """Reviewers and supervisors may read threads they did not start."""
        return self.role in {"reviewer", "supervisor"}

    def may_decide(self, decider: Decider, owner: str | None) -> bool:
        """Whether this user may answer an interrupt that `decider` must answer."""
        if decider == "owner":
            return owner is not None and self.identity == owner
        return decider in self.groups


def from_memberships(identity: str, role: Role, held: object) -> User:
    """The user `identity` with `role` and the groups a list of `memberships` names beyond the roles.

    The inverse of `User.memberships` for what the server itself wrote (auth's user, a receipt);
    anything but a list of names adds no group.
    """
    names = {str(g) for g in held} if isinstance(held, list) else set()
    return User(identity=identity, role=role, extra_groups=frozenset(names - set(ROLES)))


class UserDirectory:
    """Bearer token to user, parsed from `name:role:token` or `name:role+group+group:token` entries."""

    def __init__(self, spec: str) -> None:
        """Parse `spec`; a malformed entry or an unknown role fails start-up loudly.

        Raises:
            ValueError: naming the bad entry.
        """
        self._by_token: dict[str, User] = {}
        seen: dict[str, str] = {}
        for raw in filter(None, (entry.strip() for entry in spec.split(","))):
            name, _, rest = raw.partition(":")
            held, _, token = rest.partition(":")
            role, *teams = held.split("+")
            if not (name and token) or role not in ROLES:
                msg = (
                    f"HITL_USERS entry {raw.split(':')[0]!r} must be name:role:token (or "
                    f"name:role+group+group:token) with role in {ROLES}"
                )
                raise ValueError(msg)
            groups = extra_groups(f"HITL_USERS entry {name!r}", teams)
            if is_reserved(name):
                kept = ", ".join(sorted(RESERVED_NAMES))
                msg = f"HITL_USERS names {name!r}, a name the server keeps for itself ({kept}): name another."
                raise ValueError(msg)
            if seen.setdefault(looks_like(name), name) != name or confusable(name):
                msg = (
                    f"HITL_USERS names {name!r}, which reads as {seen[looks_like(name)]!r} (or mixes "
                    "scripts): give each person one name, written one way."
                )
                raise ValueError(msg)
            self._by_token[token] = User(identity=name, role=role, extra_groups=groups)  # type: ignore[arg-type]

    def authenticate(self, token: str) -> User | None:
        """The user holding `token`, if any."""
        return self._by_token.get(token)

    def users(self) -> list[User]:
        """Every known user."""
        return list(self._by_token.values())

    def named(self, identity: str) -> User | None:
        """The user called `identity` (compared in `canonical` form), if known."""
        wanted = canonical(identity)
        return next((u for u in self._by_token.values() if canonical(u.identity) == wanted), None)

    def resembled_by(self, identity: str) -> User | None:
        """The user whose name `identity` looks like (same TR39 skeleton), if any."""
        wanted = looks_like(identity)
        return next((u for u in self._by_token.values() if looks_like(u.identity) == wanted), None)


def is_dev_token(token: str) -> bool:
    """Whether `token` is one of the published development tokens."""
    return token.startswith(DEV_TOKEN_PREFIX)


def is_loopback(host: str | None) -> bool:
    """Whether a request came from this machine (`request.client.host`)."""
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_dev_tokens(spec: str, *, dev_mode: bool) -> None:
    """Refuse published `dev-*` tokens in `spec` (HITL_USERS) unless in dev mode.

    Raises:
        ValueError: naming HITL_USERS, the users concerned and how to fix it.
    """
    entries = filter(None, (e.strip() for e in spec.split(",")))
    named = [entry.split(":", 1)[0] for entry in entries if is_dev_token(entry.split(":", 2)[-1])]
    if named and not dev_mode:
        msg = (
            f"HITL_USERS gives {', '.join(named)} a published development token ({DEV_TOKEN_PREFIX}*), "
            "and HITL_DEV_MODE is not true in the environment. Give each user a secret token in HITL_USERS "
            "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`), or run `make dev` "
            "(HITL_DEV_MODE=true, loopback only) for local development."
        )
        raise ValueError(msg)


@lru_cache(maxsize=1)
def directory() -> UserDirectory:
    """The process's user directory, from the settings (dev tokens only in dev mode).

    Raises:
        ValueError: for a malformed HITL_USERS, or dev tokens outside dev mode.
    """
    settings = get_settings()
    check_dev_tokens(settings.hitl_users, dev_mode=settings.hitl_dev_mode)
    return UserDirectory(settings.hitl_users)


def request_user(request: Request) -> User:
    """The caller of a custom route, as the server's auth resolved them (`enable_custom_route_auth`)."""
    return authenticated(request.user)


def authenticated(user: Any) -> User:  # noqa: ANN401  (the server's user proxy: an auth context's or a request's)
    """The `User` the server's auth resolved: identity, role and the groups in its permissions."""
    try:
        held = user["permissions"]
    except (KeyError, TypeError):
        held = None
    return from_memberships(user.identity, user["role"], held)
