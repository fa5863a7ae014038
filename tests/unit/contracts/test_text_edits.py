"""Edits typed as text (Agent Chat UI): numbers and booleans the tool takes are read as such."""

from __future__ import annotations

import pytest
from langchain_core.tools import tool

from hitl.contracts.edits import coerce_text_args


@tool
def book(seats: int, price: float, insured: bool, note: str, code: str | None = None) -> str:  # noqa: FBT001
    """Book seats."""
    return f"{seats} {price} {insured} {note} {code}"


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ({"seats": "2", "price": "250", "insured": "true"}, {"seats": 2, "price": 250, "insured": True}),
        (
            {"seats": " 3 ", "price": "99.5", "insured": "False"},
            {"seats": 3, "price": 99.5, "insured": False},
        ),
        ({"price": "1e3"}, {"price": 1000.0}),
        ({"note": "42", "code": "7"}, {"note": "42", "code": "7"}),  # text fields stay text
        (
            {"seats": "two", "price": "12,50", "insured": "yes"},
            {"seats": "two", "price": "12,50", "insured": "yes"},
        ),
        ({"seats": "2.5", "price": "nan"}, {"seats": "2.5", "price": "nan"}),  # no silent rounding, no NaN
        ({"seats": 4, "unknown": "5"}, {"seats": 4, "unknown": "5"}),
    ],
)
def test_text_becomes_what_the_schema_names_or_stays_for_the_check_to_refuse(sent, read):
    assert coerce_text_args(sent, book) == read


def test_a_tool_without_a_schema_is_left_alone():
    assert coerce_text_args({"amount": "5"}, None) == {"amount": "5"}
