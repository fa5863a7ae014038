"""Section `mcp`: a gated MCP call's approval cycle beside the same local call, and a question's round trip.

One `langgraph dev` serves the two agents of `bench.mcp_agent` beside the demo's billing MCP server
(started as the tests start it, `tests.mcp_lab.beside`). A cycle: the customer asks to void a new
invoice (the run pauses), a supervisor approves (the run voids it), the invoice is checked void.
The two agents take turns in blocks (mcp, local, local, mcp). A question's round trip: billing's
credit note, approved, asks why and then to confirm; each answer is timed from sending it to the
run's end (the next question, or the result).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.offline import phrases
from bench.mcp_agent import LOCAL, MCP
from bench.report import Row, Section
from bench.served import bench_client, repo_config, serving
from bench.stats import Latency
from tests.devserver import DEV_TOKENS
from tests.mcp_lab.beside import mcp_beside

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient
    from rich.progress import Progress

    from bench.sizes import BenchSizes
    from services.registry import Services

ASKER = {"Authorization": f"Bearer {DEV_TOKENS['requester1']}"}
APPROVE = {"decisions": [{"type": "approve"}]}
LIMIT = (
    "the same 2 runs per cycle as a local tool, plus the MCP call's own work on loopback: a new connection "
    "(no session is kept across the pause; the server's discover answer is remembered), the tool listed "
    "again on it (the approved schema's check) and the call: 2 requests to billing, itself a Python "
    "process on the same 2 cores"
)


def mcp_config() -> dict[str, Any]:
    """The repository's configuration serving the two bench agents (and nothing else)."""
    config = repo_config()
    config["dependencies"] = [str(Path(__file__).resolve().parents[1])]
    config["graphs"] = {MCP: "bench.mcp_agent:mcp_graph", LOCAL: "bench.mcp_agent:local_graph"}
    return config


def new_invoice(services: Services) -> str:
    """An open invoice of 100 for requester1 in the business database billing serves; its id."""
    invoice_id = f"INV-{uuid.uuid4().int % 10**9:09d}"
    services.invoices.add(invoice_id, order_id="A1024", amount=100, owner="requester1")
    return invoice_id


async def one_cycle(client: LangGraphClient, agent: str, services: Services) -> float:
    """One void through `agent`: asked, paused, approved, done; its duration in seconds.

    Raises:
        RuntimeError: the invoice is not void after the cycle.
    """
    invoice_id = new_invoice(services)
    started = time.perf_counter()
    thread = await client.threads.create(headers=ASKER)
    said = {"messages": [{"role": "user", "content": phrases.void_invoice(invoice_id)}]}
    await client.runs.wait(thread["thread_id"], agent, input=said, headers=ASKER)
    await client.runs.wait(thread["thread_id"], agent, command={"resume": APPROVE})
    elapsed = time.perf_counter() - started
    if services.invoices.get(invoice_id)["status"] != "void":
        msg = f"{agent}: {invoice_id} is not void after its approval"
        raise RuntimeError(msg)
    return elapsed


async def one_question_flow(client: LangGraphClient, services: Services) -> list[float]:
    """Billing's credit note: approved, its two questions answered; each answer's round trip in seconds."""
    invoice_id = new_invoice(services)
    thread = await client.threads.create(headers=ASKER)
    thread_id = thread["thread_id"]
    said = {"messages": [{"role": "user", "content": phrases.credit_invoice(10, invoice_id)}]}
    await client.runs.wait(thread_id, "support", input=said, headers=ASKER)
    await client.runs.wait(thread_id, "support", command={"resume": APPROVE})
    trips = []
    for content in ({"reason": "Bench"}, {"confirm": True}):
        pending = [i for b in ((await client.threads.get(thread_id))["interrupts"] or {}).values() for i in b]
        answer = {pending[0]["id"]: {"action": "accept", "content": content}}
        started = time.perf_counter()
        await client.runs.wait(thread_id, "support", command={"resume": answer}, headers=ASKER)
        trips.append(time.perf_counter() - started)
    if len(services.invoices.credit_notes(invoice_id)) != 1:
        msg = f"the credit note on {invoice_id} was not written once"
        raise RuntimeError(msg)
    return trips


def measure(sizes: BenchSizes, progress: Progress) -> Section:
    """The `mcp` section: its two rows and the raw samples."""
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        (Path(tmp) / "server").mkdir()
        # billing runs where the server does (the same DATA_DIR): one business database for both
        with mcp_beside(Path(tmp) / "server", lab_agent=False) as beside:
            config = mcp_config()
            config["graphs"]["support"] = repo_config()["graphs"]["support"]
            with serving(Path(tmp), config, extra_env=beside.env) as server:
                return asyncio.run(_measure(server, sizes, progress))


async def _measure(server: Any, sizes: BenchSizes, progress: Progress) -> Section:  # noqa: ANN401
    client = bench_client(server)
    services = server.services
    samples: dict[str, list[float]] = {MCP: [], LOCAL: []}
    task = progress.add_task("MCP cycles", total=2 * sizes.mcp_cycles + sizes.mcp_questions)
    try:
        for agent in (MCP, LOCAL):  # warm both (imports, the first listing, the first connection)
            await one_cycle(client, agent, services)
        per_turn = max(1, sizes.mcp_cycles // 4)
        for order in ((MCP, LOCAL), (LOCAL, MCP)) * 2:
            for agent in order:
                for _ in range(per_turn):
                    samples[agent].append(await one_cycle(client, agent, services))
                    progress.advance(task)
        trips = []
        for _ in range(sizes.mcp_questions):
            trips += await one_question_flow(client, services)
            progress.advance(task)
    finally:
        await client.aclose()
    mcp, local, asked = Latency.of(samples[MCP]), Latency.of(samples[LOCAL]), Latency.of(trips)
    return Section(
        name="mcp",
        title="MCP servers' tools under the gate",
        reference="the same tool in the agent's own process, gated alike",
        rows=[
            Row(
                "mcp",
                "gated call's approval cycle, p50",
                "ms",
                mcp.p50 * 1000,
                local.p50 * 1000,
                LIMIT,
                "≤ 1.2x",
            ),
            Row("mcp", "gated call's approval cycle, p90", "ms", mcp.p90 * 1000, local.p90 * 1000, LIMIT),
            Row(
                "mcp",
                "a question's round trip (answer → next question or result), p50",
                "ms",
                asked.p50 * 1000,
                None,
                "one run: the call again from its first round with the answers so far, a connection a round",
            ),
        ],
        details={
            "samples_s": dict(samples),
            "question_round_trips_s": trips,
            "summary": json.loads(
                json.dumps({MCP: mcp.as_dict(), LOCAL: local.as_dict(), "question": asked.as_dict()})
            ),
        },
    )
