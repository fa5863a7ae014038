"""Latency summaries: p50, p90 and p95 of a list of samples, nothing more.

Percentiles by linear interpolation between the closest ranks, so two samples already give
a p90; one sample is its own p50 and p90.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True)
class Latency:
    """p50, p90 and count of a set of durations, in seconds."""

    p50: float
    p90: float
    count: int

    @classmethod
    def of(cls, samples: Sequence[float]) -> Latency:
        """Summarise `samples` (seconds).

        Raises:
            ValueError: when there are no samples.
        """
        if not samples:
            raise ValueError("no samples to summarise")
        if len(samples) == 1:
            return cls(p50=samples[0], p90=samples[0], count=1)
        deciles = statistics.quantiles(samples, n=10, method="inclusive")
        return cls(p50=statistics.median(samples), p90=deciles[8], count=len(samples))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def median(samples: Sequence[float]) -> float:
    """The median of `samples`."""
    return statistics.median(samples)


def p95(samples: Sequence[float]) -> float:
    """The 95th percentile of `samples` (linear between the closest ranks; one sample is its own).

    Raises:
        ValueError: when there are no samples.
    """
    if not samples:
        raise ValueError("no samples to summarise")
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=20, method="inclusive")[18]


def tail_summary(samples: Sequence[float]) -> dict[str, float]:
    """p50, p95, the largest and the count of `samples`: what a row with a p95 target shows."""
    return {"p50": median(samples), "p95": p95(samples), "max": max(samples), "count": len(samples)}
