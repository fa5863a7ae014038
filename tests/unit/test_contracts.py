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


def test_the_form_and_the_approval_request_are_published_with_their_answers():
    """coverage: the flight-booking form, request_approval and their answers, with the choices spelled out."""
    defs = contracts_schema()["$defs"]
    assert defs["FlightBookingForm"]["properties"]["form"]["const"] == "flight-booking"
    assert defs["FlightBookingAnswer"]["properties"]["seat_class"]["enum"] == [
        "economy",
        "premium",
        "business",
    ]
    assert defs["FlightBookingAnswer"]["additionalProperties"] is False
    assert defs["ApprovalRequest"]["properties"]["type"]["const"] == "approval_request"
    assert defs["ApprovalAnswer"]["required"] == ["approved"]
