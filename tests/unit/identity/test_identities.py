"""People's names: one canonical form, look-alikes refused, time claims typed (issue 29, finding 6).

`Supervisor1`, `supervisor1 ` and full-width `supervisor` + U+FF11 are one person; `supervisor1`
with a Cyrillic dze (U+0455) mixes scripts and is refused; an OIDC name that reads like a
`HITL_USERS` name is refused at sign-in: a static supervisor1 and an OIDC "Supervisor1" are
never two approvers.
"""

from __future__ import annotations

import time

import pytest

from hitl.settings import get_settings
from server.identity import oidc, users
from server.identity.oidc import OidcVerifier
from server.identity.oidc_keys import KeySet
from server.identity.tokens import identify
from server.identity.users import TokenRefused, User, UserDirectory, canonical
from tests.oidc_issuer import Issuer
from tests.unit.identity.test_oidc import Clock, config_for

LOOK_ALIKES = ["Supervisor1", "supervisor1 ", "\u0455upervisor1", "supervisor\uff11", " SUPERVISOR1"]


@pytest.mark.parametrize("name", LOOK_ALIKES, ids=repr)
def test_look_alike_spellings_have_one_canonical_or_refused_form(name):
    """NFKC + casefold + strip make the spellings one name; the Cyrillic one mixes scripts."""
    if "\u0455" in name:
        assert users.confusable(name)
        assert users.looks_like(name) == "supervisor1"
    else:
        assert canonical(name) == "supervisor1"


def test_the_directory_finds_people_in_canonical_form_and_refuses_two_spellings():
    """named() compares canonically; HITL_USERS naming supervisor1 twice (case, dze) stops the start."""
    directory = UserDirectory("supervisor1:supervisor:t1,requester1:requester:t2")
    assert directory.named("Supervisor1 ") == User("supervisor1", "supervisor")
    for other in ("Supervisor1", "\u0455upervisor1"):
        with pytest.raises(ValueError, match="one name"):
            UserDirectory(f"supervisor1:supervisor:t1,{other}:reviewer:t3")


@pytest.fixture
def oidc_on(monkeypatch):
    issuer = Issuer()
    issuer.add_key("k1")
    for key, value in issuer.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HITL_USERS", "supervisor1:supervisor:static-token-1")
    get_settings.cache_clear()
    users.directory.cache_clear()
    oidc.provider.cache_clear()
    config = config_for(issuer)
    monkeypatch.setattr(
        oidc, "provider", lambda: OidcVerifier(config, KeySet(config.issuer, config.jwks_url, Clock()))
    )
    yield issuer
    issuer.close()
    get_settings.cache_clear()
    users.directory.cache_clear()


@pytest.mark.parametrize("name", LOOK_ALIKES, ids=repr)
async def test_an_oidc_name_that_reads_as_a_static_person_is_refused(oidc_on, name):
    """sign-in: every spelling of supervisor1 from the identity provider is refused (no second approver)."""
    with pytest.raises(TokenRefused, match=r"reads as 'supervisor1'|mixes writing systems"):
        await identify(oidc_on.token(name, ["finance-approvers"]))


async def test_oidc_spellings_of_one_name_are_one_person(oidc_on):
    """Alice, alice and ' ALICE' from the provider are the same identity: alice."""
    found = {(await identify(oidc_on.token(n, ["support"]))).identity for n in ("Alice", "alice", " ALICE")}
    assert found == {"alice"}


@pytest.mark.parametrize("claim", ["exp", "nbf", "iat"])
async def test_time_claims_must_be_numbers(oidc_on, claim):
    """a string (or boolean) exp, nbf or iat is refused, though PyJWT would read "9999999999"."""
    value = str(int(time.time()) + (3600 if claim == "exp" else -10))
    with pytest.raises(TokenRefused, match=rf"'{claim}' claim must be a number"):
        await identify(oidc_on.token("alice", ["support"], **{claim: value}))


@pytest.mark.parametrize(
    "name", ["system", "System", "SYSTEM", "\uff53ystem", "\u0455ystem", "unknown", "Unknown", "UNKNOWN"]
)
def test_hitl_users_may_not_name_a_reserved_actor(name):
    """HITL_USERS naming `system` or `unknown` (the server's own), however spelled, stops the start."""
    with pytest.raises(ValueError, match=r"a name the server keeps for itself \(system, unknown\)"):
        UserDirectory(f"{name}:supervisor:t-system")
