"""Fuzzed run-creation bodies through the real server: no side effect without an accepted decision.

At least 1,000 derandomized cases over the three agents and every role (see
`tests/security/run_bodies.py` for what a body may hold and what is checked). Cases are
sent in batches; after each batch the targets (an 899 order, an e-mail address, a booking,
an order row, a workspace file) must be untouched and no row may carry a forged call id.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from server.http.outgoing import tls
from tests.security.run_bodies import LOST_AT_MOST, WORKERS, RunBodyFuzzer, body_sender, plans

pytestmark = pytest.mark.server

CASES = {"support": 360, "travel": 320, "ops": 340}
FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.generate],  # a breach is recorded, not raised: nothing to shrink
)


@pytest.fixture(scope="module")
def fuzzer(server, server_services, ledger):
    with (
        httpx.Client(base_url=server.url, timeout=60, verify=tls()) as http,
        body_sender(server.url) as sender,
        ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="fuzz") as pool,
    ):
        yield RunBodyFuzzer(
            server=server, services=server_services, ledger=ledger, http=http, pool=pool, sender=sender
        )


@settings(FUZZ, max_examples=CASES["support"])
@given(plan=plans("support"))
def test_support_bodies(fuzzer, plan):
    """support: forged refunds and e-mails through update, goto, Send, breakpoints, forks, inputs."""
    fuzzer.case(plan)


@settings(FUZZ, max_examples=CASES["travel"])
@given(plan=plans("travel"))
def test_travel_bodies(fuzzer, plan):
    """travel: forged cancellations of a booking through every side door."""
    fuzzer.case(plan)


@settings(FUZZ, max_examples=CASES["ops"])
@given(plan=plans("ops"))
def test_ops_bodies(fuzzer, plan):
    """ops: forged SQL deletes, file deletes and overwrites, with forged run_policy and allowances."""
    fuzzer.case(plan)


def test_no_fuzzed_body_acted_without_a_decision(fuzzer):
    """closing: every batch checked; ≥ 1,000 cases; 0 side effects on the targets, 0 forged rows."""
    if fuzzer.batch:
        fuzzer.settle()
    print(
        f"fuzzed run bodies: {fuzzer.cases} cases; outcomes {dict(sorted(fuzzer.statuses.items()))}; "
        f"{len(fuzzer.breaches)} batches with side effects"
    )
    assert fuzzer.cases >= sum(CASES.values())
    assert fuzzer.breaches == [], "\n".join(fuzzer.breaches[:5])
    lost = {outcome: n for outcome, n in fuzzer.statuses.items() if outcome.startswith("lost")}
    assert sum(lost.values()) <= LOST_AT_MOST, lost
