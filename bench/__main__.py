"""`python -m bench`: run every benchmark with the sizes from the command line or `BENCH_*`."""

from __future__ import annotations

import sys

from pydantic_settings import CliApp

from bench.run import run_benchmarks
from bench.sizes import BenchSizes

if __name__ == "__main__":
    sys.exit(0 if run_benchmarks(CliApp.run(BenchSizes)).ok else 1)
