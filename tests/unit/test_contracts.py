"""The published contracts: the checked-in JSON Schema is what the code defines."""

from __future__ import annotations

import json

from hitl.contracts import SCHEMA_PATH, contracts_schema


def test_the_published_schema_is_up_to_date():
    """drift: `make schemas` output matches hitl/schemas/contracts.json (the web app's type source)."""
    assert json.loads(SCHEMA_PATH.read_text()) == contracts_schema()


def test_every_contract_is_published():
    """coverage: batched and per-call requests, the batched response and decisions are all there."""
    defs = contracts_schema()["$defs"]
    for name in ("BatchedApprovalRequest", "BatchedResponse", "ToolApprovalRequest", "Decision"):
        assert name in defs
