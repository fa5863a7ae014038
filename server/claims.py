"""Claims on interrupts being answered, so two answers to one approval give one outcome.

In-process (the dev server and each production worker): a claim is taken synchronously,
after every check and before the run is created, and lapses after `HOLD_SECONDS` so a
resume whose run never started cannot wedge the approval. Across workers, side effects
stay single through their tool-call-id idempotency.
"""

from __future__ import annotations

import time

from server.resume_gate import ResumeRefused

HOLD_SECONDS = 30.0
_taken: dict[str, tuple[float, str]] = {}


def take(interrupt_ids: list[str], who: str) -> None:
    """Claim every id for `who`, or none of them.

    Raises:
        ResumeRefused: 409 naming who is already answering one of them.
    """
    now = time.monotonic()
    for stale in [i for i, (at, _) in _taken.items() if now - at > HOLD_SECONDS]:
        del _taken[stale]
    for interrupt_id in interrupt_ids:
        if interrupt_id in _taken:
            msg = f"Interrupt {interrupt_id} is already being answered by {_taken[interrupt_id][1]}."
            raise ResumeRefused(409, msg)
    for interrupt_id in interrupt_ids:
        _taken[interrupt_id] = (now, who)
