"""How a tool hands a service's answer or refusal back to the model."""

from __future__ import annotations

import json
from functools import wraps
from typing import TYPE_CHECKING, Any, ParamSpec

from langchain_core.tools import ToolException

from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from collections.abc import Callable

P = ParamSpec("P")


def as_json(value: object) -> str:
    """A compact JSON rendering the model (scripted or real) can read back."""
    return json.dumps(value, sort_keys=True, default=str)


def refusals_as_tool_errors(func: Callable[P, Any]) -> Callable[P, Any]:
    """Turn a `BusinessRuleError` into a `ToolException`, which the model sees as an error."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:  # noqa: ANN401
        try:
            return func(*args, **kwargs)
        except BusinessRuleError as error:
            raise ToolException(str(error)) from error

    return wrapper
