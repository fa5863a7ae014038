"""The gate decides an escalated call by the group the server's escalation gave it to (issue 54, finding 6).

An escalation is the server's record; the server checks an answer against it and names it in
the run (`hitl.gate.deciders.ESCALATED_KEY`), so the gate checks the same decider, not the policy's
first one. A decision the gate still refuses in a server run is on the trail (`not_run`), never
silent. The agents run in-process with the config a server run would have (a signed receipt
for the decided call, as the server gives it).
"""

from __future__ import annotations

from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from agents.offline import phrases
from hitl.gate.deciders import ESCALATED_KEY
from tests.graphs.test_receipt_gate import receipt_for, server_run

APPROVE = Command(resume={"decisions": [{"type": "approve"}]})


def escalated_run(chat, action: dict, identity: str, *roles: str) -> dict:
    """A server run approving `action` as `identity`; its call escalated to finance-leads, their receipt."""
    signed = receipt_for(chat, action, "approve", action["args"], reviewer=identity, roles=roles)
    config = server_run(chat, {action["tool_call_id"]: signed})
    config["configurable"].update(
        {
            "langgraph_auth_user_id": identity,
            "langgraph_auth_permissions": list(roles),
            ESCALATED_KEY: {action["tool_call_id"]: "finance-leads"},
        }
    )
    return config


def waiting_refund(chat, order_id: str) -> dict:
    (pending,) = chat.say(phrases.refund_in_full(order_id)).interrupts
    [action] = pending.value["action_requests"]
    assert pending.value["review_configs"][0]["required_role"] == "reviewer"
    return action


def test_an_escalated_call_runs_on_an_approve_by_the_group_it_went_to(support_agent, services, new_order):
    """lead2 (reviewer + finance-leads) approves the 300 refund escalated to finance-leads: refunded once."""
    order_id = new_order(300)
    chat = support_agent()
    action = waiting_refund(chat, order_id)
    chat.graph.invoke(
        APPROVE, escalated_run(chat, action, "lead2", "reviewer", "finance-leads"), version="v2"
    )
    assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [300.0]


def test_the_old_deciders_approve_of_an_escalated_call_is_not_run_and_the_trail_says_so(
    support_agent, services, new_order
):
    """reviewer1 (the policy's decider, not in finance-leads): 'Not run ... needs someone in finance-leads'.

    No refund, and the trail holds a `not_run` record naming reviewer1's approve and why.
    """
    order_id = new_order(300)
    chat = support_agent()
    chat.graph.store = store = InMemoryStore()
    action = waiting_refund(chat, order_id)
    chat.graph.invoke(APPROVE, escalated_run(chat, action, "reviewer1", "reviewer"), version="v2")
    assert services.payments.refunds_for(order_id) == []
    last = chat.graph.get_state(chat.config).values["messages"][-1].text
    assert "it needs someone in finance-leads" in last, last
    (item,) = store.search(("audit", chat.thread_id))
    record = item.value
    assert (record["decision"], record["outcome"], record["reviewer"], record["tool_call_id"]) == (
        "not_run",
        "refused",
        "reviewer1",
        action["tool_call_id"],
    )
    assert "reviewer1's approve was not applied: it needs someone in finance-leads" in record["message"]


def test_without_an_escalation_the_policys_decider_decides(support_agent, services, new_order):
    """no escalation named: reviewer1 approves the 300 refund under a receipt: refunded once."""
    order_id = new_order(300)
    chat = support_agent()
    action = waiting_refund(chat, order_id)
    config = server_run(chat, {action["tool_call_id"]: receipt_for(chat, action, "approve", action["args"])})
    config["configurable"].update(
        {"langgraph_auth_user_id": "reviewer1", "langgraph_auth_permissions": ["reviewer"]}
    )
    chat.graph.invoke(APPROVE, config, version="v2")
    assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [300.0]
