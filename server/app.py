"""The custom HTTP app the server mounts (`http.app` in `langgraph.json`).

Its lifespan recovers the dev server after a crash and starts the watcher (notices,
deadlines); its routes (`server.routes`) serve the
audit trail, and the inbox and the web app as they land.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from starlette.applications import Starlette

from server.recovery import recover_after_crash
from server.routes import ROUTES
from server.watcher import Watcher

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


@asynccontextmanager
async def lifespan(_app: Starlette) -> AsyncIterator[None]:
    """Recover what a crash of `langgraph dev` left behind, before the server takes requests."""
    await recover_after_crash()
    watcher = asyncio.create_task(Watcher().run(), name="hitl-watcher")
    try:
        yield
    finally:
        watcher.cancel()


app = Starlette(routes=ROUTES, lifespan=lifespan)
