"""Upgrading from release 52a94d2, whose approval layer kept its records inside the business database.

Today's server starts on the data folder that release's `make dev` left
(`tests/fixtures/legacy-data-52a94d2.tar.gz`, made by `tests/fixtures/make_legacy_data.py`): a 899
refund waiting for a supervisor, a 300 refund approved and made, a 2,400 refund approved by one
supervisor of two. At its first start it moves the layer's records into `data/hitl.db`
(`server.ledger.move`); the business database keeps none of them, every pending approval is still
answerable, and every trail still verifies. `python -m server.ledger.move` does the same by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, inspect, select

from server.ledger.storage import audit_records, decisions
from server.runtime.replicas import stop
from services.registry import Services
from tests.devserver import ROOT, start_dev_server, user_clients
from tests.server.helpers import APPROVE
from tests.server.helpers import decisions as answer

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.devserver import DevServer

pytestmark = pytest.mark.server

LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "legacy-data-52a94d2.tar.gz"


def unpacked(into: Path) -> dict[str, str]:
    """The legacy data folder under `into`; its thread ids by order."""
    with tarfile.open(LEGACY) as packed:
        packed.extractall(into, filter="data")
    return json.loads((into / "threads.json").read_text())


def layer_tables(url: str) -> list[str]:
    return sorted(name for name in inspect(create_engine(url)).get_table_names() if name.startswith("hitl_"))


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory) -> Iterator[tuple[DevServer, dict[str, str]]]:
    """Today's `langgraph dev` started on the legacy data folder."""
    workdir = tmp_path_factory.mktemp("upgrade")
    threads = unpacked(workdir)
    assert "hitl_decisions" in layer_tables(f"sqlite:///{workdir / 'data' / 'business.db'}")
    server = start_dev_server(workdir)
    try:
        yield server, threads
    finally:
        stop(server.process)


def test_the_first_start_moves_every_record_out_of_the_business_database(upgraded):
    """move: the business database holds no layer table; hitl.db holds the trails and the two decisions."""
    server, threads = upgraded
    assert layer_tables(server.database_url) == []
    layer = create_engine(server.layer_url)
    with layer.connect() as conn:
        decided = {r.thread_id: r.reviewer for r in conn.execute(select(decisions))}
        trails = {r.thread_id for r in conn.execute(select(audit_records.c.thread_id))}
    assert decided == {threads["A3072"]: "reviewer1", threads["A4096"]: "supervisor1"}
    assert {threads["A3072"], threads["A4096"]} <= trails


async def test_pending_approvals_stay_answerable_and_trails_verify(upgraded):
    """pending: the 899 refund and the 2,400 quorum are in a supervisor's inbox and answered once each."""
    server, threads = upgraded
    services = Services.open(server.database_url)
    async with user_clients(server.url) as client_as:
        supervisor, supervisor2 = client_as("supervisor1"), client_as("supervisor2")
        inbox = (await supervisor.http.get("/inbox", params={"limit": 100}))["items"]
        assert {threads["A1024"], threads["A4096"]} <= {item["thread_id"] for item in inbox}
        await supervisor.runs.wait(threads["A1024"], "support", command=answer(APPROVE))
        await supervisor2.runs.wait(threads["A4096"], "support", command=answer(APPROVE))
        for order_id, amount in (("A1024", 899.0), ("A3072", 300.0), ("A4096", 2400.0)):
            assert [r["amount"] for r in services.payments.refunds_for(order_id)] == [amount], order_id
            report = await supervisor.http.get(f"/audit/{threads[order_id]}/verification")
            assert report["ok"], report
        quorum = (await supervisor.http.get(f"/audit/{threads['A4096']}"))["records"]
        # The folder was made on 2026-12-05 with 24 h refund deadlines: since then the watcher may
        # escalate (`system`) the waiting refunds at start, before or after these answers.
        assert [(r["decision"], r["reviewer"]) for r in quorum if r["reviewer"] != "system"] == [
            ("approve", "supervisor1"),
            ("approve", "supervisor2"),
        ]
        assert {r["decision"] for r in quorum if r["reviewer"] == "system"} <= {"escalated"}


def test_the_move_by_hand_moves_once_and_says_so(tmp_path):
    """python -m server.ledger.move: rows per table the first time; then nothing to move."""
    unpacked(tmp_path)
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    env.pop("HITL_DATABASE_URL", None)

    def move() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "server.ledger.move"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return done.stdout

    first = move()
    assert "hitl_decisions: 2 rows moved" in first
    assert "hitl_audit_records:" in first
    assert layer_tables(f"sqlite:///{tmp_path / 'data' / 'business.db'}") == []
    assert "Nothing to move" in move()
