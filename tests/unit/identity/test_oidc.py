"""OIDC bearer tokens (`server.identity.oidc`): what a token must be to name a user, and key rotation.

Keys are generated at test time and published by a stand-in issuer on loopback
(`tests/oidc_issuer.py`); the verifier fetches them over HTTP like it would from a provider.
"""

from __future__ import annotations

import json
import time

import jwt
import pytest

from hitl.settings import Settings
from server.identity.oidc import OidcConfig, OidcVerifier, looks_like_jwt, parse_role_mapping
from server.identity.oidc_keys import KEYS_KEPT_SECONDS, REFRESH_INTERVAL_SECONDS, KeySet
from server.identity.users import TokenRefused, User
from tests.oidc_issuer import AUDIENCE, ROLES, Issuer, _b64


class Clock:
    """Monotonic seconds the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def issuer():
    running = Issuer()
    running.add_key("k1")
    yield running
    running.close()


def config_for(issuer: Issuer, **changes: str) -> OidcConfig:
    env = {k.lower(): v for k, v in issuer.env().items()}
    config = OidcConfig.from_settings(Settings(**{**env, **changes}))  # type: ignore[arg-type]
    assert config is not None
    return config


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def verifier(issuer, clock):
    config = config_for(issuer)
    return OidcVerifier(config, KeySet(config.issuer, config.jwks_url, clock))


async def refused(verifier: OidcVerifier, token: str, match: str) -> None:
    with pytest.raises(TokenRefused, match=match):
        await verifier.verify(token)


async def test_a_valid_token_names_the_user_with_the_role_its_group_maps_to(issuer, verifier):
    """accept: sub is the name; `customers` is a requester, `support` a reviewer."""
    assert await verifier.verify(issuer.token("alice", ["customers"])) == User("alice", "requester")
    assert await verifier.verify(issuer.token("rita", "support")) == User("rita", "reviewer")


async def test_several_groups_give_the_highest_role_and_none_is_refused(issuer, verifier):
    """roles: support + finance-approvers is a supervisor; unmapped groups are refused, saying so."""
    token = issuer.token("boss", ["support", "staff", "finance-approvers"])
    assert await verifier.verify(token) == User("boss", "supervisor")
    await refused(verifier, issuer.token("eve", ["staff", "guests"]), "maps to no role in HITL_OIDC_ROLES")
    await refused(verifier, issuer.token("eve", []), "maps to no role")
    await refused(verifier, issuer.token("eve", {"finance-approvers": True}), "string or a list of strings")


async def test_expired_and_not_yet_valid_tokens_are_refused(issuer, verifier):
    """time: exp in the past and nbf in the future (beyond the 30 s leeway) are refused; within it, taken."""
    now = int(time.time())
    await refused(verifier, issuer.token(exp=now - 120), "expired")
    await refused(verifier, issuer.token(nbf=now + 600), "not valid yet")
    await refused(verifier, issuer.token(iat=now + 600), "not valid yet")
    assert (await verifier.verify(issuer.token(exp=now - 5))).identity == "alice"
    no_exp = issuer.claims("alice", ["customers"])
    del no_exp["exp"]
    await refused(verifier, _resign(issuer, no_exp), "no 'exp' claim")


async def test_another_audience_or_issuer_is_refused(issuer, verifier):
    """aud/iss: a token for another API, or from another issuer, is refused even with a good signature."""
    await refused(verifier, issuer.token(aud="another-api"), "another audience")
    await refused(verifier, issuer.token(aud=["another-api", "x"]), "another audience")
    assert (await verifier.verify(issuer.token(aud=["another-api", AUDIENCE]))).identity == "alice"
    await refused(verifier, issuer.token(iss="https://evil.example.com"), "another issuer")


async def test_forged_tokens_are_refused(issuer, verifier):
    """forgery: alg none, HS256 keyed with the public key, a tampered payload, a key not published."""
    await refused(verifier, issuer.unsigned(), "algorithm 'none' is refused")
    await refused(verifier, issuer.hs256_with_public_key(), "algorithm 'HS256' is refused")
    header, _, signature = issuer.token("alice", ["customers"]).split(".")
    payload = _b64(json.dumps(issuer.claims("alice", ["finance-approvers"])).encode())
    await refused(verifier, f"{header}.{payload}.{signature}", "signature does not verify")
    issuer.add_key("rogue", publish=False)
    await refused(verifier, issuer.token(kid="rogue", groups=["finance-approvers"]), "'rogue' is not among")
    await refused(verifier, "not.a-jwt.at-all", "not a well-formed JWT")


async def test_a_token_whose_algorithm_does_not_fit_its_key_is_refused(issuer, verifier):
    """key binding: an ES256 token naming the RSA key `k1` is refused before any signature check."""
    issuer.add_key("ec-unpublished", "EC", publish=False)
    token = issuer.token(kid="ec-unpublished")
    header = _b64(json.dumps({"alg": "ES256", "typ": "JWT", "kid": "k1"}).encode())
    forged = ".".join([header, *token.split(".")[1:]])
    await refused(verifier, forged, "does not fit its key 'k1'")


async def test_ec_and_eddsa_keys_are_accepted(issuer, verifier, clock):
    """algorithms: ES256 and EdDSA tokens from published keys verify."""
    issuer.add_key("ec1", "EC")
    issuer.add_key("ed1", "OKP")
    clock.now += REFRESH_INTERVAL_SECONDS
    assert (await verifier.verify(issuer.token("erin", kid="ec1"))).identity == "erin"
    assert (await verifier.verify(issuer.token("edda", kid="ed1"))).identity == "edda"


async def test_a_flood_of_unknown_kids_fetches_the_keys_once(issuer, verifier):
    """rate limit: 50 tokens with unpublished kids cause one fetch of the key set, not 50."""
    await verifier.verify(issuer.token())
    before = issuer.fetches
    for n in range(50):
        issuer.add_key(f"flood{n}", publish=False)
        await refused(verifier, issuer.token(kid=f"flood{n}"), "is not among")
    assert issuer.fetches - before <= 1


async def test_rotation_takes_a_new_key_without_restart_and_keeps_the_old_while_listed(
    issuer, verifier, clock
):
    """rotation: a new kid is fetched on sight; the old key works while listed, not after it is withdrawn."""
    old = issuer.token("alice", kid="k1")
    assert (await verifier.verify(old)).identity == "alice"
    issuer.add_key("k2")
    clock.now += REFRESH_INTERVAL_SECONDS
    new = issuer.token("bob", ["support"], kid="k2")
    assert await verifier.verify(new) == User("bob", "reviewer")
    assert (await verifier.verify(old)).identity == "alice"
    issuer.published.remove("k1")
    clock.now += KEYS_KEPT_SECONDS + 1
    try:
        await refused(verifier, old, "'k1' is not among")
        assert (await verifier.verify(new)).identity == "bob"
    finally:
        issuer.published.insert(0, "k1")


async def test_keys_are_found_through_the_discovery_document(issuer, clock):
    """discovery: no HITL_OIDC_JWKS_URL, so the jwks_uri of /.well-known/openid-configuration is used."""
    config = config_for(issuer, hitl_oidc_jwks_url="")
    verifier = OidcVerifier(config, KeySet(config.issuer, config.jwks_url, clock))
    assert (await verifier.verify(issuer.token("alice"))).identity == "alice"


async def test_an_unreachable_issuer_refuses_with_a_reason(issuer, clock):
    """outage: the key set cannot be fetched (nothing listens): the token is refused, saying why."""
    config = config_for(issuer, hitl_oidc_jwks_url="http://127.0.0.1:9/jwks.json")
    verifier = OidcVerifier(config, KeySet(config.issuer, config.jwks_url, clock))
    await refused(verifier, issuer.token(), "keys could not be read")


async def test_names_and_dotted_claims(issuer, clock):
    """claims: name from preferred_username, roles from realm_access.roles; `system` is no one's name."""
    config = config_for(
        issuer, hitl_oidc_name_claim="preferred_username", hitl_oidc_role_claim="realm_access.roles"
    )
    verifier = OidcVerifier(config, KeySet(config.issuer, config.jwks_url, clock))
    token = issuer.token(preferred_username="alice.b", realm_access={"roles": ["support"]})
    assert await verifier.verify(token) == User("alice.b", "reviewer")
    await refused(verifier, issuer.token(realm_access={"roles": ["support"]}), "does not name a user")
    system = issuer.token(preferred_username="system", realm_access={"roles": ["support"]})
    await refused(verifier, system, "cannot name a user")


def test_the_configuration_is_checked_at_start():
    """config: OIDC off without an issuer; half a configuration or a bad mapping names the variable."""
    assert OidcConfig.from_settings(Settings(hitl_oidc_issuer="")) is None
    with pytest.raises(ValueError, match="HITL_OIDC_ISSUER is empty"):
        OidcConfig.from_settings(Settings(hitl_oidc_audience="api"))
    with pytest.raises(ValueError, match="HITL_OIDC_AUDIENCE is empty"):
        OidcConfig.from_settings(Settings(hitl_oidc_issuer="https://idp.example.com", hitl_oidc_roles=ROLES))
    with pytest.raises(ValueError, match="https://"):
        OidcConfig.from_settings(
            Settings(hitl_oidc_issuer="http://idp.example.com", hitl_oidc_audience="a", hitl_oidc_roles=ROLES)
        )
    with pytest.raises(ValueError, match="HITL_OIDC_ROLES is empty"):
        OidcConfig.from_settings(Settings(hitl_oidc_issuer="https://idp.example.com", hitl_oidc_audience="a"))
    with pytest.raises(ValueError, match="role in"):
        parse_role_mapping("admins:admin")
    with pytest.raises(ValueError, match="two roles"):
        parse_role_mapping("staff:reviewer,staff:supervisor")
    assert parse_role_mapping("urn:acme:finance:supervisor") == {"urn:acme:finance": "supervisor"}


def test_only_jwt_shaped_tokens_go_to_the_issuer():
    """shape: static tokens (dev-*, url-safe secrets) are not JWTs; three base64url parts are."""
    assert not looks_like_jwt("dev-supervisor1")
    assert not looks_like_jwt("Zx3_secret-token")
    assert looks_like_jwt("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")


def _resign(issuer: Issuer, claims: dict) -> str:
    return jwt.encode(claims, issuer.private["k1"], algorithm="RS256", headers={"kid": "k1"})
