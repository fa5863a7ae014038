"""`server.insight.heap_probe`: off without its variable; with it, each signal writes a reading."""

from __future__ import annotations

import asyncio
import json
import os
import tracemalloc
from typing import TYPE_CHECKING

from server.insight import heap_probe

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def _written(path: Path) -> dict[str, int] | None:
    return json.loads(path.read_text()) if path.exists() else None


async def _reading(path: Path, number: int, sent: int = heap_probe.SIGNAL) -> dict[str, int]:
    os.kill(os.getpid(), sent)
    for _ in range(200):
        await asyncio.sleep(0.01)
        if (found := _written(path)) is not None and found["reading"] == number:
            return found
    msg = f"no reading {number} in {path}"
    raise AssertionError(msg)


async def test_without_its_variable_the_probe_is_not_installed(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(heap_probe.ENV, raising=False)
    assert not heap_probe.install(asyncio.get_running_loop())


async def test_a_signal_starts_tracing_and_later_ones_count_what_stayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    path = tmp_path / "heap.json"
    monkeypatch.setenv(heap_probe.ENV, str(path))
    loop = asyncio.get_running_loop()
    assert heap_probe.install(loop)
    try:
        first = await _reading(path, 1)
        kept = [bytearray(1000) for _ in range(2000)]  # 2 MB that stay alive
        second = await _reading(path, 2)
        assert second["traced_bytes"] - first["traced_bytes"] >= 2_000_000
        del kept
        third = await _reading(path, 3)
        assert third["traced_bytes"] < second["traced_bytes"] - 1_900_000
        assert (await _reading(path, 4, heap_probe.STOP))["traced_bytes"] == 0
        assert not tracemalloc.is_tracing()
    finally:
        loop.remove_signal_handler(heap_probe.SIGNAL)
        loop.remove_signal_handler(heap_probe.STOP)
        tracemalloc.stop()
