"""At start-up, every served agent's MCP servers listed once: what each offers, and what is gated.

The first listing is what an agent vets (`hitl.mcp.toolbox`): a tool a server lists later is gated
until a policy names it or the next start. It runs beside the start, not before it: a server that
is down or slow delays nothing (its tools are then all gated until a restart lists them). One line
per server goes to the log. Not for offering or running the tools (the toolboxes do).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from hitl.policy.served import AgentCard

logger = logging.getLogger(__name__)


def list_at_start(cards: Iterable[AgentCard]) -> asyncio.Task[list[str]] | None:
    """Start listing every toolbox of `cards` in the background; None when no agent declares a server."""
    boxes = [box for card in cards for box in card.toolboxes]
    if not boxes:
        return None

    async def listing() -> list[str]:
        said = [line for lines in await asyncio.gather(*(box.start() for box in boxes)) for line in lines]
        for line in dict.fromkeys(said):
            logger.info("%s", line)
        return said

    return asyncio.create_task(listing(), name="hitl-mcp-start")
