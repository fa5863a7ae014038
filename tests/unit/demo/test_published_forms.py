"""The demo's forms and sign-off as the layer publishes them for clients (`make schemas`)."""

from __future__ import annotations

from pathlib import Path

from hitl.contracts.publish import contracts_schema, forms_schema
from hitl.policy.served import load_graphs

ROOT = Path(__file__).resolve().parents[3]


def test_the_forms_and_the_approval_request_are_published_with_their_answers():
    """coverage: the demo's flight-booking form, request_approval and their answers, choices spelled out."""
    load_graphs(ROOT / "langgraph.json")
    forms = forms_schema()["$defs"]
    assert forms["FlightBookingForm"]["properties"]["form"]["const"] == "flight-booking"
    assert forms["FlightBookingAnswer"]["properties"]["seat_class"]["enum"] == [
        "economy",
        "premium",
        "business",
    ]
    assert forms["FlightBookingAnswer"]["additionalProperties"] is False
    defs = contracts_schema()["$defs"]
    assert "FlightBookingForm" not in defs
    assert defs["ApprovalRequest"]["properties"]["type"]["const"] == "approval_request"
    assert defs["ApprovalAnswer"]["required"] == ["approved"]
