"""Edits typed as text (Agent Chat UI): numbers and booleans the tool takes are read as such."""

from __future__ import annotations

import pytest
from langchain_core.tools import tool

from hitl.contracts.edits import coerce_text_args, typed_text


@tool
def book(seats: int, price: float, insured: bool, note: str, code: str | None = None) -> str:  # noqa: FBT001
    """Book seats."""
    return f"{seats} {price} {insured} {note} {code}"


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ({"seats": "2", "price": "250", "insured": "true"}, {"seats": 2, "price": 250, "insured": True}),
        (
            {"seats": "-3", "price": "99.50", "insured": "false"},
            {"seats": -3, "price": 99.5, "insured": False},
        ),
        (  # only the canonical form: no spaces, exponent, sign or capital
            {"seats": " 3 ", "price": "1e3", "insured": "False"},
            {"seats": " 3 ", "price": "1e3", "insured": "False"},
        ),
        ({"price": "+250"}, {"price": "+250"}),
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


@pytest.mark.parametrize("sent", [{"price": "300 "}, {"price": "3e2"}, {"seats": "+2"}, {"insured": "True"}])
def test_text_left_in_a_typed_field_is_named(sent):
    """typed_text: what the canonical form does not cover is named, for the server's 422."""
    assert typed_text(coerce_text_args(sent, book), book) == list(sent)


def test_text_fields_and_real_numbers_are_never_named():
    """typed_text: a JSON number, a canonical text number (once read) and a text field pass."""
    sent = {"seats": 2, "price": "250", "note": "300 ", "code": "3e2"}
    assert typed_text(coerce_text_args(sent, book), book) == []
