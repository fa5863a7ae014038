"""Fuzzed resumes through the real server: no thread wedged, no gated tool run without a valid decision.

Hypothesis sends random JSON and mutations of valid answers to pending approvals of all
three agents: `support`'s batched refund + e-mail, `travel`'s flight-booking form and `ops`'
three per-call interrupts. After every case the server either refused it (the thread still
waits on exactly the same interrupts, nothing ran) or accepted it (no error, and each gated
call acted exactly as its decision says). Finally every thread left waiting takes a correct
answer. The targets, payloads and invariants are in `tests/server/fuzz_targets.py`.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.server.fuzz_targets import PAYLOADS, open_targets

pytestmark = [pytest.mark.server, pytest.mark.long]

CASES = {"support": 200, "travel": 150, "ops": 150}
"""Cases per agent, half what they were (400, 300, 300), for the CPU time each costs the server (~45 ms).
The refusals that matter are also sent deterministically: every kind of bad batched answer in
`test_resume_validation.py`, a bad form answer in `test_travel_server.py`, per-call edits missing
an argument, a valid answer beside an invalid one and a second answer in `test_ops_server.py`,
and any shape of answer in-process in `tests/unit/contracts/test_answer_contract.py`; the draws
here are derandomized, so each run sends the same 500 cases."""
FUZZ = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)


@pytest.fixture(scope="module")
def targets(server):
    with open_targets(server) as opened:
        yield opened


@settings(FUZZ, max_examples=CASES["support"])
@given(plan=PAYLOADS["support"])
def test_support_resumes_never_wedge_or_run_unapproved(targets, plan):
    """support: refused → same batch pending, no refund or e-mail; accepted → each acted as decided."""
    targets["support"].case(plan)


@settings(FUZZ, max_examples=CASES["travel"])
@given(plan=PAYLOADS["travel"])
def test_travel_form_answers_never_wedge_or_book_unapproved(targets, plan):
    """travel: refused → same form pending, no booking; accepted → a booking iff approved, as chosen."""
    targets["travel"].case(plan)


@settings(FUZZ, max_examples=CASES["ops"])
@given(plan=PAYLOADS["ops"])
def test_ops_per_call_answers_never_wedge_or_run_unapproved(targets, plan):
    """ops: refused → all three still pending, nothing written; accepted → only the answered calls acted."""
    targets["ops"].case(plan)


def test_every_fuzzed_thread_is_still_answerable(targets):
    """closing: each agent's last thread, and every thread a partial answer left, takes a correct answer."""
    for target in targets.values():
        thread = target.current or target.take()
        assert target.run(thread, target.correct(thread)), target.agent
        assert not thread.pending
    for target in targets.values():
        for thread in target.left_pending:  # one by one: the checks count rows database-wide
            assert target.run(thread, target.correct(thread)), (target.agent, thread.thread_id)
    for agent, target in targets.items():
        print(
            f"fuzzed resumes, {agent}: {target.cases} cases, {target.refused} refused, "
            f"{target.accepted} accepted; {len(target.left_pending)} partly answered threads finished"
        )
    print(f"fuzzed resumes, total: {sum(t.cases for t in targets.values())} cases")
    for agent, cases in CASES.items():
        assert targets[agent].cases >= cases, agent
