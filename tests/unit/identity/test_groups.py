"""Groups (`hitl.policy.groups`, `server.identity.users`): teams that decide, beside the three roles.

A person's groups come from `HITL_USERS` (`name:role+group+group:token`) and the OIDC groups claim;
a role is a group of its own, so entries without groups decide exactly as before. A bad group name
in HITL_USERS or a policy fails loudly, naming the field; from a token it is ignored. A policy
naming a group nobody is in stops the start, naming the agent, the tool and the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from hitl.policy import allowances
from hitl.policy.deadlines import Deadline, escalates_to
from hitl.policy.gates import ToolGate
from hitl.policy.groups import RESERVED_NAMES, Tiers, check_decider, deciding, group_map, is_group_name
from hitl.policy.overrides import PolicyCatalog
from hitl.policy.served import AgentCard, run_by_roles
from hitl.settings import Settings, get_settings
from server.identity import answerers, oidc, users
from server.identity.users import User, UserDirectory, authenticated, from_memberships
from tests.oidc_issuer import Issuer

if TYPE_CHECKING:
    from collections.abc import Iterator

FINANCE = Tiers("amount", "finance", ((500, "finance-leads"),))


@pytest.fixture
def people(monkeypatch) -> Iterator[Any]:
    """`people("a:reviewer+finance:t1,...", groups_claim=...)` sets HITL_USERS (and OIDC) for the test."""

    def set_users(spec: str, **oidc_env: str) -> None:
        monkeypatch.setenv("HITL_USERS", spec)
        monkeypatch.delenv("HITL_OIDC_ISSUER", raising=False)
        for name, value in oidc_env.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        users.directory.cache_clear()
        oidc.provider.cache_clear()

    yield set_users
    get_settings.cache_clear()
    users.directory.cache_clear()
    oidc.provider.cache_clear()


def card(name: str = "support", run_by: frozenset[str] | None = None, **gates: ToolGate) -> AgentCard:
    return AgentCard(name=name, catalog=PolicyCatalog.of(name, [(list(gates), gates)]), run_by=run_by)


def test_hitl_users_groups_are_read_and_old_entries_decide_as_before():
    """HITL_USERS: `role+group` adds groups; a plain entry's groups are its roles; supervisors review too."""
    directory = UserDirectory("ana:reviewer+finance+finance-leads:t1,sam:reviewer+sre:t2,boss:supervisor:t3")
    ana, sam, boss = (directory.authenticate(t) for t in ("t1", "t2", "t3"))
    assert ana == User("ana", "reviewer", frozenset({"finance", "finance-leads"}))
    assert ana.groups == {"reviewer", "finance", "finance-leads"}
    assert boss == User("boss", "supervisor")
    assert boss.groups == {"reviewer", "supervisor"}
    assert ana.may_decide("finance-leads", None)
    assert not sam.may_decide("finance", None)
    assert sam.may_decide("sre", None)
    assert not boss.may_decide("finance", None), "a supervisor is in no team by rank"
    assert boss.may_decide("reviewer", None)
    assert not ana.may_decide("owner", "carol")
    assert ana.may_decide("owner", "ana")


def test_a_token_may_hold_colons_and_the_groups_field_is_unambiguous():
    """token: everything after the second colon, as before (`+` marks groups in the role field only)."""
    directory = UserDirectory("ana:reviewer+finance:se:cr+et")
    assert directory.authenticate("se:cr+et") == User("ana", "reviewer", frozenset({"finance"}))


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("ana:reviewer+Finance:t", "'Finance'"),
        ("ana:reviewer+fin ance:t", "'fin ance'"),
        ("ana:reviewer+" + "f" * 65 + ":t", "at most 64"),
        ("ana:requester+supervisor:t", "'supervisor'"),
        ("ana:reviewer+owner:t", "'owner'"),
        ("ana:reviewer+:t", "''"),
    ],
)
def test_a_bad_group_in_hitl_users_fails_naming_the_entry_and_the_group(entry, why):
    """refuse: a malformed group, a role (that would make a requester a supervisor) or `owner`."""
    with pytest.raises(ValueError, match=rf"HITL_USERS entry 'ana' lists group {why}|{why}"):
        UserDirectory(entry)


def test_memberships_round_trip_through_the_servers_own_records():
    """auth's permissions and a receipt's roles: the roles first, then the groups; read back the same."""
    ana = User("ana", "supervisor", frozenset({"finance-leads"}))
    assert ana.memberships == ["reviewer", "supervisor", "finance-leads"]
    assert from_memberships("ana", "supervisor", ana.memberships) == ana
    assert from_memberships("ana", "reviewer", "finance") == User("ana", "reviewer")

    class Proxy(dict):
        identity = "ana"

    assert authenticated(Proxy(role="supervisor", permissions=ana.memberships)) == ana
    assert authenticated(Proxy(role="reviewer")) == User("ana", "reviewer")


def test_group_names_and_policy_deciders_are_checked():
    """policy: a decider is `owner` or a well-formed group; a malformed one fails naming where."""
    assert is_group_name("finance-leads.eu_2")
    assert not is_group_name("Finance")
    assert not is_group_name("x" * 65)
    with pytest.raises(ValueError, match="decider names 'Finance'"):
        ToolGate(allowed_decisions=("approve",), decider="Finance")
    with pytest.raises(ValueError, match="Tiers above 500 names 'leads!'"):
        Tiers("amount", "finance", ((500, "leads!"),))
    with pytest.raises(ValueError, match="must rise"):
        Tiers("amount", "finance", ((500, "a"), (100, "b")))
    assert check_decider("x", "owner") == "owner"


def test_tiers_choose_the_group_by_amount_and_unreadable_args_go_to_a_supervisor():
    """finance up to 500, finance-leads above; no amount: a supervisor, as for any decider chosen by args."""
    gate = ToolGate(allowed_decisions=("approve",), decider=FINANCE)
    assert gate.required_role({"amount": 500}) == "finance"
    assert gate.required_role({"amount": 501}) == "finance-leads"
    assert gate.required_role({}) == "supervisor"
    assert (
        ToolGate(allowed_decisions=("approve",), decider=lambda _a: "Nope!").required_role({}) == "supervisor"
    )


def test_an_escalation_goes_to_the_group_the_deadline_names():
    """deadline: escalate_to is stamped into the value (only when not a supervisor) and read back."""
    plain = Deadline(60, "escalate", escalated_seconds=60).stamp()
    assert "escalate_to" not in plain
    assert escalates_to(plain) == "supervisor"
    leads = Deadline(60, "escalate", escalated_seconds=60, escalate_to="finance-leads").stamp()
    assert escalates_to(leads) == "finance-leads"
    assert escalates_to({"escalate_to": "owner"}) == "supervisor"
    assert escalates_to({"escalate_to": "Not A Group"}) == "supervisor"
    with pytest.raises(ValueError, match="escalate_to names 'owner'"):
        Deadline(60, "escalate", escalated_seconds=60, escalate_to="owner")


def test_a_group_nobody_is_in_stops_the_start_naming_agent_tool_and_group(people):
    """start-up: 'finance' with nobody in it, a Tiers group nobody is in, a run_by group: each named."""
    people("ana:reviewer+finance:t1,boss:supervisor:t2")
    answerers.check_policies([card(issue_refund=ToolGate(allowed_decisions=("approve",), decider="finance"))])
    with pytest.raises(
        answerers.UnanswerablePolicyError,
        match=r"support: issue_refund may be decided \(by its arguments\) by 'finance-leads', a group nobody",
    ):
        answerers.check_policies(
            [card(issue_refund=ToolGate(allowed_decisions=("approve",), decider=FINANCE))]
        )
    with pytest.raises(
        answerers.UnanswerablePolicyError, match="support: deploy is decided by 'sre', a group"
    ):
        answerers.check_policies([card(deploy=ToolGate(allowed_decisions=("approve",), decider="sre"))])
    with pytest.raises(answerers.UnanswerablePolicyError, match="ops may be run by sre, and nobody"):
        answerers.check_policies([card("ops", run_by=frozenset({"sre"}))])
    overdue = Deadline(60, "escalate", escalated_seconds=60, escalate_to="finance-leads")
    with pytest.raises(
        answerers.UnanswerablePolicyError, match="support: issue_refund escalates to 'finance-leads', a group"
    ):
        answerers.check_policies(
            [card(issue_refund=ToolGate(allowed_decisions=("approve",), decider="finance", deadline=overdue))]
        )
    people("ana:reviewer+finance:t1,lee:reviewer+finance-leads:t2,boss:supervisor:t3,sam:requester+sre:t4")
    answerers.check_policies(
        [
            card(issue_refund=ToolGate(allowed_decisions=("approve",), decider=FINANCE)),
            card("ops", run_by=frozenset({"sre"})),
        ]
    )


def test_with_an_oidc_groups_claim_any_group_may_be_someones(people):
    """OIDC on with HITL_OIDC_GROUPS_CLAIM: groups are open-ended; the roles still need someone."""
    issuer = Issuer()
    issuer.add_key("k1")
    try:
        people("boss:supervisor:t1", **issuer.env(), HITL_OIDC_GROUPS_CLAIM="teams")
        answerers.check_policies([card(deploy=ToolGate(allowed_decisions=("approve",), decider="sre"))])
        assert answerers.answerable(["sre"], None)
        assert "owner" not in answerers.possible_deciders()
        people("boss:supervisor:t1", **issuer.env(), HITL_OIDC_GROUPS_CLAIM="")
        with pytest.raises(answerers.UnanswerablePolicyError, match="'sre', a group nobody here is in"):
            answerers.check_policies([card(deploy=ToolGate(allowed_decisions=("approve",), decider="sre"))])
    finally:
        issuer.close()


async def test_the_oidc_groups_claim_gives_groups_and_bad_values_are_ignored():
    """OIDC: `org.teams` (a dotted path) gives finance and sre; a role, owner, system, a bad name: nothing."""
    issuer = Issuer()
    issuer.add_key("k1")
    try:
        env = {k.lower(): v for k, v in issuer.env().items()}
        config = oidc.OidcConfig.from_settings(Settings(**env, hitl_oidc_groups_claim="org.teams"))  # type: ignore[arg-type]
        assert config is not None
        verifier = oidc.OidcVerifier(config)
        teams = ["finance", "sre", "supervisor", "owner", "system", "unknown", "Bad Name", 7]
        user = await verifier.verify(issuer.token("rita", "support", org={"teams": teams}))
        assert user == User("rita", "reviewer", frozenset({"finance", "sre"}))
        assert not user.may_decide("supervisor", None), "a groups claim never gives a role"
        one = await verifier.verify(issuer.token("rita", "support", org={"teams": "finance"}))
        assert one.extra_groups == {"finance"}
        none = await verifier.verify(issuer.token("rita", "support", org={"teams": {"finance": True}}))
        assert none.extra_groups == frozenset()
        plain = oidc.OidcVerifier(config_without_groups(env))
        assert (
            await plain.verify(issuer.token("rita", "support", org={"teams": ["finance"]}))
        ).extra_groups == set()
    finally:
        issuer.close()


def config_without_groups(env: dict[str, str]) -> oidc.OidcConfig:
    config = oidc.OidcConfig.from_settings(Settings(**env))  # type: ignore[arg-type]
    assert config is not None
    return config


def test_an_allowance_covers_group_calls_only_for_a_granter_in_that_group():
    """allowance: a finance granter covers finance calls, a supervisor by rank does not; roles rank."""
    finance = {"granted_role": "reviewer", "granted_groups": ["finance"]}
    assert allowances.could_decide(finance, "finance")
    assert allowances.could_decide(finance, "reviewer")
    assert not allowances.could_decide(finance, "finance-leads")
    assert not allowances.could_decide(finance, "supervisor")
    assert not allowances.could_decide({"granted_role": "supervisor"}, "finance")
    assert allowances.could_decide({"granted_role": "supervisor"}, "reviewer")


def test_a_requester_in_a_team_decides_nothing_and_still_runs_the_teams_agents():
    """requester + finance: no deciding group (finance, requester), the owner's own questions only.

    Issue 54, finding 4: a requester is never a decider. Their teams still count for `run_by` (running
    an agent is no decision) and stay in their memberships (what a receipt and a run say they hold).
    """
    carla = User("carla", "requester", frozenset({"finance"}))
    assert carla.groups == frozenset()
    assert deciding(carla.memberships) == frozenset()
    assert not carla.may_decide("finance", None)
    assert not carla.may_decide("requester", None)
    assert carla.may_decide("owner", "carla")
    assert not carla.may_decide("owner", "ana")
    assert carla.memberships == ["requester", "finance"]
    assert card("ops", run_by=frozenset({"finance"})).may_run(carla.memberships)
    ana = User("ana", "reviewer", frozenset({"finance"}))
    assert ana.groups == deciding(ana.memberships) == {"reviewer", "finance"}
    assert deciding(["supervisor", "reviewer", "sre"]) == {"supervisor", "reviewer", "sre"}


def test_a_group_only_requesters_are_in_stops_the_start_and_is_answered_by_nobody(people):
    """start-up: finance of requesters only is "a group nobody may decide for"; the watcher: not answerable.

    A run_by group of requesters is still someone's (they may run it); an OIDC groups claim makes any
    group possible only when the provider may sign in a reviewer or a supervisor.
    """
    people("carla:requester+finance:t1,boss:supervisor:t2")
    finance = card(issue_refund=ToolGate(allowed_decisions=("approve",), decider="finance"))
    with pytest.raises(
        answerers.UnanswerablePolicyError,
        match=r"support: issue_refund is decided by 'finance', a group nobody may decide for \(only "
        r"requesters are in it; requesters never decide\)",
    ):
        answerers.check_policies([finance])
    assert not answerers.answerable(["finance"], None)
    assert answerers.answerable(["supervisor"], None)
    answerers.check_policies([card("ops", run_by=frozenset({"finance"}))])

    issuer = Issuer()
    issuer.add_key("k1")
    try:
        customers_only = {**issuer.env(), "HITL_OIDC_ROLES": "customers:requester"}
        people("boss:supervisor:t2", **customers_only, HITL_OIDC_GROUPS_CLAIM="teams")
        with pytest.raises(answerers.UnanswerablePolicyError, match="'finance', a group nobody may decide"):
            answerers.check_policies([finance])
        assert not answerers.answerable(["finance"], None)
        people("boss:supervisor:t2", **issuer.env(), HITL_OIDC_GROUPS_CLAIM="teams")
        answerers.check_policies([finance])
        assert answerers.answerable(["finance"], None)
    finally:
        issuer.close()


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_a_reserved_name_is_no_group_no_decider_and_no_team(name):
    """system, unknown: refused in HITL_USERS' groups, as a decider, Tiers or escalation group, run_by, a map.

    Issue 54, finding 9: one list (`RESERVED_NAMES`) for people, groups and actors.
    """
    assert not is_group_name(name)
    with pytest.raises(ValueError, match=rf"HITL_USERS entry 'ana' lists group '{name}'.*keeps for itself"):
        UserDirectory(f"ana:reviewer+{name}:t")
    with pytest.raises(ValueError, match=rf"decider names '{name}' as its decider"):
        ToolGate(allowed_decisions=("approve",), decider=name)
    with pytest.raises(ValueError, match=rf"Tiers above 500 names '{name}'"):
        Tiers("amount", "finance", ((500, name),))
    with pytest.raises(ValueError, match=rf"escalate_to names '{name}'"):
        Deadline(60, "escalate", escalated_seconds=60, escalate_to=name)
    with pytest.raises(ValueError, match=rf"run_by names '{name}'"):
        run_by_roles([name])
    with pytest.raises(ValueError, match=rf"HITL_SLACK_GROUP_WEBHOOKS entry '{name}=x'"):
        group_map("HITL_SLACK_GROUP_WEBHOOKS", f"{name}=x")
    assert escalates_to({"escalate_to": name}) == "supervisor"
    assert ToolGate(allowed_decisions=("approve",), decider=lambda _a: name).required_role({}) == "supervisor"
