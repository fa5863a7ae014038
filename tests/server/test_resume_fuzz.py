"""Fuzzed resumes through the real server: no thread wedged, no gated tool run without a valid decision.

Hypothesis sends random JSON and mutations of valid answers to pending approvals. After
every case the server either refused it (thread still interrupted, same approval, nothing
ran) or accepted it (then the graph agreed: no error, and the refund ran only for an
approve or edit). Every thread is finally answered with a correct resume.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hitl.scripted import phrases
from tests.conftest import add_order

pytestmark = pytest.mark.server

CASES = 1000
SUPERVISOR = {"Authorization": "Bearer dev-supervisor1"}
OWNER = {"Authorization": "Bearer dev-requester1"}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
decision_types = st.sampled_from(["approve", "edit", "reject", "respond", "aprove", "", "APPROVE"])


VALID = {"decisions": [{"type": "approve"}, {"type": "reject"}]}


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """Small, plausible mistakes on a valid answer."""
    answer = copy.deepcopy(VALID)
    decisions = answer["decisions"]
    kind = draw(st.integers(0, 6))
    if kind == 0:
        decisions.pop(draw(st.integers(0, len(decisions) - 1)))
    elif kind == 1:
        decisions.append({"type": draw(decision_types)})
    elif kind == 2:
        decisions[draw(st.integers(0, len(decisions) - 1))]["type"] = draw(decision_types)
    elif kind == 3:
        name = draw(st.sampled_from(["issue_refund", "send_email", "x"]))
        decisions[0] = {"type": "edit", "edited_action": {"name": name, "args": draw(json_values)}}
    elif kind == 4:
        decisions[-1]["message"] = draw(json_values)
    elif kind == 5:
        return {draw(st.text(alphabet="0123456789abcdef", min_size=32, max_size=32)): answer}
    else:
        answer["decisions"] = draw(json_values)
    return answer


@dataclass
class Target:
    """A thread waiting on a batched refund + e-mail approval."""

    server: Any
    services: Any
    order_id: str = ""
    thread_id: str = ""
    interrupt_id: str = ""
    cases: int = 0
    accepted: int = 0
    refused: int = 0
    runs_seen: list[int] = field(default_factory=list)

    def fresh(self, http: httpx.Client) -> None:
        self.order_id = add_order(self.services, 240)
        self.thread_id = http.post("/threads", json={}, headers=OWNER).json()["thread_id"]
        http.post(
            f"/threads/{self.thread_id}/runs/wait",
            json={
                "assistant_id": "support",
                "input": {"messages": [{"role": "user", "content": phrases.refund_and_email(self.order_id)}]},
            },
            headers=OWNER,
        ).raise_for_status()
        thread = http.get(f"/threads/{self.thread_id}", headers=OWNER).json()
        [[pending]] = thread["interrupts"].values()
        self.interrupt_id = pending["id"]

    def refunds(self) -> int:
        return len(self.services.payments.refunds_for(self.order_id))


@pytest.fixture(scope="module")
def target(server):
    return Target(server=server, services=server.services)


@settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(payload=st.one_of(json_values, mutated()))
def test_no_payload_wedges_a_thread_or_runs_a_tool_unapproved(target, payload):
    """invariants: refused → unchanged, still answerable; accepted → graph agreed, ran only if approved."""
    with httpx.Client(base_url=target.server.url, timeout=60) as http:
        if not target.thread_id:
            target.fresh(http)
        target.cases += 1
        answer = http.post(
            f"/threads/{target.thread_id}/runs/wait",
            json={"assistant_id": "support", "command": {"resume": payload}},
            headers=SUPERVISOR,
        )
        thread = http.get(f"/threads/{target.thread_id}", headers=OWNER).json()
        if answer.status_code >= 400:
            target.refused += 1
            assert answer.status_code in {409, 413, 422}, answer.text
            assert thread["status"] == "interrupted"
            assert [i["id"] for batch in thread["interrupts"].values() for i in batch] == [
                target.interrupt_id
            ]
            assert target.refunds() == 0
            return
        target.accepted += 1
        assert thread["status"] == "idle", (payload, thread["status"])
        first = (
            payload["decisions"][0]["type"] if isinstance(payload, dict) and "decisions" in payload else None
        )
        assert target.refunds() == (1 if first in {"approve", "edit"} else 0), payload
        target.fresh(http)


def test_every_fuzzed_thread_is_still_answerable(target):
    """closing: the last pending thread takes a correct answer, and the count of cases is reported."""
    with httpx.Client(base_url=target.server.url, timeout=60) as http:
        if not target.thread_id:
            target.fresh(http)
        http.post(
            f"/threads/{target.thread_id}/runs/wait",
            json={
                "assistant_id": "support",
                "command": {"resume": {"decisions": [{"type": "approve"}, {"type": "reject"}]}},
            },
            headers=SUPERVISOR,
        ).raise_for_status()
    assert target.refunds() == 1
    print(f"fuzzed resumes: {target.cases} cases, {target.refused} refused, {target.accepted} accepted")
    assert target.cases >= CASES
