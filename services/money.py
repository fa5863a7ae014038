"""Money as the business takes it: a finite, positive amount in whole cents, within a sane bound.

One rule, used in three places: the tools' argument schemas (`Money`, so the server's answer
check refuses an odd edit with the field named, before anything is saved), and the payments
service (`checked_amount`, the last wall). Not for currencies or exchange: amounts are plain.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field

CENTS = 2
"""Decimal places an amount may have: the currency's smallest unit."""
MAX_AMOUNT = 1_000_000_000
"""The largest amount any money argument may carry (a bound, not a business limit)."""


def amount_problem(amount: object) -> str | None:  # noqa: PLR0911  (one return per rule, in order)
    """What is wrong with `amount` as money, in words, or None when it is fine.

    Finite, positive (so never -0), at most `MAX_AMOUNT`, at most `CENTS` decimals
    (so 1e-300 and 0.1 + 0.2 are refused), and a number, never a boolean or text.
    """
    if isinstance(amount, bool) or not isinstance(amount, int | float):
        return f"must be a number (got {_shown(amount)})"
    if isinstance(amount, float) and not math.isfinite(amount):
        return f"must be a finite number (got {_shown(amount)})"
    if amount <= 0:
        return f"must be more than 0 (got {_shown(amount)})"
    if amount > MAX_AMOUNT:
        return f"must be at most {MAX_AMOUNT:,} (got {_shown(amount)})"
    try:
        exponent = Decimal(repr(amount)).as_tuple().exponent
    except InvalidOperation:
        return f"must be a number (got {_shown(amount)})"
    if isinstance(exponent, int) and exponent < -CENTS:
        return f"must be in whole cents, at most {CENTS} decimals (got {_shown(amount)})"
    return None


def checked_amount(amount: object) -> float:
    """`amount` as a float, if it is money (`amount_problem`).

    Raises:
        ValueError: `amount: <what is wrong>`.
    """
    if (problem := amount_problem(amount)) is not None:
        msg = f"amount {problem}"
        raise ValueError(msg)
    return float(amount)  # type: ignore[arg-type]  # amount_problem let only int and float through


def _no_booleans(value: object) -> object:
    if isinstance(value, bool):
        msg = f"must be a number (got {value!r})"
        raise ValueError(msg)  # noqa: TRY004  (pydantic reports ValueError as the field's error)
    return value


def _in_cents(value: float) -> float:
    if (problem := amount_problem(value)) is not None:
        raise ValueError(problem)
    return value


Money = Annotated[
    float,
    Field(gt=0, le=MAX_AMOUNT, multiple_of=10**-CENTS, allow_inf_nan=False),
    BeforeValidator(_no_booleans),
    AfterValidator(_in_cents),
]
"""A money argument of a tool: its JSON Schema says finite, > 0, ≤ MAX_AMOUNT, a multiple of 0.01."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}…"  # noqa: PLR2004  (a readable prefix)
