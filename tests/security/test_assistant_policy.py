"""An assistant's settings cannot switch approvals off for everyone, and every change to one is audited.

Issue 29, finding 1: a supervisor's assistant whose `context` ungated `issue_refund` let a
requester's run refund 300 with no pause and no record; patching the system `support`
assistant the same way sent every requester's e-mail unreviewed. Now an assistant's context
and config pass a run's allowlist (audited, loosening by supervisors only), a run inherits
an assistant's loosening only if a supervisor runs it (others keep every gate, audited), and
an assistant keeps its graph. Outcomes are read from the refunds table and the outbox.
"""

from __future__ import annotations

import uuid

import pytest

from agents.offline import phrases
from tests.security.outcomes import headers
from tests.server.helpers import APPROVE, decisions, only_pending

pytestmark = pytest.mark.server

UNGATED_REFUNDS = {"policy": {"tools": {"issue_refund": {"gated": False}}}}
UNGATED_EMAIL = {"policy": {"tools": {"send_email": {"gated": False}}}}


async def run_on(client, assistant_id: str, text: str) -> tuple[str, dict]:
    """A new thread of `client`, one run on `assistant_id` with `text`; the thread after it."""
    thread_id = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread_id, assistant_id, input={"messages": [{"role": "user", "content": text}]})
    return thread_id, await client.threads.get(thread_id)


async def trail(http, name: str) -> list[dict]:
    response = await http.get(f"/audit/{name}")
    assert response.status_code == 200, response.text
    return response.json()["records"]


@pytest.fixture
async def loosened(http_as):
    """A supervisor's support assistant whose context ungates issue_refund; its id."""
    made = await http_as("supervisor1").post(
        "/assistants",
        json={
            "graph_id": "support",
            "name": f"no-refund-review-{uuid.uuid4().hex[:6]}",
            "context": UNGATED_REFUNDS,
        },
    )
    assert made.status_code == 200, made.text
    return made.json()["assistant_id"]


async def test_creating_a_loosened_assistant_is_audited_with_who_and_what(http_as, loosened):
    """POST /assistants by a supervisor: 200, and its trail names supervisor1 and 'ungates issue_refund'."""
    records = (await http_as("reviewer1").get(f"/audit/assistants/{loosened}")).json()["records"]
    assert [(r["decision"], r["reviewer"], r["outcome"]) for r in records] == [
        ("create_assistant", "supervisor1", "accepted")
    ]
    assert "ungates issue_refund" in records[0]["message"]
    assert records[0]["final_args"]["context"] == UNGATED_REFUNDS


@pytest.mark.parametrize("user", ["requester1", "reviewer1"])
async def test_a_non_supervisor_run_on_a_loosened_assistant_still_pauses(
    client_as, http_as, server_order, ledger, loosened, user
):
    """requester/reviewer run on it: the 300 refund pauses, no refund; its loosening audited as refused."""
    order_id = server_order(300)
    thread_id, thread = await run_on(client_as(user), loosened, phrases.refund_amount(300, order_id))
    assert thread["status"] == "interrupted"
    assert only_pending(thread)["value"]["action_requests"][0]["name"] == "issue_refund"
    assert ledger.refunds_of(order_id) == []
    records = await trail(http_as("supervisor1"), thread_id)
    policy = [r for r in records if r["tool"] == "run policy"]
    assert [r["outcome"] for r in policy] == ["refused"], records
    assert "only a supervisor" in policy[0]["refusal"]
    decider = client_as("supervisor1" if user == "reviewer1" else "reviewer1")
    await decider.runs.wait(thread_id, loosened, command=decisions(APPROVE))
    assert ledger.refunds_of(order_id) == [300.0]


async def test_a_supervisor_run_on_a_loosened_assistant_is_loosened_and_audited(
    client_as, http_as, server_order, ledger, loosened
):
    """supervisor1's own run takes the loosening (a supervisor may): refunded once, audited."""
    order_id = server_order(300)
    thread_id, thread = await run_on(client_as("supervisor1"), loosened, phrases.refund_amount(300, order_id))
    assert thread["status"] == "idle"
    assert ledger.refunds_of(order_id) == [300.0]
    records = await trail(http_as("supervisor1"), thread_id)
    assert [(r["decision"], r["outcome"]) for r in records if r["tool"] == "run policy"] == [
        ("loosen_policy", "accepted")
    ]


async def test_patching_the_system_assistant_does_not_unreview_a_requesters_email(
    client_as, http_as, server_order, ledger
):
    """PATCH the system support assistant to ungate send_email: audited; a requester's e-mail still pauses."""
    supervisor = http_as("supervisor1")
    (system,) = (
        await supervisor.post(
            "/assistants/search", json={"graph_id": "support", "metadata": {"created_by": "system"}}
        )
    ).json()
    system_id = system["assistant_id"]
    try:
        patched = await supervisor.patch(f"/assistants/{system_id}", json={"context": UNGATED_EMAIL})
        assert patched.status_code == 200, patched.text
        order_id = server_order(45)
        address = f"{order_id.lower()}@example.com"
        _, thread = await run_on(client_as("requester1"), "support", phrases.email_customer(order_id))
        assert thread["status"] == "interrupted"
        assert ledger.emails_to(address) == 0
    finally:
        restored = await supervisor.patch(
            f"/assistants/{system_id}", json={"context": {}, "config": {"configurable": {}}}
        )
        assert restored.status_code == 200, restored.text
    records = (await http_as("reviewer1").get(f"/audit/assistants/{system_id}")).json()["records"]
    assert [r["decision"] for r in records][-2:] == ["update_assistant", "update_assistant"]
    assert "ungates send_email" in records[-2]["message"]


async def test_an_assistant_keeps_its_graph(client_as, http_as, loosened):
    """PATCH graph_id support → ops: 422 (audited as refused); the assistant still runs support."""
    supervisor = http_as("supervisor1")
    moved = await supervisor.patch(f"/assistants/{loosened}", json={"graph_id": "ops"})
    assert moved.status_code == 422, moved.text
    assert "keeps its graph" in moved.text
    assert (await supervisor.get(f"/assistants/{loosened}")).json()["graph_id"] == "support"
    records = (await supervisor.get(f"/audit/assistants/{loosened}")).json()["records"]
    assert records[-1]["outcome"] == "refused"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"context": {"langgraph_auth_user_id": "supervisor1"}}, 422),
        ({"context": {"policy": {"tools": {"no_such_tool": {"gated": False}}}}}, 422),
        ({"config": {"configurable": {"checkpoint_id": "1efa"}}}, 422),
        ({"config": {"configurable": {"hitl_acting_for": {"identity": "supervisor1"}}}}, 422),
        ({"config": {"configurable": {"hitl_in_process": True}}}, 422),
        ({"context": {"hitl_escalated": {"call": "requester"}}}, 422),
        ({"config": {"webhook": "http://127.0.0.1:1/"}}, 422),
        ({"metadata": {"owner": "requester2"}}, 403),
        ({"config": {"metadata": {"hitl_owner_role": "supervisor"}}}, 403),
    ],
    ids=[
        "context key",
        "unknown tool",
        "fork",
        "acting for",
        "in-process",
        "escalated",
        "config key",
        "owner",
        "owner role",
    ],
)
async def test_an_assistant_takes_only_what_a_run_may_carry(http_as, body, status):
    """create with a key outside a run's allowlist: refused, nothing created."""
    supervisor = http_as("supervisor1")
    name = f"refused-{uuid.uuid4().hex[:8]}"
    made = await supervisor.post("/assistants", json={"graph_id": "support", "name": name, **body})
    assert made.status_code == status, made.text
    found = (await supervisor.post("/assistants/search", json={"metadata": {}, "limit": 1000})).json()
    assert name not in {a["name"] for a in found}


async def test_setting_an_older_version_is_checked_and_audited(http_as, loosened):
    """POST /assistants/{id}/latest: back to version 1 is audited as set_assistant_version."""
    supervisor = http_as("supervisor1")
    tight = {"policy": {"gate_all": True}}
    assert (await supervisor.patch(f"/assistants/{loosened}", json={"context": tight})).status_code == 200
    back = await supervisor.post(f"/assistants/{loosened}/latest", json={"version": 1})
    assert back.status_code == 200, back.text
    records = (await supervisor.get(f"/audit/assistants/{loosened}")).json()["records"]
    assert records[-1]["decision"] == "set_assistant_version", [
        (r["decision"], r["outcome"], r.get("refusal")) for r in records
    ]
    assert "ungates issue_refund" in records[-1]["message"]


@pytest.mark.parametrize("user", ["requester1", "reviewer1", None])
async def test_only_a_supervisor_creates_or_changes_an_assistant(http_as, loosened, user):
    """requester/reviewer: 403, anonymous: 401, for create, patch and latest; the assistant is unchanged."""
    http = http_as(user)
    expected = 401 if user is None else 403
    created = await http.post("/assistants", json={"graph_id": "support", "context": UNGATED_EMAIL})
    patched = await http.patch(f"/assistants/{loosened}", json={"context": UNGATED_EMAIL})
    latest = await http.post(f"/assistants/{loosened}/latest", json={"version": 1})
    assert (created.status_code, patched.status_code, latest.status_code) == (expected,) * 3
    now = (await http_as("supervisor1").get(f"/assistants/{loosened}")).json()
    assert now["context"] == UNGATED_REFUNDS
    assert headers(user) == ({} if user is None else headers(user))


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param({"x-api-key": "dev-requester1"}, id="two-tokens"),
        pytest.param({"Authorization": "Basic c3VwZXJ2aXNvcjE6eA=="}, id="basic-scheme"),
        pytest.param({"Authorization": "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJzdXBlcnZpc29yMSJ9."}, id="jwt"),
        pytest.param({}, id="anonymous"),
    ],
)
async def test_a_change_whose_token_cannot_be_read_is_refused_unapplied_and_leaves_refunds_gated(
    client_as, http_as, server_order, ledger, sent
):
    """PATCH ungating issue_refund with a token no one can be read from: 401, unchanged, nothing audited.

    The change check refuses it itself (fail closed) rather than passing it on unchecked; a
    requester's refund on the assistant still pauses and nothing is refunded.
    """
    supervisor = http_as("supervisor1")
    made = await supervisor.post(
        "/assistants", json={"graph_id": "support", "name": f"gated-{uuid.uuid4().hex[:6]}", "context": {}}
    )
    assert made.status_code == 200, made.text
    assistant_id = made.json()["assistant_id"]
    attacker = http_as("supervisor1" if "x-api-key" in sent else None)
    patched = await attacker.patch(
        f"/assistants/{assistant_id}", json={"context": UNGATED_REFUNDS}, headers=sent
    )
    assert patched.status_code == 401, patched.text
    assert (await supervisor.get(f"/assistants/{assistant_id}")).json()["context"] == {}
    records = (await supervisor.get(f"/audit/assistants/{assistant_id}")).json()["records"]
    assert [r["decision"] for r in records] == ["create_assistant"]
    order_id = server_order(300)
    _, thread = await run_on(client_as("requester1"), assistant_id, phrases.refund_amount(300, order_id))
    assert thread["status"] == "interrupted"
    assert ledger.refunds_of(order_id) == []


@pytest.mark.parametrize("version", [1, 1.0])
async def test_a_rollback_is_checked_whatever_the_type_of_its_number(http_as, loosened, version):
    """POST /assistants/{id}/latest {"version": 1 or 1.0}: version 1's settings are checked and audited.

    Version 1 ungates refunds; version 2 (a patch) ungates e-mail instead: rolling back to 1 is
    audited as what it loosens, whether the number is sent as 1 or 1.0 (never "no policy change").
    """
    supervisor = http_as("supervisor1")
    patched = await supervisor.patch(f"/assistants/{loosened}", json={"context": UNGATED_EMAIL})
    assert patched.status_code == 200, patched.text
    rolled = await supervisor.post(f"/assistants/{loosened}/latest", json={"version": version})
    assert rolled.status_code == 200, rolled.text
    assert rolled.json()["version"] == 1
    record = (await trail(supervisor, f"assistants/{loosened}"))[-1]
    assert (record["decision"], record["outcome"]) == ("set_assistant_version", "accepted")
    assert "ungates issue_refund" in record["message"], record


@pytest.mark.parametrize("version", ["2", 2.5, True, None, [2]])
async def test_a_rollback_to_no_whole_number_is_422(http_as, loosened, version):
    """version "2", 2.5, true, null or [2]: 422 naming version, audited as refused; nothing changed."""
    supervisor = http_as("supervisor1")
    before = (await supervisor.get(f"/assistants/{loosened}")).json()
    rolled = await supervisor.post(f"/assistants/{loosened}/latest", json={"version": version})
    assert rolled.status_code == 422, rolled.text
    assert "version" in rolled.json()["detail"]
    assert (await supervisor.get(f"/assistants/{loosened}")).json()["version"] == before["version"]


async def test_creating_the_system_assistant_again_with_do_nothing_is_audited_as_nothing_changed(http_as):
    """if_exists do_nothing on support's own assistant: 200, its settings unchanged, audited as such."""
    supervisor = http_as("supervisor1")
    (system,) = (
        await supervisor.post(
            "/assistants/search", json={"graph_id": "support", "metadata": {"created_by": "system"}}
        )
    ).json()
    made = await supervisor.post(
        "/assistants",
        json={
            "assistant_id": system["assistant_id"],
            "graph_id": "support",
            "if_exists": "do_nothing",
            "context": UNGATED_REFUNDS,
        },
    )
    assert made.status_code == 200, made.text
    assert (await supervisor.get(f"/assistants/{system['assistant_id']}")).json()["context"] == system[
        "context"
    ]
    record = (await trail(supervisor, f"assistants/{system['assistant_id']}"))[-1]
    assert (record["decision"], record["final_args"]) == ("create_existing_assistant", None)
    assert "nothing changed" in record["message"]


@pytest.mark.parametrize("where", ["metadata", "config"])
async def test_nobody_marks_an_assistant_as_the_systems(client_as, http_as, where):
    """created_by is the server's: 403 on create and patch; a requester's search finds the system one only."""
    supervisor = http_as("supervisor1")
    body = (
        {"metadata": {"created_by": "system"}}
        if where == "metadata"
        else {"config": {"metadata": {"created_by": "system"}}}
    )
    made = await supervisor.post("/assistants", json={"graph_id": "support", "name": "lookalike", **body})
    assert made.status_code == 403, made.text
    assert "created_by" in made.text
    plain = (await supervisor.post("/assistants", json={"graph_id": "support", "name": "plain"})).json()
    patched = await supervisor.patch(f"/assistants/{plain['assistant_id']}", json=body)
    assert patched.status_code == 403, patched.text
    found = await client_as("requester1").assistants.search(
        graph_id="support", metadata={"created_by": "system"}
    )
    assert [a["name"] for a in found] == ["support"]


@pytest.mark.parametrize(("user", "status"), [("reviewer1", 403), ("requester1", 403), (None, 401)])
async def test_a_delayed_resume_is_refused_to_all_but_a_supervisor(
    http_as, client_as, server_order, ledger, user, status
):
    """after_seconds on a resume: reviewer and requester 403, anonymous 401; the thread stays answerable."""
    order_id = server_order(300)
    thread_id, thread = await run_on(client_as("requester1"), "support", phrases.refund_in_full(order_id))
    body = {"assistant_id": "support", "command": decisions(APPROVE), "after_seconds": 3600}
    answer = await http_as(user).post(f"/threads/{thread_id}/runs", json=body)
    assert answer.status_code == status, answer.text
    assert (await client_as("requester1").threads.get(thread_id))["status"] == "interrupted"
    await client_as("reviewer1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert ledger.refunds_of(order_id) == [300.0]
    del thread


async def test_a_supervisors_delayed_resume_is_on_the_record(http_as, client_as, server_order, ledger):
    """after_seconds 1 by a supervisor: accepted, audited as a state write naming the delay; refunded once."""
    order_id = server_order(300)
    thread_id, _ = await run_on(client_as("requester1"), "support", phrases.refund_in_full(order_id))
    body = {"assistant_id": "support", "command": decisions(APPROVE), "after_seconds": 1}
    answer = await http_as("supervisor1").post(f"/threads/{thread_id}/runs", json=body)
    assert answer.status_code == 200, answer.text
    supervisor = client_as("supervisor1")
    await supervisor.runs.join(thread_id, answer.json()["run_id"])
    assert ledger.refunds_of(order_id) == [300.0]
    records = await trail(http_as("supervisor1"), thread_id)
    assert [(r["decision"], r["message"]) for r in records][-2:] == [
        ("approve", None),
        ("state_write", "after_seconds=1"),
    ]
