"""The gate's last wall: in a server run, a call a person decided runs only under a signed receipt.

The server names each call's latest signed receipt in the run's config (`hitl_receipts`); the
gate checks, just before the tool runs, that it verifies and binds this thread, agent, tool,
call and args. Here the agents run in-process with the config a server run would have.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from agents.offline import phrases
from hitl.proof import audit_chain
from hitl.proof.receipt_check import RECEIPTS_KEY
from hitl.proof.receipt_keys import keyring, load
from hitl.proof.signed_receipts import sign
from hitl.proof.verification import Evidence, verify
from hitl.settings import Settings
from server.records import trail
from tests.graphs.layer.threads import SERVER_RUN

SUPERVISOR = ("supervisor1", "reviewer", "supervisor")


def receipt_for(
    chat,
    action: dict[str, Any],
    decision: str,
    final_args: dict | None,
    keys=None,
    *,
    reviewer: str = "supervisor1",
    roles: tuple[str, ...] = ("reviewer", "supervisor"),
) -> str:
    """The JWS the server would sign for `reviewer`'s `decision` on `action` in `chat`'s thread."""
    receipt = {
        "interrupt_id": "int-1",
        "tool_call_id": action["tool_call_id"],
        "agent": action["agent"],
        "tool": action["name"],
        "requested_args": action["args"],
        "decision": decision,
        "final_args": final_args,
        "message": None,
        "reviewer": reviewer,
        "roles": list(roles),
        "decided_at": datetime.now(UTC).isoformat(),
    }
    signed = sign(receipt, chat.thread_id, keys or keyring(), policy_revision="r", audit_head="")
    return signed["signed"]


def server_run(chat, receipts: dict[str, str] | None, identity: str = "supervisor1", *roles: str) -> dict:
    """`chat`'s config as the server writes it: the caller, whom it works for, the receipts (None: none).

    A server run (`SERVER_RUN`) working for requester1, who owns the test's orders.
    """
    configurable = {
        **chat.config["configurable"],
        **SERVER_RUN,
        "langgraph_auth_user_id": identity,
        "langgraph_auth_permissions": list(roles or SUPERVISOR[1:]),
        "hitl_acting_for": {"identity": "requester1", "roles": ["requester"]},
    }
    if receipts is not None:
        configurable[RECEIPTS_KEY] = receipts
    return {"configurable": configurable}


def ask_300(chat, order_id: str) -> dict[str, Any]:
    (pending,) = chat.say(phrases.refund_amount(300, order_id)).interrupts
    return pending.value["action_requests"][0]


def edit_to_899(chat, action, receipts: dict[str, str] | None) -> None:
    edited = {"name": "issue_refund", "args": {**action["args"], "amount": 899}}
    answer = {"decisions": [{"type": "edit", "edited_action": edited}]}
    chat.graph.invoke(Command(resume=answer), server_run(chat, receipts), version="v2")


def said(chat) -> str:
    return " ".join(m.text for m in chat.graph.get_state(chat.config).values["messages"])


def test_an_edit_runs_under_a_receipt_for_the_edited_args(support_agent, services, new_order):
    """covered: the receipt binds the edited 899: refunded once, for 899."""
    order_id = new_order(899)
    chat = support_agent()
    action = ask_300(chat, order_id)
    jws = receipt_for(chat, action, "edit", {**action["args"], "amount": 899})
    edit_to_899(chat, action, {action["tool_call_id"]: jws})
    assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [899.0]


def test_a_call_whose_args_differ_from_the_approved_ones_does_not_run(support_agent, services, new_order):
    """args differ: the receipt approved 300, the call would run 899: no refund; thread and audit say why."""
    order_id = new_order(899)
    chat = support_agent()
    chat.graph.store = store = InMemoryStore()
    action = ask_300(chat, order_id)
    jws = receipt_for(chat, action, "approve", action["args"])
    edit_to_899(chat, action, {action["tool_call_id"]: jws})
    assert services.payments.count() == 0
    assert "its arguments differ from the approved ones" in said(chat)
    (item,) = store.search(("audit", chat.thread_id))
    record = {**item.value, "key": item.key}
    assert (record["decision"], record["outcome"], record["tool_call_id"]) == (
        "not_run",
        "refused",
        action["tool_call_id"],
    )
    assert "arguments differ" in record["refusal"]
    head = store.get((*audit_chain.HEAD_NAMESPACE, chat.thread_id), audit_chain.HEAD_KEY)
    assert audit_chain.check([record], head.value if head else None) == []


def test_a_decided_call_without_a_receipt_does_not_run(support_agent, services, new_order):
    """no receipt: a server run whose call a person decided, with no receipt named, refunds nothing."""
    order_id = new_order(450)
    chat = support_agent()
    chat.say(phrases.refund_in_full(order_id))
    chat.graph.invoke(
        Command(resume={"decisions": [{"type": "approve"}]}), server_run(chat, {}), version="v2"
    )
    assert services.payments.count() == 0
    assert "no signed receipt of a person's decision is on record for this call" in said(chat)


def test_a_receipt_for_another_thread_or_signed_by_another_key_does_not_count(
    support_agent, services, new_order, tmp_path
):
    """replayed or forged: a receipt from another thread, or signed by a key not published: no refund."""
    for forged in ("thread", "key"):
        order_id = new_order(450)
        chat = support_agent()
        chat.say(phrases.refund_in_full(order_id))
        action = chat.pending()[0].value["action_requests"][0]
        if forged == "thread":
            other = type(chat)(graph=chat.graph, thread_id="another-thread")
            jws = receipt_for(other, action, "approve", action["args"])
            expected = "the approval was for another call (thread 'another-thread'"
        else:
            stranger = load(Settings(data_dir=tmp_path, _env_file=None))
            jws = receipt_for(chat, action, "approve", action["args"], keys=stranger)
            expected = "its receipt does not verify: it is signed with a key the JWKS does not list"
        approve = Command(resume={"decisions": [{"type": "approve"}]})
        chat.graph.invoke(approve, server_run(chat, {action["tool_call_id"]: jws}), version="v2")
        assert services.payments.refunds_for(order_id) == [], forged
        assert expected in said(chat), forged


def test_a_rejected_receipt_does_not_run_an_approve(support_agent, services, new_order):
    """stale answer: the receipt on record says reject; an approve answer alone runs nothing."""
    order_id = new_order(450)
    chat = support_agent()
    chat.say(phrases.refund_in_full(order_id))
    action = chat.pending()[0].value["action_requests"][0]
    jws = receipt_for(chat, action, "reject", None)
    approve = Command(resume={"decisions": [{"type": "approve"}]})
    chat.graph.invoke(approve, server_run(chat, {action["tool_call_id"]: jws}), version="v2")
    assert services.payments.count() == 0
    assert "the last decision on this call was reject" in said(chat)


def test_calls_no_person_decided_need_no_receipt(support_agent, services, new_order):
    """auto-approved: a 59 refund in a server run with no receipts is refunded (no person stood before it)."""
    order_id = new_order(59)
    chat = support_agent()
    chat.graph.invoke(
        {"messages": [{"role": "user", "content": phrases.refund_amount(59, order_id)}]},
        server_run(chat, {}, "requester1", "requester"),
        version="v2",
    )
    assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [59.0]


def test_in_process_runs_have_no_receipts_and_are_not_checked(support_agent, services, new_order):
    """no server: scripts and tests approve without receipts, as before."""
    order_id = new_order(450)
    chat = support_agent()
    chat.say(phrases.refund_in_full(order_id))
    chat.resume({"decisions": [{"type": "approve"}]})
    assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [450.0]


def test_a_tool_failure_is_chained_into_the_trail(support_agent, services, new_order, monkeypatch):
    """failure record: written by the graph, chained after the head; verification notes it, unsigned."""
    order_id = new_order(300)
    chat = support_agent()
    chat.graph.store = store = InMemoryStore()
    chat.say(phrases.refund_amount(300, order_id))

    def broken(**_kwargs):
        message = "payment provider unreachable"
        raise ConnectionError(message)

    monkeypatch.setattr(services.payments, "issue_refund", broken)
    chat.resume({"decisions": [{"type": "approve"}]})
    records = [{**i.value, "key": i.key} for i in store.search(("audit", chat.thread_id))]
    assert [(r["decision"], r["prev_hash"]) for r in records] == [("failed", "")]
    head = store.get((*audit_chain.HEAD_NAMESPACE, chat.thread_id), audit_chain.HEAD_KEY)
    receipts = chat.graph.get_state(chat.config).values["approval_receipts"]
    report = verify(Evidence(chat.thread_id, keyring().jwks, records, head.value, receipts))
    assert report.ok, report.as_json()
    assert "a tool failure, recorded by the graph (not signed)" in " ".join(report.notes)


def test_inside_the_server_a_tool_failure_joins_the_servers_trail(
    support_agent, services, new_order, monkeypatch
):
    """keeper: with the server's trail installed, the failure is chained there after what came before."""
    order_id = new_order(300)
    chat = support_agent()
    chat.graph.store = store = InMemoryStore()
    chat.say(phrases.refund_amount(300, order_id))
    refusal = {
        "thread_id": chat.thread_id,
        "decision": "refused",
        "outcome": "refused",
        "reviewer": "requester1",
    }
    trail.write([refusal], engine=services.engine)
    monkeypatch.setattr(
        audit_chain, "_keeper", [lambda record: trail.write([record], engine=services.engine)]
    )

    def broken(**_kwargs):
        message = "payment provider unreachable"
        raise ConnectionError(message)

    monkeypatch.setattr(services.payments, "issue_refund", broken)
    chat.resume({"decisions": [{"type": "approve"}]})
    assert store.search(("audit", chat.thread_id)) == []
    records, head = trail.read(chat.thread_id, engine=services.engine)
    assert [r["decision"] for r in records] == ["refused", "failed"]
    assert records[1]["prev_hash"] == records[0]["hash"]
    assert audit_chain.check(records, head.as_json()) == []
