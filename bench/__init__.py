"""Benchmarks: what a human in the loop costs here, measured beside a stock Deep Agent.

`python -m bench` (or `make bench`) writes `bench/RESULTS.md` and `bench/results.json`.
Benchmarks, not tests: nothing in `make test` depends on a time.
"""
