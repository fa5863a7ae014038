"""How much `make bench` measures: every size, from the command line or a `BENCH_*` variable.

`python -m bench --help` lists them. Sections 1-6 finish in about 17 minutes on 2 cores, most
of it making 10,000 real pending approvals (the replica section: about 2); section 7 makes
100,000 on a replica set, about 10 per second on a shared 2-core machine (nearly 3 hours;
`--org-keep DIR` keeps them for the next run, `--only org_scale` runs that section alone). The
smoke test passes tiny ones. Sizes only: what is measured lives in the section modules.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

BENCH_DIR = Path(__file__).resolve().parent


class BenchSizes(BaseSettings):
    """Sizes and switches of one benchmark run (`--cycles 50` or `BENCH_CYCLES=50`)."""

    model_config = SettingsConfigDict(
        env_prefix="BENCH_",
        cli_kebab_case=True,
        cli_implicit_flags=True,
        cli_prog_name="python -m bench",
        extra="ignore",
    )

    cycles: int = Field(default=100, ge=1, description="In-process approval cycles timed per agent.")
    warmup: int = Field(default=5, ge=0, description="Untimed in-process cycles per agent first.")
    concurrency: list[int] = Field(
        default=[1, 10, 50], description="Concurrent clients for the approval cycle through the server."
    )
    server_cycles_min: int = Field(
        default=200,
        ge=1,
        description=(
            "Server cycles per agent at each concurrency, at least: below 10 clients a round of a few "
            "seconds would weigh one of the runtime's 10-second snapshot writes by where it fell."
        ),
    )
    server_cycles_per_client: int = Field(
        default=8,
        ge=1,
        description=(
            "Server cycles per agent and concurrent client (if more than the minimum), spread over the "
            "agent's rounds (ramp-up and the last stragglers weigh less in longer rounds)."
        ),
    )
    server_blocks: int = Field(
        default=2,
        ge=1,
        description=(
            "Blocks of rounds at each concurrency, each (ours, stock, stock, ours): a cost that drifts "
            "through the run (the runtime's stores grow) falls on both agents alike."
        ),
    )
    footprint_pending: int = Field(
        default=500, ge=1, description="Pending approvals created per agent to measure memory and disk."
    )
    inbox_sizes: list[int] = Field(
        default=[1000, 10000],
        description=(
            "Pending approvals in the server when the inbox is listed. Each is a real run (about 15 "
            "per second on 2 cores): 10,000 take about 10 min of the run."
        ),
    )
    inbox_page: int = Field(default=50, ge=1, description="Pending approvals on the first inbox page.")
    inbox_queue_page: int = Field(
        default=500, ge=1, le=500, description="Page size when listing the whole queue (/inbox allows 500)."
    )
    inbox_repeats: int = Field(default=15, ge=1, description="First-page listings timed at each inbox size.")
    refused_writes: int = Field(
        default=1000,
        ge=0,
        description="Refused writes (409 DELETEs, 404 PATCHes) sent before the first page is timed again "
        "at the last inbox size (0: none).",
    )
    fill_window: int = Field(
        default=100, ge=1, le=100, description="Runs in flight while pending approvals are created."
    )
    startup_runs: int = Field(default=2, ge=1, description="Server starts timed per configuration.")
    import_runs: int = Field(default=5, ge=1, description="Graph imports timed per agent.")
    replica_counts: list[int] = Field(
        default=[1, 2, 4],
        description="Replicas the approval throughput is measured on (the smallest is the reference).",
    )
    replica_concurrency: list[int] = Field(
        default=[10, 50], description="Concurrent clients for the approval cycle across replicas."
    )
    replica_cycles_per_client: int = Field(
        default=4, ge=1, description="Cycles per client at each replica count and concurrency."
    )
    effect_samples: int = Field(
        default=20, ge=1, description="Decisions timed from resume request to refund row, per server."
    )
    flush_wait: float = Field(
        default=11.0,
        ge=0,
        description=(
            "Seconds waited after each footprint batch before reading disk and memory: the in-memory "
            "runtime writes `.langgraph_api/` every 10 s (less only to test the harness)."
        ),
    )
    org_pending: int = Field(
        default=100_000,
        ge=1,
        description=(
            "Pending approvals on the replica set for section 7 (issue 50): real runs of the bench's "
            "pausing graph, about 10 per second on a shared 2-core machine (100,000: nearly 3 hours)."
        ),
    )
    org_fill_minutes: float | None = Field(
        default=None,
        gt=0,
        description=(
            "Stop section 7's fill after this many minutes and measure at what waits then (the rows name "
            "the count); no limit when unset."
        ),
    )
    org_table_rows: int = Field(
        default=1_000_000,
        ge=1,
        description="Rows COPied into the inbox table for its page query (section 7).",
    )
    org_page_repeats: int = Field(default=50, ge=1, description="Inbox pages timed per reader in section 7.")
    org_startup_runs: int = Field(default=2, ge=1, description="Replica starts timed per set in section 7.")
    org_watcher_passes: int = Field(
        default=10, ge=1, description="Watcher passes measured per set in section 7 (2 s apart)."
    )
    org_keep: Path | None = Field(
        default=None,
        description=(
            "Keep section 7's filled replica set (databases and seal key) in this folder and reuse it "
            "next time: a later run only adds what is missing."
        ),
    )
    mcp_cycles: int = Field(
        default=80,
        ge=4,
        description="Approval cycles timed per agent in the MCP section (a gated MCP call, the same local).",
    )
    mcp_questions: int = Field(
        default=20, ge=1, description="Credit notes whose two questions are answered in the MCP section."
    )
    only: list[str] = Field(
        default=[],
        description=(
            "Run only these sections (in_process, first_line, server, footprint, inbox, startup, "
            "replicas, org_scale, mcp); every one when empty. The results files then hold only those."
        ),
    )
    progress: bool = Field(default=True, description="Show progress bars.")
    out_dir: Path = Field(default=BENCH_DIR, description="Where RESULTS.md and results.json are written.")

    def server_cycles(self, concurrency: int) -> int:
        """Cycles per agent at `concurrency`: a whole number per round (2 rounds per block)."""
        rounds = 2 * self.server_blocks
        wanted = max(self.server_cycles_min, self.server_cycles_per_client * concurrency)
        return -(-wanted // rounds) * rounds

    def runs(self, section: str) -> bool:
        """Whether `section` is measured in this run (`only` empty: every section)."""
        return not self.only or section in self.only
