"""The `ops` agent through the real `langgraph dev`: per-call interrupts answered by id, subagents, sign-off.

The ops agent is for staff: a supervisor (`operator`) starts the threads, reviewers answer tool
approvals and `request_approval`; a requester may not run ops at all.
The server runs in a temporary directory with the default `WORKSPACE_DIR` (`workspace`).
"""

from __future__ import annotations

import uuid

import httpx
import pytest

from agents.offline import phrases
from tests.conftest import add_order
from tests.server.helpers import only_pending, pending_list, refused, start

pytestmark = pytest.mark.server

AGENT = "ops"
APPROVE = {"type": "approve"}


@pytest.fixture
def operator(client_as):
    """supervisor1: starts the ops threads (ops is for staff)."""
    return client_as("supervisor1")


@pytest.fixture
def server_workspace(server):
    """The server's workspace directory (it runs where its log is, with WORKSPACE_DIR=workspace)."""
    root = server.log.parent / "workspace"
    (root / "tmp").mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture
def old_order(server_services):
    """A fresh order delivered in 2019, so 'older than 2025' archives it."""
    return add_order(server_services, 10.0, delivered_on="2019-05-01")


async def still_waiting(client, thread_id: str) -> set[str]:
    """Ids of the interrupts the thread still waits on, from its live state.

    Not `threads.get()["interrupts"]`: after a second partial per-call resume, `langgraph dev`
    lists there, besides the live ones, interrupts already answered in an earlier run.
    """
    state = await client.threads.get_state(thread_id)
    return {i["id"] for task in state["tasks"] for i in task["interrupts"]}


def order_exists(server_services, order_id: str) -> bool:
    return bool(
        server_services.records.read("orders", [{"column": "order_id", "op": "=", "value": order_id}])
    )


async def three_interrupts(operator, server_workspace) -> tuple[str, dict[str, dict], str, str]:
    """Start an archive that also deletes a log: write_file, execute_sql and delete_file wait at once."""
    name = uuid.uuid4().hex[:8]
    log = server_workspace / "tmp" / f"{name}.log"
    log.write_text("old\n")
    text = phrases.archive_orders(2025, f"archive-{name}.csv", then_delete=f"tmp/{name}.log")
    thread_id, thread = await start(operator, text, AGENT)
    pending = {i["value"]["name"]: i for i in pending_list(thread)}
    assert set(pending) == {"write_file", "execute_sql", "delete_file"}
    assert {i["value"]["type"] for i in pending.values()} == {"tool_approval"}
    return thread_id, pending, f"archive-{name}.csv", name


async def test_three_interrupts_answered_all_at_once(
    operator, reviewer, server_services, server_workspace, old_order
):
    """per-call, all at once: one resume keyed by the three interrupt ids; each call acts once."""
    thread_id, pending, archive, name = await three_interrupts(operator, server_workspace)
    assert pending["write_file"]["value"]["allowed_decisions"] == ["approve", "edit", "reject", "respond"]
    assert old_order in pending["write_file"]["value"]["args"]["content"]
    assert order_exists(server_services, old_order)

    answers = {
        pending["write_file"]["id"]: APPROVE,
        pending["execute_sql"]["id"]: APPROVE,
        pending["delete_file"]["id"]: {"type": "reject", "message": "Keep the log for now"},
    }
    result = await reviewer.runs.wait(thread_id, AGENT, command={"resume": answers})

    assert old_order in (server_workspace / archive).read_text()
    assert not order_exists(server_services, old_order)
    assert (server_workspace / "tmp" / f"{name}.log").exists()
    assert "Keep the log for now" in result["messages"][-1]["content"]
    assert (await operator.threads.get(thread_id))["status"] == "idle"


async def test_three_interrupts_answered_one_at_a_time(
    operator, reviewer, server_services, server_workspace, old_order
):
    """per-call, one at a time: after each answer the others still wait, by the same ids; each acts once."""
    thread_id, pending, archive, name = await three_interrupts(operator, server_workspace)
    order = ["delete_file", "execute_sql", "write_file"]
    deletions = server_services.file_deletions.count()
    for answered, tool in enumerate(order, start=1):
        await reviewer.runs.wait(thread_id, AGENT, command={"resume": {pending[tool]["id"]: APPROVE}})
        assert await still_waiting(operator, thread_id) == {pending[t]["id"] for t in order[answered:]}
    assert (await operator.threads.get(thread_id))["status"] == "idle"
    assert server_services.file_deletions.count() == deletions + 1
    assert not (server_workspace / "tmp" / f"{name}.log").exists()
    assert not order_exists(server_services, old_order)
    assert old_order in (server_workspace / archive).read_text()


async def test_an_edit_missing_a_required_argument_is_refused_naming_it(operator, reviewer, server_workspace):
    """edit: delete_file with no `path` is refused, the error names `path`, and nothing is deleted."""
    log = server_workspace / "tmp" / f"{uuid.uuid4().hex[:8]}.log"
    log.write_text("old\n")
    thread_id, thread = await start(operator, phrases.delete_files(f"tmp/{log.name}"), AGENT)
    pending = only_pending(thread)
    edit = {"type": "edit", "edited_action": {"name": "delete_file", "args": {}}}

    with pytest.raises(Exception, match="path") as refusal:
        await reviewer.runs.wait(thread_id, AGENT, command={"resume": {pending["id"]: edit}})
    if isinstance(refusal.value, httpx.HTTPStatusError):
        assert 400 <= refusal.value.response.status_code < 500
    assert log.exists()

    await reviewer.runs.wait(thread_id, AGENT, command={"resume": {pending["id"]: APPROVE}})
    assert not log.exists()


@pytest.mark.parametrize(
    ("decision", "expected", "words"),
    [
        (APPROVE, "Release 1.4 is live\n", "Wrote /notes/"),
        ("edit", "1.4 rolled out\n", "as a reviewer edited it"),
        ({"type": "reject", "message": "Not before the announcement"}, None, "Not before the announcement"),
        ({"type": "respond", "message": "The note is already published"}, None, "already published"),
    ],
)
async def test_decisions_inside_a_subagent_reach_the_parent_thread(
    operator, reviewer, server_workspace, decision, expected, words
):
    """subagent: file_manager's write_file, answered on the parent thread, acts once as decided."""
    path = f"notes/{uuid.uuid4().hex[:8]}.txt"
    request = phrases.via_file_manager(phrases.write_file("Release 1.4 is live", path))
    thread_id, thread = await start(operator, request, AGENT)
    pending = only_pending(thread)
    assert (pending["value"]["name"], pending["value"]["agent"]) == ("write_file", "file_manager")
    if decision == "edit":
        args = {"file_path": f"/{path}", "content": "1.4 rolled out\n"}
        decision = {"type": "edit", "edited_action": {"name": "write_file", "args": args}}

    result = await reviewer.runs.wait(thread_id, AGENT, command={"resume": {pending["id"]: decision}})

    note = server_workspace / path
    assert (note.read_text() if note.exists() else None) == expected
    assert result["messages"][-1]["content"].startswith("The file manager reports:")
    assert words in result["messages"][-1]["content"]
    assert pending_list(await operator.threads.get(thread_id)) == []


@pytest.mark.parametrize(("approved", "verdict"), [(True, "was approved"), (False, "was not approved")])
async def test_request_approval_approved_and_refused(operator, reviewer, approved, verdict):
    """request_approval: the deployer's request reaches the thread; the answer comes back with its reason."""
    thread_id, thread = await start(operator, phrases.DEPLOY_TO_PRODUCTION, AGENT)
    pending = only_pending(thread)
    assert {k: pending["value"][k] for k in ("type", "action", "agent")} == {
        "type": "approval_request",
        "action": "Deploy version 1.4 to production",
        "agent": "deployer",
    }
    assert pending["response_schema"]["required"] == ["approved"]
    answer = {"approved": approved, "reason": "Change window is open"}
    result = await reviewer.runs.wait(thread_id, AGENT, command={"resume": {pending["id"]: answer}})
    assert result["messages"][-1]["content"] == (
        f"The deployer reports: Deploy version 1.4 to production {verdict} (Change window is open)."
    )


async def test_a_valid_answer_sent_with_an_invalid_one_is_not_applied(
    operator, reviewer, server_services, server_workspace, old_order
):
    """all or nothing: approve + a bad edit in one resume is refused whole; all three wait; nothing ran."""
    thread_id, pending, archive, name = await three_interrupts(operator, server_workspace)
    answers = {
        pending["write_file"]["id"]: APPROVE,
        pending["delete_file"]["id"]: {"type": "edit", "edited_action": {"name": "delete_file", "args": {}}},
    }
    with refused(422, "path"):
        await reviewer.runs.wait(thread_id, AGENT, command={"resume": answers})
    assert await still_waiting(operator, thread_id) == {i["id"] for i in pending.values()}
    assert not (server_workspace / archive).exists()
    assert order_exists(server_services, old_order)
    assert (server_workspace / "tmp" / f"{name}.log").exists()


async def test_an_answered_interrupt_cannot_be_answered_again(
    operator, reviewer, server_services, server_workspace, old_order
):
    """stale ids: after a partial resume, the done interrupt is not answered again; the other two work.

    The same answer sent again is that decision ("Already applied", nothing done again); another
    answer to it is an unknown interrupt (422).
    """
    thread_id, pending, _archive, name = await three_interrupts(operator, server_workspace)
    deletions = server_services.file_deletions.count()
    await reviewer.runs.wait(thread_id, AGENT, command={"resume": {pending["delete_file"]["id"]: APPROVE}})
    await reviewer.runs.wait(thread_id, AGENT, command={"resume": {pending["execute_sql"]["id"]: APPROVE}})
    with refused(409, "Already applied"):
        await reviewer.runs.wait(
            thread_id, AGENT, command={"resume": {pending["delete_file"]["id"]: APPROVE}}
        )
    with refused(422, "Unknown interrupt id"):
        await reviewer.runs.wait(
            thread_id, AGENT, command={"resume": {pending["delete_file"]["id"]: {"type": "reject"}}}
        )
    assert server_services.file_deletions.count() == deletions + 1
    await reviewer.runs.wait(thread_id, AGENT, command={"resume": {pending["write_file"]["id"]: APPROVE}})
    assert (await operator.threads.get(thread_id))["status"] == "idle"
    assert not (server_workspace / "tmp" / f"{name}.log").exists()
