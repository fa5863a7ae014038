"""The caller's token, and the person behind it: one reader of the headers, one way to a `User`.

Every door reads a request's token here (the auth handler, the app's guard, the middleware
that check bodies), so no two of them can read one request as two people. A token is a
`HITL_USERS` token, else an OIDC JWT (`server.identity.oidc`). Not for what the person may do.
"""

from __future__ import annotations

from langgraph_sdk import Auth

from server.identity import oidc
from server.identity.users import TokenRefused, User, confusable, directory


def check_configuration() -> None:
    """Read the users and the OIDC settings once, at start: a malformed one stops the server.

    Raises:
        ValueError: for a malformed HITL_USERS or HITL_OIDC_* setting, or dev tokens outside dev mode.
    """
    directory()
    oidc.provider()


def token_of(authorization: str | None, headers: dict[bytes, bytes]) -> str | None:
    """The caller's token: `Authorization: Bearer <token>`, or `x-api-key: <token>`.

    The one reader of a request's token: the auth handler, `server.http.app.TokenRequired` and the
    middleware that check bodies (`server.admission.state_writes`, `server.admission.assistants`) all call
    it, so no two of them can read a request as two different people. LangGraph's SDKs send
    their `apiKey` as `x-api-key` (Agent Chat UI, LangGraph Studio): the same users and rules
    apply. Both headers at once must carry the same token; an `Authorization` of any scheme
    but Bearer (`Basic ...`) is refused rather than skipped.

    Raises:
        Auth.exceptions.HTTPException: 401 for another scheme, or two headers with different tokens.
    """
    scheme, _, bearer = (authorization or "").strip().partition(" ")
    if authorization and authorization.strip() and scheme.lower() != "bearer":
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="Authorization must be `Bearer <token>` (or send x-api-key: <token>)."
        )
    given = bearer.strip()
    api_key = (headers.get(b"x-api-key") or b"").decode("latin-1").strip()
    if given and api_key and given != api_key:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="Authorization and x-api-key carry different tokens; send one."
        )
    return given or api_key or None


async def identify(token: str) -> User | None:
    """The user behind a bearer token: a `HITL_USERS` token, else a JWT of the OIDC issuer.

    Returns None for a token neither knows (or any token when OIDC is off and HITL_USERS lacks it).

    An OIDC name is taken in `canonical` form (NFKC, case-folded, stripped), so its spellings
    are one person; one that mixes scripts, or reads like a `HITL_USERS` name, is refused.

    Raises:
        TokenRefused: for a JWT the issuer did not sign, that expired, is for another audience,
            maps to no role, or names (or looks like) a user that HITL_USERS already lists.
    """
    static = directory().authenticate(token)
    verifier = oidc.provider()
    if static is not None or verifier is None or not oidc.looks_like_jwt(token):
        return static
    user = await verifier.verify(token)
    if confusable(user.identity):
        msg = f"The identity provider names you {user.identity!r}, which mixes writing systems."
        raise TokenRefused(msg)
    if (static := directory().resembled_by(user.identity)) is not None:
        msg = (
            f"The identity provider names you {user.identity!r}, which reads as {static.identity!r}, a name "
            "HITL_USERS gives to a static user; names from the provider and from HITL_USERS must differ."
        )
        raise TokenRefused(msg)
    return user
