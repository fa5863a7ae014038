"""How long the approval gate's own work takes when it pauses a run, for whoever listens.

The gate runs inside the graph, which knows nothing of the server; the server's metrics
(`server.insight.metrics`) listen here and observe each pause in `hitl_gate_seconds{phase="pause"}`.
Not a profiler: one number per pause, the time from the gate's first look at the calls to the
interrupt (policy, descriptions, the answer contract).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from langgraph.errors import GraphInterrupt

logger = logging.getLogger(__name__)
Listener = Callable[[str, float], None]
_listeners: list[Listener] = []


def listen(listener: Listener) -> None:
    """Call `listener(phase, seconds)` for each timed phase from now on."""
    if listener not in _listeners:
        _listeners.append(listener)


@contextmanager
def pausing(since: float) -> Iterator[None]:
    """Report the gate's work since `since` (`time.perf_counter()`) as a `pause` if the enclosed interrupts.

    On a resume the same code runs again and the interrupt returns the answer: not a pause.
    """
    try:
        yield
    except GraphInterrupt:
        _report("pause", time.perf_counter() - since)
        raise


def _report(phase: str, seconds: float) -> None:
    for listener in _listeners:
        try:
            listener(phase, seconds)
        except Exception:  # a listener never breaks a pause
            logger.warning("gate timing listener failed", exc_info=True)
