"""Per-run policy overrides: validation, tightening versus loosening, and the effective gates."""

from __future__ import annotations

import pytest

from agents import ops, support, travel
from agents.ops_policy import ops_policy
from agents.settings import DemoSettings
from agents.support_policy import refund_specialist_policy, support_policy
from hitl.contracts.publish import contracts_schema
from hitl.policy.overrides import OverrideError, changes, effective_policy, parse
from hitl.policy.served import card_of

REFUND = {"order_id": "A1", "amount": 59, "reason": "r"}


@pytest.fixture(scope="module")
def catalogs():
    """The served agents' catalogs, with the default limits (auto-approve 100, supervisor 500)."""
    settings = DemoSettings()
    graphs = {
        "support": support.make_graph(settings=settings),
        "travel": travel.make_graph(settings=settings),
    }
    graphs["ops"] = ops.make_graph(settings=settings)
    return {name: card_of(graph).catalog for name, graph in graphs.items()}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"tools": {"send_mail": {}}}, "policy.tools names tools it does not have: send_mail"),
        (
            {"tools": {"send_email": {"allowed_decisions": ["aprove"]}}},
            "policy.tools.send_email.allowed_decisions.0",
        ),
        ({"tools": {"send_email": {"allowed_decisions": []}}}, "at least 1 item"),
        (
            {"tools": {"send_email": {"gated": "no"}}},
            "policy.tools.send_email.gated: Input should be a valid boolean",
        ),
        ({"gate_all": 1}, "policy.gate_all: Input should be a valid boolean"),
        (
            {"tools": {"issue_refund": {"auto_approve_limit": "10"}}},
            "policy.tools.issue_refund.auto_approve_limit: Input should be a valid number",
        ),
        ({"tools": {"issue_refund": {"auto_approve_limit": -1}}}, "greater than or equal to 0"),
        ({"tools": {"issue_refund": {"auto_approve_limit": float("inf")}}}, "finite number"),
        ({"tools": {"issue_refund": {"gated": True, "auto_approve_limit": 5}}}, "takes no limit"),
        ({"refund_limit": 10}, "policy.refund_limit: Extra inputs are not permitted"),
        ({"tools": {"send_email": {"gated": False, "allowed_decisions": ["reject"]}}}, "gated: false"),
        ("gate everything", "valid dictionary"),
    ],
)
def test_bad_overrides_name_the_problem(catalogs, raw, message):
    """validation: wrong shapes, types, tools and decisions each raise an error naming the field."""
    with pytest.raises(OverrideError, match="Bad policy override for support") as error:
        parse(raw, catalogs["support"])
    assert message in str(error.value)


def test_a_limit_knob_is_refused_where_there_is_no_limit(catalogs):
    """validation: a tool without an auto-approve limit (book_flight, send_email) takes none."""
    with pytest.raises(OverrideError, match="book_flight has no auto-approve limit"):
        parse({"tools": {"book_flight": {"auto_approve_limit": 10}}}, catalogs["travel"])
    with pytest.raises(OverrideError, match="send_email has no auto-approve limit"):
        parse({"tools": {"send_email": {"auto_approve_limit": 10}}}, catalogs["support"])


def test_subagent_and_builtin_tools_may_be_named(catalogs):
    """validation: ops may name file_manager's read_file and the deployer's request_approval."""
    parsed = parse({"tools": {"read_file": {"gated": True}, "request_approval": {}}}, catalogs["ops"])
    assert parsed == {"tools": {"read_file": {"gated": True}, "request_approval": {}}}


def test_a_parsed_override_is_plain_json_without_defaults(catalogs):
    """normal form: only what was set is kept; limits become floats."""
    parsed = parse(
        {"gate_all": False, "tools": {"issue_refund": {"auto_approve_limit": 10}}}, catalogs["support"]
    )
    assert parsed == {"tools": {"issue_refund": {"auto_approve_limit": 10.0}}}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {"tools": {"issue_refund": {"auto_approve_limit": 10}}},
            [("tighten", "lowers issue_refund's auto-approve limit from 100 to 10")],
        ),
        (
            {"tools": {"issue_refund": {"auto_approve_limit": 1000}}},
            [("loosen", "raises issue_refund's auto-approve limit from 100 to 1000")],
        ),
        ({"tools": {"issue_refund": {"auto_approve_limit": 100}}}, []),
        (
            {"gate_all": True},
            [
                (
                    "tighten",
                    (
                        "pauses every call of ask_user, billing_payment_method, billing_void_invoice, "
                        "issue_refund, send_email"
                    ),
                )
            ],
        ),
        ({"tools": {"get_order": {}}}, [("tighten", "gates get_order (approve, reject)")]),
        ({"tools": {"get_order": {"gated": False}}}, []),
        ({"tools": {"send_email": {"gated": False}}}, [("loosen", "ungates send_email")]),
        ({"tools": {"issue_refund": {"gated": True}}}, [("tighten", "pauses every call of issue_refund")]),
        ({"tools": {"send_email": {"gated": True}}}, []),
        (
            {"tools": {"send_email": {"allowed_decisions": ["reject"]}}},
            [("tighten", "removes approve from send_email")],
        ),
        (
            {"tools": {"send_email": {"allowed_decisions": ["approve", "edit", "reject"]}}},
            [("loosen", "adds edit to send_email")],
        ),
        (
            {"tools": {"ask_user": {"allowed_decisions": ["approve"]}}},
            [("loosen", "adds approve to ask_user"), ("tighten", "removes respond from ask_user")],
        ),
    ],
)
def test_changes_say_what_tightens_and_what_loosens(catalogs, raw, expected):
    """classification: fewer decisions, more gates and a lower limit tighten; the opposites loosen."""
    found = changes(parse(raw, catalogs["support"]), catalogs["support"])
    assert [(c.kind, c.text) for c in found] == expected


def test_loosening_counts_for_any_subagent_that_gates_the_tool(catalogs):
    """classification: ungating issue_refund loosens support and its refund_specialist alike."""
    found = changes(
        parse({"tools": {"issue_refund": {"gated": False}}}, catalogs["support"]), catalogs["support"]
    )
    assert [(c.kind, c.text) for c in found] == [("loosen", "ungates issue_refund")]


def test_the_effective_policy_applies_limits_gates_and_decisions():
    """application: a lower limit pauses 59, new gates appear, ungated refunds still pause over 500."""
    policy = support_policy(DemoSettings())
    base = effective_policy(policy, {"get_order"}, None)
    assert not base["issue_refund"].pauses(REFUND)
    assert "get_order" not in base

    tightened = effective_policy(
        policy,
        {"get_order"},
        {
            "tools": {
                "issue_refund": {"auto_approve_limit": 10.0},
                "get_order": {},
                "send_email": {"allowed_decisions": ["reject"]},
            },
        },
    )
    assert tightened["issue_refund"].pauses(REFUND)
    assert tightened["get_order"].allowed_decisions == ("approve", "reject")
    assert tightened["send_email"].allowed_decisions == ("reject",)

    loosened = effective_policy(policy, set(), {"tools": {"issue_refund": {"gated": False}}})
    assert not loosened["issue_refund"].pauses({**REFUND, "amount": 400})
    assert loosened["issue_refund"].pauses({**REFUND, "amount": 501})


def test_an_override_may_only_add_gates_to_tools_the_agent_has():
    """application: a subagent's gate ignores an override entry for a tool it does not have."""
    policy = refund_specialist_policy(DemoSettings())
    assert set(effective_policy(policy, {"issue_refund", "get_order"}, {"tools": {"send_email": {}}})) == {
        "issue_refund"
    }


def test_gate_all_drops_conditions_but_keeps_decisions():
    """application: gate_all pauses a 59 refund and a SELECT, with the policy's own decisions."""
    support_gates = effective_policy(support_policy(DemoSettings()), set(), {"gate_all": True})
    assert support_gates["issue_refund"].pauses(REFUND)
    assert support_gates["issue_refund"].allowed_decisions == ("approve", "edit", "reject")
    ops_gates = effective_policy(ops_policy(), set(), {"gate_all": True})
    assert ops_gates["execute_sql"].pauses({"query": "SELECT 1"})


def test_the_knobs_are_published_for_clients():
    """contracts: run context, override, approve-and-allow and the allowance are in the published schema."""
    defs = contracts_schema()["$defs"]
    assert defs["RunContext"]["properties"]["policy"] == {"$ref": "#/$defs/PolicyOverride"}
    assert defs["PolicyOverride"]["additionalProperties"] is False
    assert defs["ApproveAndAllowDecision"]["properties"]["allow"] == {"$ref": "#/$defs/AllowInThread"}
    assert defs["AllowInThread"]["properties"]["scope"]["const"] == "thread"
    assert {"thread_id", "tool", "bounds", "tool_call_ids"} <= set(defs["Allowance"]["required"])
    assert "may_allow" in defs["ReviewConfig"]["properties"]
