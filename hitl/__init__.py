"""The reusable human-in-the-loop layer: settings, models, policies and decision contracts.

Agents, tools and the server import from here; nothing here knows about a particular
business domain except through the policies an agent hands it. `from hitl import
create_deep_agent` is the drop-in for Deep Agents' own (`hitl.deep_agent`), loaded on first use
so that importing any other part of `hitl` does not load Deep Agents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hitl.deep_agent import create_deep_agent

__all__ = ["create_deep_agent"]


def __getattr__(name: str) -> Any:  # noqa: ANN401  (the attribute asked for, of any type)
    """`create_deep_agent`, imported when first asked for.

    Raises:
        AttributeError: for any other name.
    """
    if name == "create_deep_agent":
        from hitl.deep_agent import create_deep_agent  # noqa: PLC0415  (loads Deep Agents on first use)

        return create_deep_agent
    msg = f"module 'hitl' has no attribute {name!r}"
    raise AttributeError(msg)
