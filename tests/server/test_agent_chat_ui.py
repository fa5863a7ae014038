"""Agent Chat UI as a client: LangGraph's JS SDK with `apiKey`, batched resumes, edits typed as text.

The SDK sends its key as `x-api-key` and cannot send `Authorization`; the server takes it as the
bearer token (same users, same rules). Edited numbers arrive as text ("250") and are read as the
number the tool takes; text that is no number is refused with 422 and the approval stays open.
The script is run by Node with the SDK version the web app pins (web/node_modules).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hitl.scripted import phrases
from tests.devserver import TOKENS

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
