"""An expenses agent as a team writes one, with names `hitl` exports and nothing deeper of the layer.

`reimburse` waits for a reviewer above 100 (a supervisor above 1,000); the `receipt_checker`
subagent has its own `interrupt_on` (a supervisor decides `flag_receipt`); `explain_missing_receipt`
asks the thread's owner a form of its own (`register_form(...).ask`). One offline script serves the
agent and its subagent: the parent's rule calls `task` with the subagent's name, the subagent's rule
reads the task it was given. The test's own imports are checked to come from `hitl` only.
"""

from __future__ import annotations

import ast
import uuid
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain.tools import ToolRuntime  # noqa: TC002  (LangChain reads the tool's annotations at run time)
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hitl import (
    Call,
    Decider,
    NobodyNamedError,
    Rule,
    Script,
    ToolGate,
    acting_for,
    create_deep_agent,
    in_process,
    register_form,
)
from tests.graphs.layer.threads import Conversation

APPROVE = {"decisions": [{"type": "approve"}]}


class MissingReceipt(BaseModel):
    """What the employee says about an expense without a receipt."""

    model_config = ConfigDict(extra="forbid", title="Missing receipt")

    reason: str = Field(min_length=3, description="Why there is no receipt.")
    lost: bool = Field(default=False, description="The receipt existed and was lost.")


MISSING_RECEIPT = register_form("missing-receipt", MissingReceipt)


def reimbursement_decider(args: dict[str, Any]) -> Decider:
    """Above 1,000 a supervisor decides; below, a reviewer."""
    return "supervisor" if float(args["amount"]) > 1000 else "reviewer"


OFFLINE = Script(
    Rule(
        r"reimburse (?P<amount>\d+) to (?P<employee>\w+)",
        calls=[Call("reimburse", {"employee": "{employee}", "amount": "{amount}"})],
        then="Reimbursed {employee}: {result}",
        refused="I did not reimburse {employee}: {result}",
        example="Reimburse 250 to ana",
    ),
    Rule(
        r"ask the receipt checker to flag (?P<receipt>R-\d+)",
        calls=[
            Call(
                "task", {"description": "Flag receipt {receipt}: altered", "subagent_type": "receipt_checker"}
            )
        ],
        then="The receipt checker says: {result}",
        refused="The receipt checker could not: {result}",
    ),
    Rule(
        r"flag receipt (?P<receipt>R-\d+): (?P<reason>.+)",
        calls=[Call("flag_receipt", {"receipt_id": "{receipt}", "reason": "{reason}"})],
        then="Flagged {receipt}.",
        refused="Not flagged: {result}",
    ),
    Rule(
        r"lost the receipt for (?P<expense>E-\d+)",
        calls=[Call("explain_missing_receipt", {"expense_id": "{expense}"})],
        then="Noted for {expense}: {result}",
    ),
)


def expenses(books: dict[str, Any]) -> Any:
    """The agent, writing what it does to `books`; each side effect once per tool call id."""

    @tool
    def reimburse(employee: str, amount: float, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Reimburse an employee's expense."""
        books.setdefault("paid", {}).setdefault(tool_call_id, (employee, amount))
        return f"paid {amount:g}"

    @tool
    def flag_receipt(receipt_id: str, reason: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Flag a receipt as suspect."""
        books.setdefault("flagged", {}).setdefault(tool_call_id, (receipt_id, reason))
        return f"flagged {receipt_id}"

    @tool
    def explain_missing_receipt(expense_id: str, runtime: ToolRuntime) -> str:
        """Ask the employee why an expense has no receipt."""
        answer = MISSING_RECEIPT.ask(
            runtime, title=f"No receipt for {expense_id}", context={"expense": expense_id}
        )
        books.setdefault("answers", []).append(answer)
        return f"{'lost' if answer.lost else 'none'}: {answer.reason}"

    return create_deep_agent(
        None,
        [reimburse, explain_missing_receipt],
        system_prompt="You reimburse expenses.",
        interrupt_on={
            "reimburse": ToolGate(
                allowed_decisions=("approve", "edit", "reject"),
                auto_approve_limit=100,
                decider=reimbursement_decider,
                fixed_on_edit=("employee",),
            )
        },
        subagents=[
            {
                "name": "receipt_checker",
                "description": "Checks receipts and flags suspect ones.",
                "system_prompt": "You check receipts.",
                "tools": [flag_receipt],
                # The subagent's own gates: they replace the parent's, they are not added to them.
                "interrupt_on": {
                    "flag_receipt": ToolGate(allowed_decisions=("approve", "reject"), decider="supervisor")
                },
            }
        ],
        name="expenses",
        offline=OFFLINE,
        checkpointer=InMemorySaver(),
    )


def chat(books: dict[str, Any]) -> Conversation:
    return Conversation(expenses(books), str(uuid.uuid4()))


def test_a_reimbursement_over_the_threshold_waits_and_one_below_it_does_not():
    """reimburse 80: paid at once; 250 waits for a reviewer (no "always allow": not opted in), paid once."""
    books: dict[str, Any] = {}
    assert chat(books).say("Reimburse 80 to bo").interrupts == ()
    conversation = chat(books)
    [pending] = conversation.say("Reimburse 250 to ana").interrupts
    config = pending.value["review_configs"][0]
    assert (config["action_name"], config["required_role"]) == ("reimburse", "reviewer")
    assert "may_allow" not in config
    conversation.resume(APPROVE)
    assert sorted(books["paid"].values()) == [("ana", 250), ("bo", 80)]


def test_the_subagent_asks_at_its_own_gate():
    """receipt_checker's flag_receipt: the interrupt names it and a supervisor; approve flags once."""
    books: dict[str, Any] = {}
    conversation = chat(books)
    [pending] = conversation.say("Ask the receipt checker to flag R-9").interrupts
    [action] = pending.value["action_requests"]
    assert (pending.value["agent"], action["name"]) == ("receipt_checker", "flag_receipt")
    assert pending.value["review_configs"][0]["required_role"] == "supervisor"
    conversation.resume(APPROVE)
    assert list(books["flagged"].values()) == [("R-9", "altered")]
    assert "Flagged R-9" in conversation.last_words()


def test_the_form_asks_the_owner_and_the_tool_gets_the_answer_as_its_model():
    """Form.ask: a form naming agent and call; a bad answer is refused; a good one arrives as the model."""
    books: dict[str, Any] = {}
    conversation = chat(books)
    [pending] = conversation.say("I lost the receipt for E-3").interrupts
    value = pending.value
    assert (value["type"], value["form"], value["title"]) == ("form", "missing-receipt", "No receipt for E-3")
    assert (value["agent"], value["context"]) == ("expenses", {"expense": "E-3"})
    assert value["tool_call_id"]
    for bad in ({"reason": "no"}, {"reason": "left it in a taxi", "paid": True}):
        with pytest.raises(ValidationError):
            conversation.resume({pending.id: bad})
        assert len(conversation.pending()) == 1
    conversation.resume({pending.id: {"reason": "left it in a taxi", "lost": True}})
    assert books["answers"] == [MissingReceipt(reason="left it in a taxi", lost=True)]
    assert "Noted for E-3: lost: left it in a taxi" in conversation.last_words()


def test_this_agent_uses_only_names_the_hitl_package_exports():
    """every import of the layer in this module is `from hitl import ...`, of names in `hitl.__all__`."""
    import hitl  # noqa: PLC0415

    tree = ast.parse(Path(__file__).read_text())
    layer = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hitl"
    ]
    assert [node.module for node in layer] == ["hitl"]
    assert {alias.name for node in layer for alias in node.names} <= set(hitl.__all__)


def test_a_teams_tool_asks_whose_records_it_works_on():
    """acting_for: the owner the server names; in-process said so: None (every record); nobody: refused."""
    server_run = {"run_id": "r", "assistant_id": "a", "graph_id": "expenses", "thread_id": "t"}
    named = {**server_run, "hitl_acting_for": {"identity": "ana", "roles": ["requester", "finance"]}}
    person = acting_for({"configurable": named})
    assert person is not None
    assert (person.identity, sorted(person.roles)) == ("ana", ["finance", "requester"])
    assert acting_for(in_process("t")) is None
    for nobody in ({"configurable": server_run}, {"configurable": {"thread_id": "t"}}):
        with pytest.raises(NobodyNamedError, match=r"names nobody|does not name"):
            acting_for(nobody)
