"""Money arguments: finite, positive, whole cents, bounded; refused with `amount` named everywhere."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from services.errors import BusinessRuleError
from services.money import MAX_AMOUNT, amount_problem, checked_amount
from tests.conftest import add_order
from tools.support import RefundRequest

ODD = [
    1e-300,
    0.001,
    0.1 + 0.2,
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    0,
    -5,
    10**30,
    MAX_AMOUNT + 0.01,
    True,
    "12",
]
FINE = [0.01, 0.07, 19.99, 300, 899.99, float(MAX_AMOUNT)]


@pytest.mark.parametrize("amount", ODD, ids=repr)
def test_odd_amounts_are_named_problems(amount):
    """Each odd amount has a problem in words; `checked_amount` refuses it naming `amount`."""
    assert amount_problem(amount)
    with pytest.raises(ValueError, match=r"^amount "):
        checked_amount(amount)


@pytest.mark.parametrize("amount", FINE, ids=repr)
def test_amounts_in_cents_pass(amount):
    """Whole-cent amounts up to the bound are money, unchanged."""
    assert amount_problem(amount) is None
    assert checked_amount(amount) == float(amount)


@pytest.mark.parametrize("amount", [a for a in ODD if a != "12"], ids=repr)
def test_the_refund_schema_refuses_odd_amounts_naming_amount(amount):
    """The tool's own argument schema (what the server's answer check is derived from) refuses them."""
    with pytest.raises(ValidationError) as caught:
        RefundRequest.model_validate({"order_id": "A1", "amount": amount, "reason": "r", "tool_call_id": "t"})
    assert [e["loc"] for e in caught.value.errors()] == [("amount",)]


def test_the_refund_json_schema_says_cents():
    """The published schema carries what a JSON Schema validator checks: > 0, ≤ bound, multipleOf 0.01."""
    shown = RefundRequest.model_json_schema()["properties"]["amount"]
    assert shown["exclusiveMinimum"] == 0
    assert shown["maximum"] == MAX_AMOUNT
    assert shown["multipleOf"] == 0.01


@pytest.mark.parametrize("amount", [1e-300, math.nan, math.inf, -0.0, 0.005, 10**30], ids=repr)
def test_payments_refuse_odd_amounts_and_write_nothing(services, amount):
    """The last wall: the service refuses (naming amount), writes no refund; the order stays refundable."""
    order_id = add_order(services, 300)
    with pytest.raises(BusinessRuleError, match="amount"):
        services.payments.issue_refund(
            tool_call_id=f"t-{amount!r}", order_id=order_id, amount=amount, reason="x"
        )
    assert services.payments.refunds_for(order_id) == []
    refund = services.payments.issue_refund(tool_call_id="real", order_id=order_id, amount=300, reason="x")
    assert refund["amount"] == 300
