"""Agent Chat UI as a client: its own requests (useStream, the JS SDK), `apiKey`, edits typed as text.

The SDK sends its key as `x-api-key` and cannot send `Authorization`; the server takes it as the
bearer token (same users, same rules). Edited numbers arrive as text ("250") and are read as the
number the tool takes; text that is no number is refused with 422 and the approval stays open.
The script is run by Node with the SDK version the web app pins (web/node_modules).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest

from agents.offline import phrases
from server.http.outgoing import tls
from tests.devserver import TOKENS
from tests.server.helpers import start

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "web" / "node_modules" / "@langchain" / "langgraph-sdk" / "dist" / "index.js"
SCRIPT = Path(__file__).parent / "js" / "agent_chat_ui.mjs"


def edit(order_id: str, amount: str) -> dict:
    args = {"order_id": order_id, "amount": amount, "reason": "Agent Chat UI edit"}
    return {"type": "edit", "edited_action": {"name": "issue_refund", "args": args}}


def test_agent_chat_ui_decides_with_an_api_key(server, server_order, server_services, tmp_path):
    """x-api-key: an edit typed "250" refunds 250; a batch edits one call, rejects the other; "abc" is 422."""
    assert SDK.exists(), "web/node_modules is missing: `make test` installs it (npm ci)"
    typed, batch, wrong = server_order(300), server_order(320), server_order(310)
    plan = {
        "sdk": str(SDK),
        "url": server.url,
        "requester_key": TOKENS["requester1"],
        "reviewer_key": TOKENS["reviewer1"],
        "runs": [
            {
                "name": "typed",
                "assistant": "support",
                "message": phrases.refund_in_full(typed),
                "resumes": [{"decisions": [edit(typed, "250")]}],
            },
            {
                "name": "batch",
                "assistant": "support",
                "message": phrases.refund_and_email(batch),
                "resumes": [
                    {"decisions": [edit(batch, "120.5"), {"type": "reject", "message": "No e-mail"}]}
                ],
            },
            {
                "name": "wrong",
                "assistant": "support",
                "message": phrases.refund_in_full(wrong),
                "resumes": [{"decisions": [edit(wrong, "abc")]}, {"decisions": [{"type": "approve"}]}],
            },
        ],
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    node = shutil.which("node")
    assert node, "node is missing"
    done = subprocess.run(
        [node, str(SCRIPT), str(tmp_path / "plan.json")],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])

    assert said["typed"]["answers"] == [{"ok": True}]
    assert [r["amount"] for r in server_services.payments.refunds_for(typed)] == [250.0]

    assert [a["name"] for a in said["batch"]["pending"][0]["action_requests"]] == [
        "issue_refund",
        "send_email",
    ]
    assert said["batch"]["answers"] == [{"ok": True}]
    assert [r["amount"] for r in server_services.payments.refunds_for(batch)] == [120.5]
    assert server_services.outbox.sent_to(f"{batch.lower()}@example.com") == []

    refused, approved = said["wrong"]["answers"]
    assert refused["ok"] is False
    assert refused["status"] == 422, refused
    assert "amount" in refused["message"]
    assert approved == {"ok": True}
    assert [r["amount"] for r in server_services.payments.refunds_for(wrong)] == [310.0]

    assert said["anonymous"]["status"] == 401
    assert said["wrong_key"]["status"] == 401


FIXTURE = json.loads((Path(__file__).parent / "agent_chat_ui_requests.json").read_text())
"""The request bodies Agent Chat UI and the JS SDK send (where they come from: its `_source`)."""
STREAM_SCRIPT = Path(__file__).parent / "js" / "agent_chat_ui_stream.mjs"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


async def paused_refund(requester, server_order, amount: float) -> tuple[str, str, dict]:
    """A requester1 thread paused on a full refund of a new order of `amount`: (thread, order, state)."""
    order = server_order(amount)
    thread_id, _ = await start(requester, phrases.refund_in_full(order))
    return thread_id, order, await requester.threads.get_state(thread_id)


def head_of(state: dict) -> str:
    return state["checkpoint"]["checkpoint_id"]


def call_of(state: dict) -> str:
    [interrupt] = [i for task in state["tasks"] for i in task["interrupts"]]
    return interrupt["value"]["action_requests"][0]["tool_call_id"]


def filled(name: str, **values: str) -> dict:
    """The fixture's body `name` with its placeholders filled in (`head`, `call`, `order`, `uuid`)."""
    text = json.dumps(FIXTURE[name])
    for key, value in values.items():
        text = text.replace(f"<{key}>", value)
    return json.loads(text)


def as_recorded(body: dict, **values: str) -> dict:
    """A body the client sent, with its run-specific values turned back into the fixture's placeholders."""
    text = json.dumps(body)
    for key, value in values.items():
        text = text.replace(value, f"<{key}>")
    return json.loads(UUID.sub("<uuid>", text))


def drive(server, tmp_path, steps: list[dict]) -> dict[str, dict]:
    """Run Agent Chat UI's calls (useStream in jsdom, the JS SDK) as `steps`; what each sent and got."""
    assert (ROOT / "web" / "node_modules" / "jsdom").exists(), "web/node_modules is missing: make installs it"
    plan = {
        "web": str(ROOT / "web"),
        "url": server.url,
        "tokens": TOKENS,
        "assistant": "support",
        "steps": steps,
    }
    (tmp_path / "stream-plan.json").write_text(json.dumps(plan))
    done = subprocess.run(
        [shutil.which("node") or "node", str(STREAM_SCRIPT), str(tmp_path / "stream-plan.json")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {step["name"]: step for step in json.loads(done.stdout.strip().splitlines()[-1])}


async def test_agent_chat_ui_decides_as_it_really_sends(
    server, requester, server_order, server_services, tmp_path
):
    """Agent Chat UI's real requests work: useStream and the JS SDK, as the UI calls them.

    A reviewer's approve (the thread's head checkpoint and `input: {}` in the body) refunds 300
    once; text typed over a pending approval (after the UI's fake tool result) and "Mark as
    Resolved" are 409s naming the waiting refund, which is then approved as usual; a quorum's first
    approve shows "1 of 2" in the description; new Command({resume}) approves; an edit spelled
    editedAction alone refunds the edited 250. Each body is exactly the fixture's.
    """
    cases = {
        name: await paused_refund(requester, server_order, 2400 if name == "quorum" else 300)
        for name in ("approve", "typed", "resolve", "quorum", "command", "edited")
    }
    thread = {name: case[0] for name, case in cases.items()}
    order = {name: case[1] for name, case in cases.items()}
    edit_args = filled("edited_action", order=order["edited"])["command"]["resume"]
    said = drive(
        server,
        tmp_path,
        [
            {
                "name": "approve",
                "kind": "resume",
                "user": "reviewer1",
                "thread": thread["approve"],
                "decisions": [{"type": "approve"}],
            },
            {
                "name": "typed",
                "kind": "message",
                "user": "requester1",
                "thread": thread["typed"],
                "text": "Any news on my refund?",
            },
            {"name": "resolve", "kind": "resolve", "user": "supervisor1", "thread": thread["resolve"]},
            {"name": "resolve-reviewer", "kind": "resolve", "user": "reviewer1", "thread": thread["resolve"]},
            {
                "name": "quorum",
                "kind": "resume",
                "user": "supervisor1",
                "thread": thread["quorum"],
                "decisions": [{"type": "approve"}],
            },
            {
                "name": "command",
                "kind": "command",
                "user": "reviewer1",
                "thread": thread["command"],
                "resume": {"decisions": [{"type": "approve"}]},
            },
            {
                "name": "edited",
                "kind": "command",
                "user": "reviewer1",
                "thread": thread["edited"],
                "resume": edit_args,
            },
        ],
    )

    def sent(name: str, fixture: str) -> dict:
        [run] = said[name]["runs"]
        state = cases[name.removesuffix("-reviewer")][2]
        values = {
            "head": head_of(state),
            "call": call_of(state),
            "order": order[name.removesuffix("-reviewer")],
        }
        assert as_recorded(run["body"], **values) == FIXTURE[fixture], run["body"]
        return run

    assert sent("approve", "resume")["status"] == 200
    assert [r["amount"] for r in server_services.payments.refunds_for(order["approve"])] == [300.0]

    for name, fixture in (("typed", "message"), ("resolve", "resolve"), ("resolve-reviewer", "resolve")):
        run = sent(name, fixture)
        assert run["status"] == 409, run
        assert (
            "An approval waits on this thread: issue_refund (a reviewer decides; asked by requester1)"
            in run["answer"]
        )
    for name in ("typed", "resolve"):
        state = await requester.threads.get_state(thread[name])
        assert state["checkpoint"] == cases[name][2]["checkpoint"]
        assert server_services.payments.refunds_for(order[name]) == []
        body = filled("resume", head=head_of(state))
        async with httpx.AsyncClient(
            base_url=server.url, headers=bearer("reviewer1"), timeout=60, verify=tls()
        ) as http:
            (await http.post(f"/threads/{thread[name]}/runs/wait", json=body)).raise_for_status()
        assert [r["amount"] for r in server_services.payments.refunds_for(order[name])] == [300.0]

    assert sent("quorum", "resume")["status"] == 200
    state = await requester.threads.get_state(thread["quorum"])
    [interrupt] = [i for task in state["tasks"] for i in task["interrupts"]]
    assert "1 of 2 approvals so far: supervisor1" in interrupt["value"]["action_requests"][0]["description"]
    assert server_services.payments.refunds_for(order["quorum"]) == []
    second = filled("resume", head=head_of(state))
    async with httpx.AsyncClient(
        base_url=server.url, headers=bearer("supervisor2"), timeout=60, verify=tls()
    ) as http:
        (await http.post(f"/threads/{thread['quorum']}/runs/wait", json=second)).raise_for_status()
    assert [r["amount"] for r in server_services.payments.refunds_for(order["quorum"])] == [2400.0]

    assert sent("command", "command")["status"] == 200
    assert [r["amount"] for r in server_services.payments.refunds_for(order["command"])] == [300.0]
    assert sent("edited", "edited_action")["status"] == 200
    assert [r["amount"] for r in server_services.payments.refunds_for(order["edited"])] == [250.0]


def bearer(user: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}


async def test_agent_chat_ui_bodies_attacked_by_every_role(server, requester, server_order, server_services):
    """The UI's exact bodies, sent by the wrong person, change nothing.

    The asker's own approve is 403, an anonymous one 401,
    a reviewer's naming an older checkpoint (a fork) 403, text or "Mark as Resolved" over the approval
    409 for every role; nothing is refunded, no message is added, and the approval is then answered.
    """
    thread_id, order_id, state = await paused_refund(requester, server_order, 300)
    head, parent = head_of(state), state["parent_checkpoint"]["checkpoint_id"]
    typed = filled("message", head=head, call=call_of(state), uuid=str(uuid.uuid4()))
    tries = [
        ("requester1", filled("resume", head=head), 403, "may not answer issue_refund"),
        (None, filled("resume", head=head), 401, ""),
        ("reviewer1", filled("resume", head=parent), 403, "another checkpoint"),
        ("requester2", filled("resume", head=head), 404, ""),
        *((user, typed, 409, "An approval waits") for user in ("requester1", "reviewer1", "supervisor1")),
        *(
            (user, filled("resolve", head=head), 409, "An approval waits")
            for user in ("requester1", "supervisor1")
        ),
        (None, filled("resolve", head=head), 401, ""),
    ]
    async with httpx.AsyncClient(base_url=server.url, timeout=60, verify=tls()) as http:
        for user, body, status, words in tries:
            answer = await http.post(f"/threads/{thread_id}/runs/stream", json=body, headers=bearer(user))
            assert (answer.status_code, words in answer.text) == (status, True), (user, answer.text)
        assert server_services.payments.refunds_for(order_id) == []
        after = await requester.threads.get_state(thread_id)
        assert after["checkpoint"] == state["checkpoint"]
        assert len(after["values"]["messages"]) == len(state["values"]["messages"])
        approve = filled("resume", head=head)
        (
            await http.post(f"/threads/{thread_id}/runs/wait", json=approve, headers=bearer("reviewer1"))
        ).raise_for_status()
    assert [r["amount"] for r in server_services.payments.refunds_for(order_id)] == [300.0]
