"""The LangChain private names the gate builds on still exist and still do what it relies on.

When a LangChain upgrade changes one, this file says which, instead of a gate failing at run time.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Annotated

import pytest
from langchain_core.messages import ToolMessage
from pydantic import BaseModel, TypeAdapter, ValidationError, WrapValidator

from hitl.gate import langchain_hitl

ROOT = Path(__file__).resolve().parents[3]
CALL = {"name": "issue_refund", "args": {"amount": 5}, "id": "call-1", "type": "tool_call"}


def test_every_private_name_is_there():
    assert langchain_hitl.missing() == []


def test_answer_message_turns_a_reject_and_a_respond_into_the_models_tool_message():
    rejected = langchain_hitl.answer_message(CALL, {"type": "reject", "message": "Too much"})
    assert isinstance(rejected, ToolMessage)
    assert (rejected.tool_call_id, rejected.name, rejected.status) == ("call-1", "issue_refund", "error")
    assert "Too much" in rejected.text
    answered = langchain_hitl.answer_message(CALL, {"type": "respond", "message": "Order A1024"})
    assert answered.text == "Order A1024"


def test_as_sent_checks_then_passes_the_answer_on_unchanged():
    class Amount(BaseModel):
        amount: float

    checked = TypeAdapter(Annotated[Amount, WrapValidator(langchain_hitl.as_sent)])
    sent = {"amount": "5"}
    assert checked.validate_python(sent) is sent  # not coerced, not copied: the tool validates once
    with pytest.raises(ValidationError):
        checked.validate_python({"amount": "five"})


def test_the_stock_state_still_carries_reviewer_edits():
    assert "hitl_edited_tool_calls" in langchain_hitl.HumanInTheLoopState.__annotations__


def test_no_other_module_imports_a_private_langchain_name():
    offenders = []
    for path in [*(ROOT / "hitl").rglob("*.py"), *(ROOT / "server").rglob("*.py")]:
        if path.name == "langchain_hitl.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("langchain"):
                offenders += [
                    f"{path.relative_to(ROOT)}: {a.name}" for a in node.names if a.name.startswith("_")
                ]
    assert offenders == []
