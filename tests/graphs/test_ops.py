"""The `ops` agent in-process: per-call interrupts answered by id, SQL, workspace files, subagents."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from agents.offline import phrases
from services.database import DEMO_ORDERS

APPROVE = {"type": "approve"}
OLD_ORDERS = ["A0412", "A0733"]


def by_tool(interrupts) -> dict:
    return {i.value["name"]: i for i in interrupts}


def old_orders_left(services) -> list[str]:
    return [
        r["order_id"]
        for r in services.records.read("orders", [{"column": "order_id", "op": "<", "value": "A1"}])
    ]


def test_archive_reads_freely_and_asks_once_per_gated_call(ops_agent, services, workspace):
    """per-call: read_data runs unpaused; write_file and execute_sql each pause with their own decisions."""
    chat = ops_agent()
    pending = by_tool(chat.say(phrases.ARCHIVE_OLD_ORDERS).interrupts)
    assert set(pending) == {"write_file", "execute_sql"}
    assert pending["write_file"].value["allowed_decisions"] == ["approve", "edit", "reject", "respond"]
    assert pending["execute_sql"].value["allowed_decisions"] == ["approve", "reject"]
    assert {i.value["agent"] for i in pending.values()} == {"ops"}
    assert "A0412" in pending["write_file"].value["args"]["content"]
    assert not (workspace / "orders_archive.csv").exists()
    assert old_orders_left(services) == OLD_ORDERS


def test_three_interrupts_answered_all_at_once_by_id(ops_agent, services, workspace):
    """All at once: approve the CSV, reject the SQL, edit the deletion to another file; each applies once."""
    (workspace / "tmp" / "other.log").write_text("other\n")
    chat = ops_agent()
    pending = by_tool(chat.say(phrases.ARCHIVE_AND_DELETE_LOG).interrupts)
    assert set(pending) == {"write_file", "execute_sql", "delete_file"}
    edit = {"type": "edit", "edited_action": {"name": "delete_file", "args": {"path": "tmp/other.log"}}}

    result = chat.resume(
        {
            pending["write_file"].id: APPROVE,
            pending["execute_sql"].id: {"type": "reject", "message": "Keep the rows until audit"},
            pending["delete_file"].id: edit,
        }
    )

    assert result.interrupts == ()
    assert "A0733" in (workspace / "orders_archive.csv").read_text()
    assert old_orders_left(services) == OLD_ORDERS
    assert services.sql.writes() == 0
    assert (workspace / "tmp" / "old.log").exists()
    assert not (workspace / "tmp" / "other.log").exists()
    assert services.file_deletions.count() == 1
    assert "Keep the rows until audit" in chat.last_words()


def test_three_interrupts_answered_one_at_a_time(ops_agent, services, workspace):
    """One at a time: each answer runs its call once; the others stay pending with the same ids."""
    chat = ops_agent()
    pending = by_tool(chat.say(phrases.ARCHIVE_AND_DELETE_LOG).interrupts)

    left = chat.resume({pending["execute_sql"].id: APPROVE}).interrupts
    assert {i.id for i in left} == {pending["write_file"].id, pending["delete_file"].id}
    assert old_orders_left(services) == []

    left = chat.resume({pending["delete_file"].id: APPROVE}).interrupts
    assert [i.id for i in left] == [pending["write_file"].id]
    assert not (workspace / "tmp" / "old.log").exists()

    assert (
        chat.resume(
            {pending["write_file"].id: {"type": "respond", "message": "Archived elsewhere"}}
        ).interrupts
        == ()
    )
    assert not (workspace / "orders_archive.csv").exists()
    assert (services.sql.writes(), services.file_deletions.count()) == (1, 1)
    assert "Archived elsewhere" in chat.last_words()


def test_an_edit_missing_a_required_argument_names_the_field(ops_agent, services, workspace):
    """edit: delete_file without `path` is refused with the field named; nothing is saved or deleted."""
    chat = ops_agent()
    pending = chat.say(phrases.DELETE_OLD_LOG).interrupts[0]
    with pytest.raises(ValidationError, match=r"args\.path"):
        chat.resume({pending.id: {"type": "edit", "edited_action": {"name": "delete_file", "args": {}}}})
    assert [i.id for i in chat.pending()] == [pending.id]
    assert (workspace / "tmp" / "old.log").exists()
    chat.resume({pending.id: APPROVE})
    assert not (workspace / "tmp" / "old.log").exists()
    assert services.file_deletions.count() == 1


def test_a_select_runs_without_a_person(ops_agent):
    """execute_sql `when`: a plain SELECT is a read and runs at once."""
    chat = ops_agent()
    assert chat.say(phrases.run_sql("SELECT count(*) AS n FROM orders")).interrupts == ()
    assert f"[{{'n': {len(DEMO_ORDERS)}}}]" in chat.last_words()


@pytest.mark.parametrize(("decision", "status"), [(APPROVE, "returned"), ({"type": "reject"}, "delivered")])
def test_a_write_waits_and_runs_once_when_approved(ops_agent, services, decision, status):
    """execute_sql: an UPDATE pauses; approved it changes the row once, rejected nothing."""
    chat = ops_agent()
    [pending] = chat.say(
        phrases.run_sql("UPDATE orders SET status = 'returned' WHERE order_id = 'A2048'")
    ).interrupts
    assert pending.value["name"] == "execute_sql"
    assert services.orders.get("A2048")["status"] == "delivered"
    chat.resume({pending.id: decision})
    assert services.orders.get("A2048")["status"] == status
    assert services.sql.writes() == (1 if status == "returned" else 0)


def test_a_path_outside_the_workspace_is_refused_even_when_approved(ops_agent, services, workspace):
    """Least privilege: delete_file of ../outside.txt fails after approval; the file outside survives."""
    outside = workspace.parent / "outside.txt"
    outside.write_text("keep me\n")
    chat = ops_agent()
    [pending] = chat.say(phrases.delete_files("../outside.txt")).interrupts
    chat.resume({pending.id: APPROVE})
    assert outside.exists()
    assert services.file_deletions.count() == 0
    assert "outside the workspace" in chat.last_words()


def test_file_manager_gates_reads_its_parent_does_not(ops_agent, workspace):
    """override: reading a file is free for ops, but file_manager asks first (agent named)."""
    (workspace / "notes.txt").write_text("hello\n")
    assert ops_agent().say(phrases.read_file("notes.txt")).interrupts == ()
    chat = ops_agent()
    [pending] = chat.say(phrases.via_file_manager(phrases.read_file("notes.txt"))).interrupts
    assert (pending.value["name"], pending.value["agent"]) == ("read_file", "file_manager")
    chat.resume({pending.id: APPROVE})
    assert "notes.txt reads: hello" in chat.last_words()


@pytest.mark.parametrize(
    ("decision", "content", "words"),
    [
        (APPROVE, "Release 1.4 is live\n", "Wrote /notes/release.txt"),
        (
            {
                "type": "edit",
                "edited_action": {
                    "name": "write_file",
                    "args": {"file_path": "/notes/release.txt", "content": "1.4 rolled out\n"},
                },
            },
            "1.4 rolled out\n",
            "as a reviewer edited it",
        ),
        ({"type": "reject", "message": "Not before the announcement"}, None, "Not before the announcement"),
        ({"type": "respond", "message": "The note is already published"}, None, "already published"),
    ],
)
def test_each_decision_inside_a_subagent_reaches_the_parent_thread(
    ops_agent, workspace, decision, content, words
):
    """subagent: approve, edit, reject, respond on file_manager's write_file act once and report back."""
    chat = ops_agent()
    [pending] = chat.say(phrases.via_file_manager(phrases.WRITE_RELEASE_NOTE)).interrupts
    assert pending.value["agent"] == "file_manager"
    assert chat.resume({pending.id: decision}).interrupts == ()
    note = workspace / "notes" / "release.txt"
    assert (note.read_text() if note.exists() else None) == content
    assert words in chat.last_words()
    assert chat.last_words().startswith("The file manager reports:")


def test_the_general_purpose_subagent_is_gated_like_its_parent(ops_agent, workspace):
    """general-purpose: its delete_file pauses per call, named as its own agent, like the parent's."""
    chat = ops_agent()
    [pending] = chat.say(phrases.via_general_purpose(phrases.DELETE_OLD_LOG)).interrupts
    assert (pending.value["type"], pending.value["name"], pending.value["agent"]) == (
        "tool_approval",
        "delete_file",
        "general-purpose",
    )
    assert (workspace / "tmp" / "old.log").exists()


@pytest.mark.parametrize(
    ("approved", "verdict"), [(True, "was approved (CI is green)"), (False, "was not approved (CI is green)")]
)
def test_request_approval_returns_the_reviewers_answer(ops_agent, approved, verdict):
    """request_approval: the deployer's sign-off request is answered yes or no, with the reason reported."""
    chat = ops_agent()
    [pending] = chat.say(phrases.DEPLOY_TO_PRODUCTION).interrupts
    assert {k: pending.value[k] for k in ("type", "action", "agent")} == {
        "type": "approval_request",
        "action": "Deploy version 1.4 to production",
        "agent": "deployer",
    }
    with pytest.raises(ValidationError):
        chat.resume({pending.id: {"approved": "yes"}})
    chat.resume({pending.id: {"approved": approved, "reason": "CI is green"}})
    assert chat.last_words() == f"The deployer reports: Deploy version 1.4 to production {verdict}."


def test_the_builtin_delete_cannot_bypass_delete_file(ops_agent, workspace):
    """backend: Deep Agents' own `delete` tool is turned away, so only the gated delete_file deletes."""
    tools = ops_agent().graph.nodes["tools"].bound.tools_by_name
    assert "delete" in tools  # offered by Deep Agents' file middleware ...
    result = tools["delete"].func(file_path="tmp/old.log", runtime=SimpleNamespace(tool_call_id="c1"))
    assert (result.status, "delete_file" in result.content) == ("error", True)  # ... refused by our backend
    assert (workspace / "tmp" / "old.log").exists()
