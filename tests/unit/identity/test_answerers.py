"""Who can answer an approval at all, from the people the server knows (`server.identity.answerers`).

A policy whose decider nobody can be stops the start, naming the agent, the tool and the role; a
supervisor counts as a reviewer; a decider chosen from the call's args may name a supervisor. A
pending question whose owner `HITL_USERS` no longer lists has nobody to answer it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from hitl.policy.gates import ToolGate
from hitl.policy.overrides import PolicyCatalog
from hitl.policy.served import AgentCard
from hitl.settings import get_settings
from server.identity import answerers, oidc, users

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def people(monkeypatch) -> Iterator[Any]:
    """`people("a:reviewer:t1,...")` sets HITL_USERS (OIDC off) for the test."""

    def set_users(spec: str) -> None:
        monkeypatch.setenv("HITL_USERS", spec)
        monkeypatch.delenv("HITL_OIDC_ISSUER", raising=False)
        get_settings.cache_clear()
        users.directory.cache_clear()
        oidc.provider.cache_clear()

    yield set_users
    get_settings.cache_clear()
    users.directory.cache_clear()
    oidc.provider.cache_clear()


def card(**gates: ToolGate) -> AgentCard:
    return AgentCard(name="expenses", catalog=PolicyCatalog.of("expenses", [(list(gates), gates)]))


def by_amount(args: Any) -> Any:
    return "supervisor" if args["amount"] > 500 else "reviewer"


def test_a_decider_that_is_no_role_stops_the_start(people):
    """decider 'auditor': refused at start, naming the agent, the tool and the role."""
    people("alice:reviewer:t1,bob:supervisor:t2")
    gate = ToolGate(allowed_decisions=("approve",), decider="auditor")  # type: ignore[arg-type]
    with pytest.raises(
        answerers.UnanswerablePolicyError, match="expenses: reimburse is decided by 'auditor'"
    ):
        answerers.check_policies([card(reimburse=gate)])


def test_a_role_nobody_has_stops_the_start_and_supervisors_count_as_reviewers(people):
    """only requesters and a supervisor: a reviewer's gate passes (supervisors review), none needs more."""
    people("r:requester:t1,boss:supervisor:t2")
    answerers.check_policies([card(reimburse=ToolGate(allowed_decisions=("approve",)))])
    people("r:requester:t1,alice:reviewer:t2")
    with pytest.raises(
        answerers.UnanswerablePolicyError, match=r"reimburse may be decided .* by a supervisor"
    ):
        answerers.check_policies(
            [card(reimburse=ToolGate(allowed_decisions=("approve",), decider=by_amount))]
        )
    owners = ToolGate(allowed_decisions=("respond",), decider="owner")
    answerers.check_policies([card(ask=owners)])  # the owner can always be someone


def test_a_question_whose_owner_is_gone_has_no_answerer(people):
    """answerable: the owner listed, yes; removed from HITL_USERS (OIDC off), no; a reviewer's call, yes."""
    people("carol:requester:t1,alice:reviewer:t2")
    assert answerers.answerable(["owner"], "carol")
    assert not answerers.answerable(["owner"], "dave")
    assert answerers.answerable(["reviewer"], "dave")
    assert not answerers.answerable(["supervisor"], "carol")
