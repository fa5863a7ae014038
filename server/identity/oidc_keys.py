"""The issuer's signing keys (JWKS): fetched over https (or loopback http), cached by `kid`, refreshed.

A token naming an unknown `kid` fetches the set again (at most every `REFRESH_INTERVAL_SECONDS`),
so the issuer can rotate keys without a restart; a key that left the set stays usable for
`KEYS_KEPT_SECONDS`. Only asymmetric algorithms match a key. Not for checking a token's claims (`oidc`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
import jwt

from server.http import outgoing
from server.identity.users import TokenRefused

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)

ALGORITHMS_BY_KEY_TYPE: Mapping[str, frozenset[str]] = {
    "RSA": frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}),
    "EC": frozenset({"ES256", "ES384", "ES512"}),
    "OKP": frozenset({"EdDSA"}),
}
"""The only algorithms accepted, by the key type that signs them: `none` and HMAC never are."""
ALGORITHMS = frozenset().union(*ALGORITHMS_BY_KEY_TYPE.values())
CURVES: Mapping[str, frozenset[str]] = {
    "ES256": frozenset({"P-256"}),
    "ES384": frozenset({"P-384"}),
    "ES512": frozenset({"P-521"}),
    "EdDSA": frozenset({"Ed25519", "Ed448"}),
}


FETCH_TIMEOUT_SECONDS = 5.0


MAX_DOCUMENT_BYTES = 256_000
"""Largest key set or discovery document read from the issuer."""


REFRESH_INTERVAL_SECONDS = 30.0
"""At most one fetch of the key set this often, however many unknown `kid`s arrive."""


KEYS_KEPT_SECONDS = 3_600.0
"""The key set is fetched again after this long, so a key the issuer withdrew stops working."""


def check_url(name: str, url: str) -> None:
    """Refuse (ValueError) a URL of the issuer's that is not https, or http on loopback."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return
    loopback = host == "localhost" or _is_loopback_address(host)
    if parts.scheme == "http" and loopback:
        return
    msg = f"{name} must be an https:// URL (http:// only on loopback), got {url!r}"
    raise ValueError(msg)


def _is_loopback_address(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class KeySet:
    """The issuer's signing keys by `kid`, fetched without blocking and cached.

    An unknown `kid` triggers a fetch (the issuer rotated its keys), at most once per
    `REFRESH_INTERVAL_SECONDS`; the set is also fetched again once `KEYS_KEPT_SECONDS` old.
    A failed fetch keeps the keys already known.
    """

    def __init__(self, issuer: str, jwks_url: str, clock: Callable[[], float] = time.monotonic) -> None:
        """Keys of `issuer`, at `jwks_url` (empty: from its discovery document); `clock` is monotonic."""
        self._issuer = issuer
        self._clock = clock
        self._jwks_url = jwks_url
        self._keys: dict[str, dict[str, Any]] = {}
        self._fetched_at: float | None = None
        self._tried_at: float | None = None
        self._lock = asyncio.Lock()
        self.fetches = 0
        """How many times the key set was fetched (for tests and logs)."""

    async def jwk(self, kid: str) -> dict[str, Any] | None:
        """The published key named `kid`, after one refresh if it is unknown or the set is old."""
        if kid not in self._keys or self._old():
            async with self._lock:
                if (kid not in self._keys or self._old()) and self._may_try():
                    await self._refresh()
        if self._fetched_at is None:  # the reason is in the server's log, not told to callers
            raise TokenRefused("The identity provider's keys could not be read; try again shortly.")
        return self._keys.get(kid)

    def _old(self) -> bool:
        return self._fetched_at is None or self._clock() - self._fetched_at > KEYS_KEPT_SECONDS

    def _may_try(self) -> bool:
        return self._tried_at is None or self._clock() - self._tried_at >= REFRESH_INTERVAL_SECONDS

    async def _refresh(self) -> None:
        self._tried_at = self._clock()
        try:
            if not self._jwks_url:
                self._jwks_url = await self._discover()
            keys = _key_list(await fetch_json(self._jwks_url), self._jwks_url)
        except (httpx.HTTPError, ValueError, TypeError) as error:
            log.warning("OIDC: fetching the issuer's keys failed (known keys kept): %r", error)
            return
        self.fetches += 1
        self._keys = {k["kid"]: k for k in keys if isinstance(k, dict) and isinstance(k.get("kid"), str)}
        self._fetched_at = self._clock()

    async def _discover(self) -> str:
        issuer = self._issuer
        document = await fetch_json(f"{issuer.rstrip('/')}/.well-known/openid-configuration")
        jwks_url = document.get("jwks_uri")
        if document.get("issuer") != issuer or not isinstance(jwks_url, str):
            msg = f"{issuer}'s discovery document names another issuer or no jwks_uri"
            raise ValueError(msg)
        check_url("the issuer's jwks_uri", jwks_url)
        return jwks_url


async def fetch_json(url: str) -> dict[str, Any]:
    """GET a JSON object of at most `MAX_DOCUMENT_BYTES`, without blocking the event loop.

    Raises:
        httpx.HTTPError: when the issuer does not answer, or answers with an error.
        ValueError: for an answer too big, or not a JSON object.
    """
    client = await asyncio.to_thread(new_client)  # loading CA certificates reads files
    body = bytearray()
    async with client, client.stream("GET", url) as response:
        response.raise_for_status()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_DOCUMENT_BYTES:
                msg = f"{url} answered more than {MAX_DOCUMENT_BYTES} bytes"
                raise ValueError(msg)
    document = json.loads(body)
    if not isinstance(document, dict):
        msg = f"{url} did not answer a JSON object"
        raise TypeError(msg)
    return document


def _key_list(document: Mapping[str, Any], url: str) -> list[Any]:
    keys = document.get("keys")
    if not isinstance(keys, list):
        msg = f"{url} has no `keys` list"
        raise TypeError(msg)
    return keys


def new_client() -> httpx.AsyncClient:
    """An HTTP client for the issuer's documents: a short timeout, no redirects followed."""
    return httpx.AsyncClient(timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=False, verify=outgoing.tls())


def public_key(jwk: Mapping[str, Any], alg: str) -> jwt.PyJWK:
    """The published key `jwk` bound to `alg`, refused unless it is a signing key made for `alg`."""
    kty, crv = jwk.get("kty"), jwk.get("crv")
    fits = (
        alg in ALGORITHMS_BY_KEY_TYPE.get(str(kty), frozenset())
        and jwk.get("alg", alg) == alg
        and jwk.get("use", "sig") == "sig"
        and (alg not in CURVES or crv in CURVES[alg])
    )
    if not fits:
        msg = (
            f"This token's algorithm {alg} does not fit its key {jwk.get('kid')!r} ({kty} {jwk.get('alg')})."
        )
        raise TokenRefused(msg)
    try:
        return jwt.PyJWK(dict(jwk), algorithm=alg)
    except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError) as error:
        msg = f"The issuer's key {jwk.get('kid')!r} could not be read: {error}."
        raise TokenRefused(msg) from None
