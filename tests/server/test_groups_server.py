"""Groups through the real server: finance decides refunds, SRE decides ops, neither the other's (issue 50).

The demo's own settings name the groups (`REFUND_DECIDER_GROUP=finance`, `REFUND_LEAD_GROUP=finance-leads`,
`OPS_DECIDER_GROUP=sre`), the people are in them by `HITL_USERS` (`name:role+group:token`) or by an OIDC
token's groups claim (`HITL_OIDC_GROUPS_CLAIM`). A refund up to 500 is finance's, above it a
finance lead's, above 2,000 two different finance leads'. Every refusal is a 403 with nothing
written to the business database; each approval makes its effect exactly once. A policy naming a
group nobody is in stops the start, naming it.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from agents.offline import phrases
from server.runtime.replicas import stop
from tests.conftest import add_order
from tests.devserver import TEAM_USERS as TEAM_STAFF
from tests.devserver import TEAMS, TEST_USERS, dev_users, sdk_client, serving, start_dev_server
from tests.notices import Receiver
from tests.oidc_issuer import Issuer
from tests.server.helpers import APPROVE, decisions, only_pending, refused, start

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator
    from pathlib import Path

    from langgraph_sdk.client import LangGraphClient

    from tests.devserver import DevServer

pytestmark = pytest.mark.server

TEAM_USERS = f"{TEAM_STAFF},cust1:requester+finance:test-cust1"
"""The teams of `tests.devserver`, and a customer (requester) in finance, who decides nothing."""
TOKENS = {
    "requester1": "dev-requester1",
    "reviewer1": "dev-reviewer1",
    "supervisor1": "dev-supervisor1",
    "finance1": "test-finance1",
    "lead1": "test-lead1",
    "lead2": "test-lead2",
    "sre1": "test-sre1",
    "cust1": "test-cust1",
}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    running = Issuer()
    running.add_key("k1")
    yield running
    running.close()


@pytest.fixture(scope="module")
def teams_server(tmp_path_factory, issuer) -> Iterator[DevServer]:
    """The demo served with its refunds and ops given to teams, HITL_USERS and OIDC people in them."""
    env = {
        **issuer.env(),
        "HITL_OIDC_GROUPS_CLAIM": "org.teams",
        "HITL_USERS": f"{dev_users()},{TEST_USERS},{TEAM_USERS}",
        **TEAMS,
    }
    with serving(tmp_path_factory.mktemp("groups"), env) as running:
        yield running


@pytest.fixture
async def as_user(teams_server) -> AsyncIterator[Callable[[str], LangGraphClient]]:
    """`as_user("finance1")` (a HITL_USERS name) or `as_user(jwt)`: a client of the teams server."""
    opened = []

    def make(who: str) -> LangGraphClient:
        sdk = sdk_client(url=teams_server.url, headers={"Authorization": f"Bearer {TOKENS.get(who, who)}"})
        opened.append(sdk)
        return sdk

    yield make
    for sdk in opened:
        await sdk.aclose()


async def inbox_threads(client: LangGraphClient) -> set[str]:
    return {row["thread_id"] for row in (await client.http.get("/inbox", params={"limit": 500}))["items"]}


async def refund_waiting(as_user, server: DevServer, amount: float) -> tuple[str, str, dict[str, Any]]:
    """requester1 asks for a full refund of a fresh order of `amount`; returns order, thread, interrupt."""
    order_id = add_order(server.services, amount)
    thread_id, thread = await start(as_user("requester1"), phrases.refund_in_full(order_id))
    return order_id, thread_id, only_pending(thread)


def refunded(server: DevServer, order_id: str) -> list[float]:
    return [r["amount"] for r in server.services.payments.refunds_for(order_id)]


async def test_finance_decides_refunds_and_sre_or_a_plain_reviewer_may_not(as_user, teams_server):
    """refund 300 needs finance: sre1, reviewer1, its requester, an anonymous caller refused, none refunded.

    The finance inbox lists it, SRE's and a plain reviewer's do not; finance1's approve refunds it once.
    """
    order_id, thread_id, pending = await refund_waiting(as_user, teams_server, 300)
    assert pending["value"]["review_configs"][0]["required_role"] == "finance"

    with refused(403, r"sre1 \(reviewer\) may not answer .*: it needs someone in finance"):
        await as_user("sre1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    with refused(403, "it needs someone in finance"):
        await as_user("reviewer1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    with refused(403, "requester1"):
        await as_user("requester1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    with refused(401):
        await as_user("not-a-token").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == []

    assert thread_id in await inbox_threads(as_user("finance1"))
    assert thread_id not in await inbox_threads(as_user("sre1"))
    assert thread_id not in await inbox_threads(as_user("reviewer1"))
    assert await as_user("lead1").http.get("/me") == {
        "identity": "lead1",
        "role": "reviewer",
        "groups": ["finance", "finance-leads"],
        "decides_as": ["finance", "finance-leads", "reviewer"],
        "staff": True,
    }
    assert await as_user("supervisor1").http.get("/me") == {
        "identity": "supervisor1",
        "role": "supervisor",
        "decides_as": ["reviewer", "supervisor"],
        "staff": True,
    }

    await as_user("finance1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == [300.0]
    records = (await as_user("finance1").http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["reviewer"], r["outcome"]) for r in records][-1] == ("finance1", "accepted")
    assert records[-1]["roles"] == ["reviewer", "finance"]


async def test_a_finance_member_may_not_approve_their_own_refund(as_user, teams_server):
    """separation of duties per group: finance1's own refund is refused to them, lead1 (finance) refunds it.

    Nothing is refunded after finance1's approve; lead1's refunds it once.
    """
    order_id = add_order(teams_server.services, 300, owner="finance1")
    thread_id, _ = await start(as_user("finance1"), phrases.refund_in_full(order_id))
    with refused(403, r"finance1 asked for issue_refund, so someone else must approve it"):
        await as_user("finance1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == []
    await as_user("lead1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == [300.0]


async def test_an_edit_above_finances_limit_needs_a_finance_lead(as_user, teams_server):
    """edit re-judged by group: finance1 may not raise a 300 refund to 600 (a lead's); lead1 may, once."""
    order_id = add_order(teams_server.services, 900)
    thread_id, thread = await start(as_user("requester1"), phrases.refund_amount(300, order_id))
    assert only_pending(thread)["value"]["review_configs"][0]["required_role"] == "finance"
    args = only_pending(thread)["value"]["action_requests"][0]["args"]
    edit = decisions(
        {"type": "edit", "edited_action": {"name": "issue_refund", "args": {**args, "amount": 600}}}
    )
    with refused(403, r"finance1 \(reviewer\) may not edit issue_refund .*needs someone in finance-leads"):
        await as_user("finance1").runs.wait(thread_id, "support", command=edit)
    assert refunded(teams_server, order_id) == []
    await as_user("lead1").runs.wait(thread_id, "support", command=edit)
    assert refunded(teams_server, order_id) == [600.0]


async def test_sre_decides_ops_and_finance_may_not(as_user, teams_server):
    """ops write_file needs sre: finance1 is refused and the file is not written; sre1's approve writes it."""
    name = f"notes/{uuid.uuid4().hex[:8]}.txt"
    target = teams_server.log.parent / "workspace" / name
    thread_id, thread = await start(
        as_user("supervisor1"), phrases.write_file("Release 1.4 is live", name), "ops"
    )
    pending = only_pending(thread)
    assert (pending["value"]["name"], pending["value"]["required_role"]) == ("write_file", "sre")

    with refused(403, r"finance1 \(reviewer\) may not answer .*: it needs someone in sre"):
        await as_user("finance1").runs.wait(thread_id, "ops", command={"resume": {pending["id"]: APPROVE}})
    assert not target.exists()
    assert thread_id in await inbox_threads(as_user("sre1"))
    assert thread_id not in await inbox_threads(as_user("finance1"))

    await as_user("sre1").runs.wait(thread_id, "ops", command={"resume": {pending["id"]: APPROVE}})
    assert target.read_text() == "Release 1.4 is live\n"


async def test_a_refund_over_the_dual_control_limit_needs_two_different_finance_leads(as_user, teams_server):
    """refund 2,400: two different finance leads, and nobody else, make one refund.

    finance1 (no lead) refused; lead1 approves (1 of 2, nothing refunded), lead1 again refused;
    supervisor1 (a supervisor, no lead) refused; lead2 completes it: one refund.
    """
    order_id, thread_id, pending = await refund_waiting(as_user, teams_server, 2400)
    config = pending["value"]["review_configs"][0]
    assert (config["required_role"], config["approvals_required"]) == ("finance-leads", 2)

    with refused(403, "it needs someone in finance-leads"):
        await as_user("finance1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    await as_user("lead1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == []
    with refused(403, "lead1 already approved"):
        await as_user("lead1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    with refused(403, "it needs someone in finance-leads"):
        await as_user("supervisor1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == []

    await as_user("lead2").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == [2400.0]


async def test_an_oidc_groups_claim_puts_a_person_in_a_team(as_user, teams_server, issuer):
    """OIDC: a `support` token with org.teams [finance] decides a 300 refund; [sre, supervisor] may not.

    A claim value never gives a role; nothing is refunded until finance decides.
    """
    order_id, thread_id, _ = await refund_waiting(as_user, teams_server, 300)
    not_finance = issuer.token("omar", "support", org={"teams": ["sre", "supervisor"]})
    with refused(403, r"omar \(reviewer\) may not answer .*: it needs someone in finance"):
        await as_user(not_finance).runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == []

    finance = issuer.token("fatima", "support", org={"teams": ["finance"]})
    await as_user(finance).runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == [300.0]


async def test_a_customer_in_finance_neither_sees_nor_decides_financess_refunds(
    as_user, teams_server, issuer
):
    """A requester in finance (cust1 by HITL_USERS, carla by an OIDC groups claim) decides and sees nothing.

    requester1's 300 refund is not in their /inbox (nor under group=finance), no count names finance,
    /me names no team; reading the thread is 404, approving it 404; anonymous: 401. Nothing is refunded
    and nothing is on the trail until finance1 approves, once.
    """
    order_id, thread_id, _ = await refund_waiting(as_user, teams_server, 300)
    carla = issuer.token("carla", "customers", org={"teams": ["finance"]})
    for who in ("cust1", carla):
        customer = as_user(who)
        for params in ({"limit": 500}, {"group": "finance", "limit": 500}):
            page = await customer.http.get("/inbox", params=params)
            assert (page["items"], page["total"], page["counts"]) == ([], 0, {}), page
        me = await customer.http.get("/me")
        assert (me["role"], me.get("groups")) == ("requester", None), me
        with refused(404):
            await customer.threads.get(thread_id)
        with refused(404):
            await customer.runs.wait(thread_id, "support", command=decisions(APPROVE))
    anonymous = sdk_client(url=teams_server.url, headers={})
    try:
        with refused(401):
            await anonymous.http.get("/inbox")
    finally:
        await anonymous.aclose()
    assert refunded(teams_server, order_id) == []
    trail = (await as_user("supervisor1").http.get(f"/audit/{thread_id}"))["records"]
    assert trail == []
    assert thread_id in await inbox_threads(as_user("finance1"))

    await as_user("finance1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == [300.0]
    trail = (await as_user("supervisor1").http.get(f"/audit/{thread_id}"))["records"]
    assert [(r["decision"], r["reviewer"]) for r in trail] == [("approve", "finance1")]


async def test_reserved_names_in_a_groups_claim_make_no_team(as_user, teams_server, issuer):
    """org.teams [finance, system, unknown]: /me names finance; signed roles and analytics: finance only.

    Issue 54, finding 9: `system` was kept as a group, so a member's decisions shared analytics'
    `by_group` row with the watcher's expiries. The system and unknown rows do not move.
    """
    supervisor = as_user("supervisor1")

    async def by_group() -> dict[str, int]:
        summary = await supervisor.http.get("/analytics", params={"since": "1h"})
        return {row["group"]: row["decisions"] for row in summary["by_group"]}

    before = await by_group()
    order_id, thread_id, _ = await refund_waiting(as_user, teams_server, 300)
    fiona = as_user(issuer.token("fiona", "support", org={"teams": ["finance", "system", "unknown"]}))
    assert (await fiona.http.get("/me"))["groups"] == ["finance"]
    await fiona.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert refunded(teams_server, order_id) == [300.0]
    (approval,) = (await supervisor.http.get(f"/audit/{thread_id}"))["records"]
    assert (approval["reviewer"], approval["roles"]) == ("fiona", ["reviewer", "finance"])
    after = await by_group()
    assert after.get("finance", 0) == before.get("finance", 0) + 1
    assert {g: after.get(g, 0) for g in ("system", "unknown")} == {
        g: before.get(g, 0) for g in ("system", "unknown")
    }


def refused_start(workdir: Path, env: dict[str, str]) -> str:
    """Why `langgraph dev` with `env` refused to start (one that starts is stopped, and the test fails)."""
    try:
        running = start_dev_server(workdir, env)
    except pytest.fail.Exception as failed:
        return str(failed)
    stop(running.process)
    pytest.fail(f"the server started with {env}")


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"HITL_USERS": f"{dev_users()},ana:reviewer+system:test-ana"},
            "HITL_USERS entry 'ana' lists group 'system'",
        ),
        (
            {"HITL_USERS": f"{dev_users()},unknown:reviewer:test-unknown"},
            "HITL_USERS names 'unknown', a name the",
        ),
        ({"REFUND_DECIDER_GROUP": "unknown"}, "REFUND_DECIDER_GROUP names 'unknown' as its decider"),
    ],
)
def test_a_reserved_name_as_a_group_person_or_decider_stops_the_start(tmp_path, env, said):
    """system or unknown as a person's group, a person or a policy's decider: the start fails naming it."""
    assert said in refused_start(tmp_path, env)


def test_a_team_of_requesters_only_stops_the_start_naming_it(tmp_path):
    """REFUND_DECIDER_GROUP=finance with only a requester in finance: "a group nobody may decide for"."""
    users = f"{dev_users()},cust1:requester+finance:test-cust1"
    said = refused_start(tmp_path, {"REFUND_DECIDER_GROUP": "finance", "HITL_USERS": users})
    assert (
        "support: issue_refund may be decided (by its arguments) by 'finance', a group nobody may decide for "
        "(only requesters are in it; requesters never decide)" in said
    )


def test_a_team_nobody_is_in_stops_the_start_naming_it(tmp_path):
    """REFUND_DECIDER_GROUP=finance with nobody in finance: the start fails naming agent, tool and group."""
    said = refused_start(tmp_path, {"REFUND_DECIDER_GROUP": "finance"})
    assert "Some approvals could never be answered" in said
    assert (
        "support: issue_refund may be decided (by its arguments) by 'finance', a group nobody here is in"
        in said
    )


@pytest.fixture(scope="module")
def slack_channels() -> Iterator[dict[str, Receiver]]:
    """Stand-ins for three Slack channels' incoming webhooks: the default one, finance's, the leads'."""
    channels = {name: Receiver() for name in ("default", "finance", "finance-leads")}
    yield channels
    for channel in channels.values():
        channel.http.shutdown()
        channel.http.server_close()


@pytest.fixture(scope="module")
def hurried_teams_server(tmp_path_factory, slack_channels) -> Iterator[DevServer]:
    """The teams demo with refunds overdue after 3 s, a fast watcher and a Slack channel per team."""
    env = {
        "HITL_USERS": f"{dev_users()},{TEST_USERS},{TEAM_USERS}",
        "REFUND_DEADLINE_SECONDS": "3",
        "ESCALATION_DEADLINE_SECONDS": "600",
        "HITL_WATCH_INTERVAL": "0.3",
        "HITL_SLACK_WEBHOOK_URL": slack_channels["default"].url,
        "HITL_SLACK_GROUP_WEBHOOKS": ",".join(
            f"{team}={slack_channels[team].url}" for team in ("finance", "finance-leads")
        ),
        **TEAMS,
    }
    with serving(tmp_path_factory.mktemp("groups-deadlines"), env) as running:
        yield running


def posted(channel: Receiver, thread_id: str) -> list[dict[str, Any]]:
    return [notice for notice in channel.notices if thread_id in json.dumps(notice)]


async def test_an_overdue_refund_escalates_to_the_finance_leads(hurried_teams_server, slack_channels):
    """escalate_to: a 300 refund finance left waiting goes to the finance leads, and only to them.

    Slack: the waiting refund is posted to finance's channel, its escalation to the leads' channel,
    neither to the default one. finance1 and a supervisor are refused (nothing refunded), lead1
    decides it once; the trail says whom it went to.
    """
    server = hurried_teams_server
    clients: list[LangGraphClient] = []

    def as_user(who: str) -> LangGraphClient:
        clients.append(sdk_client(url=server.url, headers={"Authorization": f"Bearer {TOKENS[who]}"}))
        return clients[-1]

    try:
        order_id, thread_id, _ = await refund_waiting(as_user, server, 300)
        lead = as_user("lead1")
        deadline = time.monotonic() + 60
        rows: list[dict[str, Any]] = []
        while time.monotonic() < deadline and not any(r["escalated"] for r in rows):
            await asyncio.sleep(0.3)
            items = (await lead.http.get("/inbox", params={"limit": 500}))["items"]
            rows = [r for r in items if r["thread_id"] == thread_id]
        (row,) = rows
        assert (row["required_role"], row["escalated"]) == ("finance-leads", True)
        while time.monotonic() < deadline:
            if posted(slack_channels["finance-leads"], thread_id):
                break
            await asyncio.sleep(0.3)
        assert len(posted(slack_channels["finance"], thread_id)) == 1
        assert len(posted(slack_channels["finance-leads"], thread_id)) == 1
        assert posted(slack_channels["default"], thread_id) == []
        assert thread_id not in await inbox_threads(as_user("finance1"))

        with refused(403, "it needs someone in finance-leads"):
            await as_user("finance1").runs.wait(thread_id, "support", command=decisions(APPROVE))
        with refused(403, "it needs someone in finance-leads"):
            await as_user("supervisor1").runs.wait(thread_id, "support", command=decisions(APPROVE))
        assert refunded(server, order_id) == []

        await lead.runs.wait(thread_id, "support", command=decisions(APPROVE))
        assert refunded(server, order_id) == [300.0]
        records = (await lead.http.get(f"/audit/{thread_id}"))["records"]
        assert (records[0]["decision"], records[0]["reviewer"]) == ("escalated", "system")
        assert records[0]["message"] == "now needs someone in finance-leads"
        assert (records[-1]["reviewer"], records[-1]["outcome"]) == ("lead1", "accepted")
    finally:
        for sdk in clients:
            await sdk.aclose()
