"""The answer contract derived from an interrupt's value: the graph's own schema, and the server's check.

Every interrupt kind the real agents raise (batched, per-call, forms, sign-offs, subagents) is
driven in-process; the schema derived from its value alone must be the one the graph published.
The server then checks answers with it even when the engine reports no `response_schema`
(langgraph-api 0.11.1), and refuses answers to interrupts it knows no contract for.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import TypeAdapter

from agents import ops, support, travel
from agents.offline import phrases
from agents.settings import DemoSettings
from hitl.contracts import answers
from hitl.contracts.published_schema import ANSWER_SCHEMAS, REFERENCE_KEY, is_reference
from hitl.gate.caller import in_process
from server.decisions.checks import check_resume
from server.decisions.pending import Pending, ResumeRefused
from server.identity.users import User

REVIEWER = User(identity="reviewer1", role="reviewer")
SUPERVISOR = User(identity="supervisor1", role="supervisor")
NO_APPROVE_ON_DELETE = {"tools": {"delete_file": {"allowed_decisions": ["edit", "reject"]}}}


def interrupts_of(graph: Any, text: str, policy: dict[str, Any] | None = None) -> tuple[Any, ...]:
    """The interrupts a new thread of `graph` waits on after `text` (with `policy` as the run's override)."""
    config = in_process(str(uuid.uuid4()))
    graph.invoke(
        {"messages": [{"role": "user", "content": text}]},
        config,
        context=None if policy is None else {"policy": policy},
        version="v2",
    )
    return graph.get_state(config).interrupts


def published(interrupt: Any) -> dict[str, Any]:
    """The whole JSON Schema the graph published with `interrupt` (a reference resolved to it)."""
    schema = interrupt.response_schema
    schema = schema if isinstance(schema, dict) else TypeAdapter(schema).json_schema()
    if is_reference(schema):
        shape = answers.response_type(interrupt.value)
        assert schema == {"title": shape.__name__, REFERENCE_KEY: ANSWER_SCHEMAS}
        return json.loads(shape.published_json)
    return schema


@pytest.fixture
def graphs(services, tmp_path) -> dict[str, Any]:
    """The three real agents over the test's database (ops over a workspace with `tmp/old.log`)."""
    workspace = tmp_path / "workspace"
    (workspace / "tmp").mkdir(parents=True)
    (workspace / "tmp" / "old.log").write_text("old log\n")
    return {
        "support": support.make_graph(
            checkpointer=InMemorySaver(), services=services, settings=DemoSettings()
        ),
        "travel": travel.make_graph(checkpointer=InMemorySaver(), services=services, settings=DemoSettings()),
        "ops": ops.make_graph(
            checkpointer=InMemorySaver(), services=services, settings=DemoSettings(workspace_dir=workspace)
        ),
    }


def every_interrupt_kind(graphs: dict[str, Any], services: Any, new_order: Any) -> list[Any]:
    """At least one interrupt of each kind the agents raise, with and without `may_allow`."""
    booking = services.bookings.book(
        tool_call_id="seed", flight_id="LH1166", seat_class="economy", insurance=False
    )
    scenarios: list[tuple[str, str, dict[str, Any] | None]] = [
        ("support", phrases.REFUND_IN_FULL, None),  # over the supervisor limit: no may_allow
        ("support", phrases.refund_and_email(new_order(300)), None),  # two calls of reviewers: one batch
        ("support", phrases.refund_and_email(new_order(600)), None),  # a supervisor's and a reviewer's: apart
        ("support", phrases.REFUND_WITHOUT_ORDER.replace("refund", "refund 59 on"), None),  # ask_user
        ("support", phrases.REFUND_VIA_SPECIALIST, None),  # subagent
        ("support", phrases.EMAIL_CUSTOMER, None),
        ("travel", phrases.FIND_AND_BOOK_CHEAPEST, None),  # the flight-booking form, from a subagent
        ("travel", phrases.cancel_booking(booking["booking_id"]), None),
        ("ops", phrases.ARCHIVE_AND_DELETE_LOG, None),  # three per-call interrupts
        ("ops", phrases.DELETE_OLD_LOG, NO_APPROVE_ON_DELETE),  # per-call without may_allow
        ("ops", phrases.via_file_manager(phrases.read_file("tmp/old.log")), None),
        ("ops", phrases.via_file_manager(phrases.WRITE_RELEASE_NOTE), None),
        ("ops", phrases.via_general_purpose(phrases.DELETE_OLD_LOG), None),
        ("ops", phrases.via_general_purpose(phrases.run_sql("SELECT 1")), {"gate_all": True}),
        ("ops", phrases.DEPLOY_TO_PRODUCTION, None),  # request_approval, from the deployer
    ]
    found = [i for graph, text, policy in scenarios for i in interrupts_of(graphs[graph], text, policy)]
    assert len(found) >= len(scenarios)
    return found


def kind(value: dict[str, Any]) -> tuple[object, ...]:
    if "action_requests" in value:
        return ("batched", tuple(bool(c.get("may_allow")) for c in value["review_configs"]))
    return (value["type"], value.get("form"), bool(value.get("may_allow")))


def test_the_derived_schema_is_the_published_one_for_every_interrupt_kind(graphs, services, new_order):
    """derived == published: for every interrupt the agents raise, its value alone gives its schema."""
    found = every_interrupt_kind(graphs, services, new_order)
    for interrupt in found:
        derived = answers.response_schema(interrupt.value)
        assert derived is not None, interrupt.value
        assert derived == published(interrupt), interrupt.value
    assert {kind(i.value) for i in found} >= {
        ("batched", (False,)),
        ("batched", (True,)),
        ("batched", (True, True)),
        ("tool_approval", None, True),
        ("tool_approval", None, False),
        ("form", "flight-booking", False),
        ("approval_request", None, False),
    }


def test_a_contract_is_built_once_per_shape(graphs):
    """cache: the same shape gives the very same type, so its schema is built only once."""
    batched, *_ = interrupts_of(graphs["support"], phrases.EMAIL_CUSTOMER)
    per_call, *_ = interrupts_of(graphs["ops"], phrases.DELETE_OLD_LOG)
    for value in (batched.value, per_call.value):
        assert answers.response_type(value) is answers.response_type(dict(value))


@pytest.mark.parametrize(
    "value",
    [
        None,
        "approve?",
        {},
        {"type": "mystery"},
        {"type": "form", "form": "hotel-booking"},
        {"type": "tool_approval", "name": "delete_file", "agent": "nobody", "allowed_decisions": ["approve"]},
        {"type": "tool_approval", "name": "delete_file", "agent": "ops", "allowed_decisions": ["shrug"]},
        {"type": "tool_approval", "name": "delete_file", "agent": "ops", "allowed_decisions": []},
        {"type": "tool_approval", "name": "delete_file", "agent": "ops"},
        {
            "type": "tool_approval",
            "name": "delete_file",
            "agent": "ops",
            "allowed_decisions": ["approve"],
            "may_allow": "yes",
        },
        {"action_requests": [], "review_configs": [], "agent": "support"},
        {
            "action_requests": [{"name": "send_email"}],
            "review_configs": [],
            "agent": "support",
        },
        {
            "action_requests": [{"name": "send_email"}],
            "review_configs": [{"action_name": "issue_refund", "allowed_decisions": ["approve"]}],
            "agent": "support",
        },
    ],
)
def test_a_value_the_package_never_raises_has_no_contract(graphs, value):
    """unknown or malformed values (unregistered agent, bad decisions, mismatched batch) give None."""
    assert answers.response_type(value) is None
    assert answers.response_schema(value) is None


def as_on_0_11(interrupt: Any) -> Pending:
    """The interrupt as langgraph-api 0.11.1 reports it: no `response_schema`."""
    return Pending(id=interrupt.id, value=interrupt.value, response_schema=None)


def edit(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "edit", "edited_action": {"name": name, "args": args}}


def check(answer: Any, pending: Pending, user: User = REVIEWER) -> Any:
    return check_resume(answer, [pending], user=user, owner="requester1", max_bytes=100_000)


def test_a_bad_per_call_edit_is_refused_without_the_engines_schema(graphs):
    """per-call, no response_schema: an extra argument or a wrong type is a 422; a good edit passes."""
    [interrupt] = interrupts_of(graphs["ops"], phrases.WRITE_RELEASE_NOTE)
    pending = as_on_0_11(interrupt)
    good = {"file_path": "/notes/release.txt", "content": "1.4 rolled out\n"}

    with pytest.raises(ResumeRefused) as extra:
        check(edit("write_file", {**good, "mode": "append"}), pending)
    assert extra.value.status == 422
    assert "mode" in extra.value.message
    assert extra.value.message.startswith(f"Invalid answer for write_file ({interrupt.id}): resume/")

    with pytest.raises(ResumeRefused) as wrong_type:
        check(edit("write_file", {**good, "content": 7}), pending)
    assert wrong_type.value.status == 422
    assert "resume/edited_action/args/content" in wrong_type.value.message

    [accepted] = check(edit("write_file", good), pending)
    assert accepted.answer["edited_action"]["args"] == good


def test_a_bad_batched_edit_is_refused_without_the_engines_schema(graphs, new_order):
    """batched, no response_schema: an edit with an extra argument or a wrong type is a 422."""
    [interrupt] = interrupts_of(graphs["support"], phrases.refund_in_full(new_order(300)))
    pending = as_on_0_11(interrupt)
    args = dict(interrupt.value["action_requests"][0]["args"])

    for bad in ({**args, "currency": "EUR"}, {**args, "amount": "ten"}):
        with pytest.raises(ResumeRefused) as refused:
            check({"decisions": [edit("issue_refund", bad)]}, pending, SUPERVISOR)
        assert refused.value.status == 422
        assert "resume/decisions/0" in refused.value.message

    [accepted] = check({"decisions": [edit("issue_refund", {**args, "amount": 250})]}, pending, SUPERVISOR)
    assert accepted.answer["decisions"][0]["edited_action"]["args"]["amount"] == 250


@pytest.mark.parametrize(
    "answer",
    [
        {"decisions": -11356},
        {"decisions": {"type": "edit"}},
        {"decisions": [7]},
        {"decisions": ["edit"]},
        [1],
    ],
)
def test_any_shape_of_answer_is_a_422_never_a_crash(graphs, new_order, answer):
    """text coercion reads edits before the schema check: a malformed answer still ends in a 422."""
    [interrupt] = interrupts_of(graphs["support"], phrases.refund_in_full(new_order(300)))
    with pytest.raises(ResumeRefused) as refused:
        check(answer, as_on_0_11(interrupt), SUPERVISOR)
    assert refused.value.status == 422


def test_an_edit_typed_as_text_is_checked_as_the_number_it_means(graphs, new_order):
    [interrupt] = interrupts_of(graphs["support"], phrases.refund_in_full(new_order(300)))
    args = {**interrupt.value["action_requests"][0]["args"], "amount": "250"}
    [accepted] = check({"decisions": [edit("issue_refund", args)]}, as_on_0_11(interrupt), SUPERVISOR)
    assert accepted.answer["decisions"][0]["edited_action"]["args"]["amount"] == 250


def test_the_contract_from_the_value_wins_over_the_engines(graphs):
    """derived first: an engine's looser response_schema does not let a bad answer through."""
    [interrupt] = interrupts_of(graphs["ops"], phrases.DEPLOY_TO_PRODUCTION)
    loose = replace(as_on_0_11(interrupt), response_schema={"type": "object"})
    with pytest.raises(ResumeRefused) as refused:
        check({"approved": "yes"}, loose)
    assert refused.value.status == 422
    assert "resume/approved" in refused.value.message


def test_an_unknown_interrupt_falls_back_to_the_engines_schema_or_is_refused():
    """no derived contract: the engine's schema checks it if it sent one; without one it is a 422."""
    value = {"type": "mystery", "action": "launch"}
    with_schema = Pending(id="0" * 32, value=value, response_schema={"type": "object", "required": ["ok"]})
    with pytest.raises(ResumeRefused, match="ok"):
        check({}, with_schema)
    assert check({"ok": True}, with_schema)[0].answer == {"ok": True}

    with pytest.raises(ResumeRefused) as refused:
        check({"ok": True}, replace(with_schema, response_schema=None))
    assert refused.value.status == 422
    assert refused.value.message.startswith(f"No answer contract is known for launch ({'0' * 32})")


def test_a_stock_deep_agents_request_is_checked_by_decision_type(graphs):
    """stock `interrupt_on` (no `agent` key): decisions of the allowed types pass, any other is a 422."""
    value = {
        "action_requests": [
            {"name": "issue_refund", "args": {"order_id": "A1", "amount": 5}, "description": ""}
        ],
        "review_configs": [{"action_name": "issue_refund", "allowed_decisions": ["approve", "reject"]}],
    }
    pending = Pending(id="stock-1", value=value, response_schema=None)
    assert check({"decisions": [{"type": "approve"}]}, pending)
    assert check({"decisions": [{"type": "reject", "message": "no"}]}, pending)
    for bad in ({"decisions": [edit("issue_refund", {"amount": 1})]}, {"decisions": []}, {"approve": True}):
        with pytest.raises(ResumeRefused) as refused:
            check(bad, pending)
        assert refused.value.status == 422


def test_a_policy_that_allows_self_approval_lets_the_asker_decide(graphs):
    """`self_approval` on a review config: the asker's approve passes; without it, 403 naming the duty."""
    value = {
        "action_requests": [{"name": "send_email", "args": {}}],
        "review_configs": [{"action_name": "send_email", "allowed_decisions": ["approve", "reject"]}],
        "requested_by": ["reviewer1"],
    }
    four_eyes = Pending(id="p-1", value=value, response_schema=None)
    with pytest.raises(ResumeRefused, match="separation of duties") as refused:
        check({"decisions": [{"type": "approve"}]}, four_eyes)
    assert refused.value.status == 403
    assert check({"decisions": [{"type": "reject", "message": "withdrawn"}]}, four_eyes)
    allowed = {**value, "review_configs": [{**value["review_configs"][0], "self_approval": True}]}
    assert check({"decisions": [{"type": "approve"}]}, replace(four_eyes, value=allowed))
