"""Authority follows the final call: an edit is checked like the call it becomes, strictly, before saving.

Class 3 of issue 15. A reviewer decides refunds up to the supervisor limit (500); an edit
above it, to another order, with extra arguments or with a NUL byte in a path is refused
and the approval stays answerable by the right person.
"""

from __future__ import annotations

import uuid

import pytest

from agents.offline import phrases
from tests.security.outcomes import REFUSED, refused_with, workspace
from tests.server.helpers import APPROVE, decisions, only_pending, start

pytestmark = pytest.mark.server


def refund_edit(order_id: str, amount: float, **extra: object) -> dict:
    """An edit decision for issue_refund."""
    args = {"order_id": order_id, "amount": amount, "reason": "Edited", **extra}
    return {"type": "edit", "edited_action": {"name": "issue_refund", "args": args}}


async def test_reviewer_edit_of_300_to_899_is_403(requester, reviewer, supervisor, server_order, ledger):
    """reviewer edits a 300 refund to 899 (supervisor-only): 403, nothing refunded; a supervisor decides."""
    order_id = server_order(899)
    thread_id, thread = await start(requester, phrases.refund_amount(300, order_id))
    interrupt_id = only_pending(thread)["id"]
    with refused_with({403}, "supervisor"):
        await reviewer.runs.wait(thread_id, "support", command=decisions(refund_edit(order_id, 899)))
    assert ledger.refunds_of(order_id) == []
    after = await requester.threads.get(thread_id)
    assert (after["status"], only_pending(after)["id"]) == ("interrupted", interrupt_id)
    await supervisor.runs.wait(thread_id, "support", command=decisions(APPROVE))
    assert ledger.refunds_of(order_id) == [300.0]


async def test_reviewer_edit_to_another_order_is_refused(requester, reviewer, server_order, ledger):
    """reviewer edits the refund to another order: 403/422 (re-checked), neither order refunded."""
    order_id, other = server_order(300), server_order(300)
    thread_id, _ = await start(requester, phrases.refund_amount(300, order_id))
    with refused_with(REFUSED):
        await reviewer.runs.wait(thread_id, "support", command=decisions(refund_edit(other, 300)))
    assert (ledger.refunds_of(order_id), ledger.refunds_of(other)) == ([], [])
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"


@pytest.mark.parametrize("extra", ["note", "tool_call_id", "order"])
@pytest.mark.parametrize("user", ["reviewer1", "supervisor1"])
async def test_edit_with_extra_arguments_is_422(client_as, server_order, ledger, extra, user):
    """an edit carrying an argument the tool does not declare: 422, nothing refunded, still pending."""
    requester = client_as("requester1")
    order_id = server_order(300)
    thread_id, _ = await start(requester, phrases.refund_amount(300, order_id))
    with refused_with({422}):
        await client_as(user).runs.wait(
            thread_id, "support", command=decisions(refund_edit(order_id, 200, **{extra: "forged-extra"}))
        )
    assert ledger.refunds_of(order_id) == []
    assert (await requester.threads.get(thread_id))["status"] == "interrupted"


async def pending_ops_call(client, text: str, tool: str) -> tuple[str, dict]:
    """Start an ops thread with `text`; return it and the per-call interrupt of `tool` (read from state)."""
    thread_id = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread_id, "ops", input={"messages": [{"role": "user", "content": text}]})
    state = await client.threads.get_state(thread_id)
    found = [i for t in state["tasks"] for i in t["interrupts"] if i["value"].get("name") == tool]
    assert found, f"ops did not pause on {tool}: {state['tasks']}"
    return thread_id, found[0]


@pytest.mark.parametrize(
    ("tool", "text_of", "bad_args"),
    [
        ("delete_file", phrases.delete_files, lambda name: {"path": f"{name}\x00.txt"}),
        (
            "write_file",
            lambda name: phrases.write_file("keep", name),
            lambda name: {"file_path": f"/{name}\x00x", "content": "nul"},
        ),
    ],
    ids=["delete_file", "write_file"],
)
async def test_edit_with_a_nul_byte_in_a_path_is_422_and_the_thread_stays_answerable(
    client_as, server, ledger, tool, text_of, bad_args
):
    """ops edit with NUL in a path: 422, thread not `error`, the same call still pending, then approvable."""
    staff, decider = client_as("reviewer1"), client_as("supervisor1")
    name = f"tmp/nul-{uuid.uuid4().hex[:8]}.log"
    target = workspace(server) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if tool == "delete_file":
        target.write_text("keep me\n")
    thread_id, interrupt = await pending_ops_call(staff, text_of(name), tool)
    edit = {"type": "edit", "edited_action": {"name": tool, "args": bad_args(name)}}
    with refused_with({422}):
        await decider.runs.wait(thread_id, "ops", command={"resume": {interrupt["id"]: edit}})
    assert (await staff.threads.get(thread_id))["status"] == "interrupted"
    state = await staff.threads.get_state(thread_id)
    assert interrupt["id"] in {i["id"] for t in state["tasks"] for i in t["interrupts"]}
    assert target.exists() == (tool == "delete_file")
    await decider.runs.wait(thread_id, "ops", command={"resume": {interrupt["id"]: {"type": "approve"}}})
    assert (await staff.threads.get(thread_id))["status"] != "error"
    if tool == "delete_file":
        assert not target.exists()
