"""The published contracts: the checked-in JSON Schemas are what the code defines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hitl.contracts.forms import answer_of, register_form
from hitl.contracts.publish import FORMS_PATH, SCHEMA_PATH, contracts_schema
from tests.fresh_interpreter import last_line

ROOT = Path(__file__).resolve().parents[3]


def test_the_published_schema_is_up_to_date():
    """drift: `make schemas` output matches hitl/contracts/schemas/contracts.json (the web app's types)."""
    assert json.loads(SCHEMA_PATH.read_text()) == contracts_schema()


def test_the_served_agents_forms_are_published_and_up_to_date():
    """drift: the forms langgraph.json's agents register match web/src/contracts/forms.json (none: no file).

    Read in a fresh interpreter: the forms a test module registers (at its import) are no served agent's.
    """
    served = json.loads(
        last_line(
            "import json; from pathlib import Path; from hitl.policy.served import load_graphs; "
            "from hitl.contracts.publish import "
            "forms_schema; load_graphs(Path('langgraph.json')); print(json.dumps(forms_schema()))"
        )
    )
    published = ROOT / FORMS_PATH
    if not published.exists():
        assert served["$defs"] == {}, "the served agents register forms: publish them with `make schemas`"
        return
    assert json.loads(published.read_text()) == served


def test_the_decision_vocabulary_is_langchains():
    """vocabulary: the contract's DecisionType and InterruptMode are LangChain's, value for value."""
    from typing import get_args  # noqa: PLC0415

    from langchain.agents.middleware import human_in_the_loop as langchain  # noqa: PLC0415

    from hitl.contracts import interrupts  # noqa: PLC0415

    assert get_args(interrupts.DecisionType) == get_args(langchain.DecisionType)
    assert get_args(interrupts.InterruptMode) == get_args(langchain.InterruptMode)


def test_every_contract_is_published():
    """coverage: batched and per-call requests, the batched response, decisions and forms are all there."""
    defs = contracts_schema()["$defs"]
    for name in (
        "BatchedApprovalRequest",
        "BatchedResponse",
        "ToolApprovalRequest",
        "Decision",
        "FormRequest",
    ):
        assert name in defs


def test_a_form_is_known_by_the_name_it_was_registered_under():
    """registry: a form's answer is found by name, None for a form nobody registered; no second model."""
    from pydantic import BaseModel  # noqa: PLC0415

    class Answer(BaseModel):
        ok: bool

    register_form("test-form", Answer)
    register_form("test-form", Answer)
    assert answer_of("test-form") is Answer
    assert answer_of("no-such-form") is None
    assert answer_of(["test-form"]) is None

    class Other(BaseModel):
        ok: bool

    with pytest.raises(ValueError, match="registered already"):
        register_form("test-form", Other)
