"""The server's own in-process API calls, told apart from a client's.

The in-process `langgraph_sdk.get_client()` runs inside the caller's auth context, so the
auth handlers would filter the server's own reads by the caller's rights. Code that must
see a thread as it is (the resume gate, the audit trail) wraps its calls in `as_server()`.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client

if TYPE_CHECKING:
    from collections.abc import Iterator

    from server.identity.users import User

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


async def visible_thread(thread_id: str, user: User) -> dict[str, Any] | None:
    """The thread as it is, if `user` may see it (its owner, or staff); None as for no such thread."""
    try:
        with as_server():
            thread: dict[str, Any] = dict(await get_client().threads.get(thread_id))
    except Exception:  # noqa: BLE001  (any lookup failure reads as "no such thread" to the caller)
        return None
    metadata = thread.get("metadata") or {}
    if not user.is_staff and metadata.get("owner") != user.identity:
        return None
    return thread
