"""The server's own in-process API calls, told apart from a client's.

The in-process `langgraph_sdk.get_client()` runs inside the caller's auth context, so the
auth handlers would filter the server's own reads by the caller's rights. Code that must
see a thread as it is (the resume gate, the audit trail) wraps its calls in `as_server()`.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

_AS_SERVER: ContextVar[bool] = ContextVar("hitl_as_server", default=False)


@contextmanager
def as_server() -> Iterator[None]:
    """Run the enclosed in-process API calls with the server's own rights."""
    token = _AS_SERVER.set(True)
    try:
        yield
    finally:
        _AS_SERVER.reset(token)


def is_server() -> bool:
    """Whether the current API call is the server's own."""
    return _AS_SERVER.get()


def is_not_found(error: BaseException) -> bool:
    """Whether an in-process API call failed with 404 (the SDK raises the HTTP error)."""
    return getattr(getattr(error, "response", None), "status_code", None) == 404  # noqa: PLR2004
