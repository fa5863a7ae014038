"""Identities from an OpenID Connect provider: bearer JWTs checked against the issuer's keys.

The verifier checks a token's signature (asymmetric algorithms only, key chosen by `kid`
from the issuer's cached JWKS), issuer, audience and validity, then reads the caller's name
and role from configured claims, and their groups (`finance`, `sre`) from `HITL_OIDC_GROUPS_CLAIM`.
It is not a login flow: tokens come from the provider.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import jwt

from hitl.policy.groups import is_team
from hitl.settings import get_settings
from server.identity.oidc_keys import ALGORITHMS, KeySet, check_url, public_key
from server.identity.users import ROLES, Role, TokenRefused, User, canonical, is_reserved

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hitl.settings import Settings

log = logging.getLogger(__name__)

LEEWAY_SECONDS = 30
"""Clock skew allowed on `exp`, `nbf` and `iat`."""
MAX_NAME_LENGTH = 200
MAX_GROUPS = 200
"""Groups read from one token; more are ignored (a policy names a handful)."""
TIME_CLAIMS = ("exp", "nbf", "iat")
"""Claims RFC 7519 says are NumericDate: a JSON number, never text."""
_JWT_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")


def looks_like_jwt(token: str) -> bool:
    """Whether `token` has a JWT's three base64url parts (an opaque static token does not)."""
    return _JWT_SHAPE.fullmatch(token) is not None


@dataclass(frozen=True)
class OidcConfig:
    """Which issuer, audience and keys to trust, and how claims become a `User`."""

    issuer: str
    audience: str
    jwks_url: str
    role_claim: str
    name_claim: str
    roles: Mapping[str, Role]
    groups_claim: str = ""
    """Dotted path of the claim whose values are the caller's groups; empty: OIDC users are in no group."""

    @classmethod
    def from_settings(cls, settings: Settings) -> OidcConfig | None:
        """The configuration in `settings`, or None when OIDC is off (no HITL_OIDC_ISSUER).

        Raises:
            ValueError: naming the HITL_OIDC_* variable that is missing or malformed.
        """
        if not settings.hitl_oidc_issuer:
            stray = [
                name
                for name, value in (
                    ("HITL_OIDC_AUDIENCE", settings.hitl_oidc_audience),
                    ("HITL_OIDC_JWKS_URL", settings.hitl_oidc_jwks_url),
                    ("HITL_OIDC_ROLES", settings.hitl_oidc_roles),
                    ("HITL_OIDC_GROUPS_CLAIM", settings.hitl_oidc_groups_claim),
                )
                if value
            ]
            if stray:
                msg = f"{', '.join(stray)} set but HITL_OIDC_ISSUER is empty: set the issuer to turn OIDC on."
                raise ValueError(msg)
            return None
        if not settings.hitl_oidc_audience:
            raise ValueError("HITL_OIDC_AUDIENCE is empty: set this server's client id or API identifier.")
        check_url("HITL_OIDC_ISSUER", settings.hitl_oidc_issuer)
        if settings.hitl_oidc_jwks_url:
            check_url("HITL_OIDC_JWKS_URL", settings.hitl_oidc_jwks_url)
        if not (settings.hitl_oidc_role_claim and settings.hitl_oidc_name_claim):
            raise ValueError("HITL_OIDC_ROLE_CLAIM and HITL_OIDC_NAME_CLAIM must name a claim.")
        return cls(
            issuer=settings.hitl_oidc_issuer,
            audience=settings.hitl_oidc_audience,
            jwks_url=settings.hitl_oidc_jwks_url,
            role_claim=settings.hitl_oidc_role_claim,
            name_claim=settings.hitl_oidc_name_claim,
            roles=parse_role_mapping(settings.hitl_oidc_roles),
            groups_claim=settings.hitl_oidc_groups_claim.strip(),
        )


def parse_role_mapping(spec: str) -> dict[str, Role]:
    """`value:role` entries (the value may hold colons itself) to a mapping.

    Raises:
        ValueError: for an empty mapping, an unknown role, or a value given two roles.
    """
    mapping: dict[str, Role] = {}
    for entry in filter(None, (e.strip() for e in spec.split(","))):
        value, _, role = entry.rpartition(":")
        if not value or role not in ROLES:
            msg = f"HITL_OIDC_ROLES entry {entry!r} must be value:role with role in {ROLES}"
            raise ValueError(msg)
        if mapping.get(value, role) != role:
            msg = f"HITL_OIDC_ROLES gives {value!r} two roles ({mapping[value]}, {role})"
            raise ValueError(msg)
        mapping[value] = role  # type: ignore[assignment]
    if not mapping:
        raise ValueError("HITL_OIDC_ROLES is empty: map at least one claim value to a role.")
    return mapping


class OidcVerifier:
    """Turns a JWT from the configured issuer into a `User`, or refuses it with a reason."""

    def __init__(self, config: OidcConfig, keys: KeySet | None = None) -> None:
        """Verify tokens against `config` (its issuer's keys, unless `keys` is given)."""
        self.config = config
        self.keys = keys or KeySet(config.issuer, config.jwks_url)

    async def verify(self, token: str) -> User:
        """The user a valid token names, with the highest role its role claim maps to.

        Raises:
            TokenRefused: saying what is wrong with the token.
        """
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise TokenRefused("This bearer token is not a well-formed JWT.") from None
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in ALGORITHMS:
            msg = f"Token algorithm {alg!r} is refused; accepted: {', '.join(sorted(ALGORITHMS))}."
            raise TokenRefused(msg)
        if not isinstance(kid, str):
            raise TokenRefused("This token names no signing key (kid).")
        jwk = await self.keys.jwk(kid)
        if jwk is None:
            msg = f"This token's key {kid!r} is not among {self.config.issuer}'s published keys."
            raise TokenRefused(msg)
        claims = self._claims(token, public_key(jwk, alg))
        for name in TIME_CLAIMS:  # PyJWT takes "9999999999" for a number; the JWT spec does not
            if name in claims and (
                isinstance(claims[name], bool) or not isinstance(claims[name], int | float)
            ):
                msg = f"This token's {name!r} claim must be a number of seconds, not {claims[name]!r}."
                raise TokenRefused(msg)
        return User(
            identity=canonical(self._name(claims)), role=self._role(claims), extra_groups=self._groups(claims)
        )

    def _claims(self, token: str, key: jwt.PyJWK) -> dict[str, Any]:
        try:
            return jwt.decode(
                token,
                key,
                algorithms=[key.algorithm_name],
                audience=self.config.audience,
                issuer=self.config.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud"], "enforce_minimum_key_length": True},
            )
        except jwt.ExpiredSignatureError:
            raise TokenRefused("This token has expired; sign in again at the identity provider.") from None
        except jwt.ImmatureSignatureError:
            raise TokenRefused("This token is not valid yet (nbf/iat in the future); check clocks.") from None
        except jwt.InvalidAudienceError:
            msg = f"This token is for another audience; this server accepts {self.config.audience!r}."
            raise TokenRefused(msg) from None
        except jwt.InvalidIssuerError:
            msg = f"This token comes from another issuer; this server accepts {self.config.issuer!r}."
            raise TokenRefused(msg) from None
        except jwt.MissingRequiredClaimError as missing:
            msg = f"This token has no {missing.claim!r} claim."
            raise TokenRefused(msg) from None
        except jwt.InvalidSignatureError:
            raise TokenRefused("This token's signature does not verify.") from None
        except (jwt.InvalidTokenError, jwt.InvalidKeyError) as error:
            msg = f"This token is refused: {error}."
            raise TokenRefused(msg) from None

    def _name(self, claims: Mapping[str, Any]) -> str:
        name = _claim(claims, self.config.name_claim)
        if not isinstance(name, str) or not name.strip() or not name.isprintable():
            msg = f"This token's {self.config.name_claim!r} claim does not name a user."
            raise TokenRefused(msg)
        if len(name) > MAX_NAME_LENGTH or is_reserved(name):  # `System`, `Unknown`: the server's own
            msg = f"This token's {self.config.name_claim!r} claim ({name[:40]!r}…) cannot name a user here."
            raise TokenRefused(msg)
        return name

    def _role(self, claims: Mapping[str, Any]) -> Role:
        value = _claim(claims, self.config.role_claim)
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            msg = f"This token's {self.config.role_claim!r} claim must be a string or a list of strings."
            raise TokenRefused(msg)
        roles = [self.config.roles[v] for v in values if v in self.config.roles]
        if not roles:
            msg = (
                f"This token is valid, but its {self.config.role_claim!r} claim "
                f"({_shown(values)}) maps to no role in HITL_OIDC_ROLES; "
                "ask for access to this server."
            )
            raise TokenRefused(msg)
        return max(roles, key=ROLES.index)

    def _groups(self, claims: Mapping[str, Any]) -> frozenset[str]:
        """The groups claim's team names; a role, `owner`, `system`, a malformed value or shape is ignored."""
        if not self.config.groups_claim:
            return frozenset()
        value = _claim(claims, self.config.groups_claim)
        values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        kept = [v for v in values[:MAX_GROUPS] if is_team(v)]
        if len(kept) < len(values):
            log.info("OIDC groups claim: ignored %d value(s) that are no group name", len(values) - len(kept))
        return frozenset(kept)


def _shown(values: list[str], most: int = 10) -> str:
    """Claim values for a message: the first `most`, then how many more."""
    more = f", and {len(values) - most} more" if len(values) > most else ""
    return ", ".join(values[:most]) + more if values else "empty"


def _claim(claims: Mapping[str, Any], path: str) -> object:
    """The claim at a dotted `path` (`realm_access.roles`), or None."""
    value: object = claims
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


@lru_cache(maxsize=1)
def provider() -> OidcVerifier | None:
    """The process's OIDC verifier, or None when HITL_OIDC_ISSUER is empty.

    Raises:
        ValueError: for an incomplete or malformed HITL_OIDC_* configuration.
    """
    config = OidcConfig.from_settings(get_settings())
    return OidcVerifier(config) if config else None
