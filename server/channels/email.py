"""E-mail notices (slice 3: not yet)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from hitl.settings import Settings
    from server.resume_gate import Pending


def notices(
    settings: Settings, thread: dict[str, Any], pending: Pending, rows: list[dict[str, Any]], event: str
) -> list[Callable[[], Awaitable[None]]]:
    """One sending attempt per reviewer to tell (none yet)."""
    del settings, thread, pending, rows, event
    return []
