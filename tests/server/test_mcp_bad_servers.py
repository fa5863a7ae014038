"""Bad MCP servers through the real `langgraph dev`: down, slow, failing, huge, malformed, duplicated, lying.

The lab agent (`tests.mcp_lab.agent`, per-call gate) calls the lab's servers (`tests.mcp_lab.servers`)
over streamable HTTP. What a lab tool really ran is in the lab's ledger (its business database):
each test asserts on it. The model gets a clear tool error, the thread never wedges (it ends idle),
and nothing the gate holds runs without its approval.
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.server.helpers import only_pending, refused, start
from tests.server.mcp_helpers import last_reply, only_question, trail, until, until_idle

pytestmark = pytest.mark.server

AGENT = "mcp_lab"
APPROVE = {"type": "approve"}


def call(tool: str, args: dict | None = None) -> str:
    """What the lab agent's offline model is told: call exactly this."""
    return f"call {tool} with {json.dumps(args or {})}"


async def lab(client, tool: str, args: dict | None = None) -> tuple[str, dict]:
    return await start(client, call(tool, args), AGENT)


async def approved(reviewer, thread_id: str, thread: dict) -> None:
    """A reviewer approves the one pending per-call approval."""
    pending = only_pending(thread)
    assert pending["value"]["type"] == "tool_approval"
    await reviewer.runs.wait(thread_id, AGENT, command={"resume": {pending["id"]: APPROVE}})


@pytest.fixture
def ledger(server, mcp_servers_beside):
    """The lab's ledger, and its listing switches put back after the test."""
    yield mcp_servers_beside
    mcp_servers_beside.switch(added=False, changed=False, not_read_only=False)


async def test_a_down_server_fails_the_approved_call_in_words_and_nothing_wedges(requester, reviewer, ledger):
    """down: its tool name is still gated (unlisted); once approved, the model reads why it did not run."""
    thread_id, thread = await lab(requester, "down_read_note", {"note_id": "n1"})
    assert only_pending(thread)["value"]["mcp"] == {
        "server": "down",
        "tool": "read_note",
        "input_schema_sha256": "",
    }
    await approved(reviewer, thread_id, thread)
    reply = await last_reply(requester, thread_id)
    assert "down could not be reached" in reply
    assert "nothing was run" in reply
    assert (await requester.threads.get(thread_id))["status"] == "idle"
    [failed] = [r for r in await trail(reviewer, thread_id) if r["outcome"] == "failed"]
    assert failed["tool"] == "down_read_note"


async def test_a_slow_read_only_tool_times_out_and_the_thread_goes_on(requester, ledger):
    """slow (read-only, ungated): the 2 s timeout fails the call in words; the thread ends idle."""
    thread_id, thread = await lab(requester, "lab_slow")
    assert thread["status"] == "idle"
    assert "lab did not answer the call of slow within 2 s" in await last_reply(requester, thread_id)


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ("lab_broken", "lab.broken reported an error: The note store is on fire."),
        ("lab_huge", "the limit is MCP_MAX_RESPONSE_BYTES"),
        ("lab_long", "[cut at 20000 of 50000 characters]"),
    ],
)
async def test_failing_and_huge_answers_reach_the_model_as_words(requester, ledger, tool, said):
    """broken: the server's error; huge (3 MB): not read; long (50,000 chars): cut at MCP_MAX_RESULT_CHARS."""
    thread_id, thread = await lab(requester, tool)
    assert thread["status"] == "idle"
    assert said in await last_reply(requester, thread_id)


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ("lab_remote_ref", "lab does not list remote_ref now; nothing was run"),
        ("lab_twice", "lab does not list twice now; nothing was run"),
        ("lab_no_such_tool", "lab does not list no_such_tool now; nothing was run"),
        ("lab-broken_read_note", "lab-broken answered its tool list with something that is not MCP"),
    ],
)
async def test_malformed_and_unknown_tools_are_never_offered_and_never_run(
    requester, reviewer, ledger, server, tool, said
):
    """a remote $ref, a name twice, a name never listed, a listing no SDK reads: gated; approved, not run."""
    thread_id, thread = await lab(requester, tool)
    assert only_pending(thread)["value"]["mcp"]["input_schema_sha256"] == ""
    await approved(reviewer, thread_id, thread)
    reply = await last_reply(requester, thread_id)
    assert said in reply
    assert "nothing was run" in reply
    assert ledger.lab_calls(tool.partition("_")[2]) == []
    logged = server.log.read_text()
    assert "lab.remote_ref: its input schema refers outside itself" in logged
    assert "lab.twice: the server lists several tools named twice" in logged
    assert "MCP lab-broken for mcp_lab at" in logged


async def test_tools_of_one_name_on_two_servers_stay_apart(requester, reviewer, ledger):
    """read_note on lab (read-only: runs at once) and on lab-mirror (named by the policy: waits), apart."""
    thread_id, thread = await lab(requester, "lab_read_note", {"note_id": "n7"})
    assert thread["status"] == "idle"
    thread_id, thread = await lab(requester, "lab-mirror_read_note", {"note_id": "n7"})
    assert only_pending(thread)["value"]["mcp"]["server"] == "lab-mirror"
    assert [r["server"] for r in ledger.lab_calls("read_note") if r["tool_call_id"]][-1:] == ["lab"]
    await approved(reviewer, thread_id, thread)
    assert [(r["server"], r["acting_for"]) for r in ledger.lab_calls("read_note")][-2:] == [
        ("lab", "requester1"),
        ("lab-mirror", "requester1"),
    ]


async def test_instructions_in_a_description_change_nothing(requester, reviewer, server, ledger):
    """injected ("approve it at once", markup, escapes): destructive, so gated; runs once approved only."""
    thread_id, thread = await lab(requester, "lab_injected", {"note_id": "n1"})
    pending = only_pending(thread)
    assert pending["value"]["type"] == "tool_approval"
    assert "\x1b" not in json.dumps(pending["value"])
    async with httpx.AsyncClient(base_url=server.url) as anonymous:
        answered = await anonymous.post(
            f"/threads/{thread_id}/runs/wait",
            json={"assistant_id": AGENT, "command": {"resume": {pending["id"]: APPROVE}}},
        )
    assert answered.status_code in {401, 403}
    with refused(403):
        await requester.runs.wait(thread_id, AGENT, command={"resume": {pending["id"]: APPROVE}})
    assert ledger.lab_calls("injected") == []
    await approved(reviewer, thread_id, thread)
    assert len(ledger.lab_calls("injected")) == 1


async def test_a_tool_added_after_start_up_is_gated_though_it_claims_read_only(
    requester, reviewer, server, ledger
):
    """added_later (readOnlyHint, listed after start): gated until a policy names it or a restart."""
    ledger.switch(added=True)

    async def offered() -> bool:
        _, thread = await lab(requester, "lab_added_later")
        return (
            thread["status"] == "interrupted"
            and only_pending(thread)["value"]["mcp"]["input_schema_sha256"] != ""
        )

    await until(offered)
    thread_id, thread = await lab(requester, "lab_added_later")
    assert ledger.lab_calls("added_later") == []
    await approved(reviewer, thread_id, thread)
    assert len(ledger.lab_calls("added_later")) == 1
    assert "lists lab.added_later, which it did not list when mcp_lab started" in server.log.read_text()


async def test_a_tool_no_longer_read_only_is_gated_at_once(requester, ledger):
    """read_note loses its read-only hint: its next call waits, nothing runs."""
    ledger.switch(not_read_only=True)

    async def gated() -> dict | None:
        _, thread = await lab(requester, "lab_read_note", {"note_id": "n9"})
        return thread if thread["status"] == "interrupted" else None

    thread = await until(gated)
    waiting = only_pending(thread)["value"]["tool_call_id"]
    assert waiting not in [r["tool_call_id"] for r in ledger.lab_calls("read_note")]


async def test_a_schema_changed_since_the_pause_is_refused_with_nothing_run(requester, reviewer, ledger):
    """delete_note approved under one schema, listed with another by then: not run, said, recorded refused."""
    thread_id, thread = await lab(requester, "lab_delete_note", {"note_id": "n3"})
    approved_under = only_pending(thread)["value"]["mcp"]["input_schema_sha256"]
    ledger.switch(changed=True)
    await approved(reviewer, thread_id, thread)
    reply = await last_reply(requester, thread_id)
    assert "Not run: lab.delete_note changed its input schema since the call was approved" in reply
    assert approved_under[:12] in reply
    assert ledger.lab_calls("delete_note") == []
    [refusal] = [r for r in await trail(reviewer, thread_id) if r["decision"] == "not_run"]
    assert refusal["outcome"] == "refused"


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ("lab_ask_nested", "lab.ask_nested asked a question that cannot be asked: its schema field 'who'"),
        ("lab_ask_script_link", "lab.ask_script_link asked the person to open a link that is no http(s) URL"),
        (
            "lab_ask_sampling",
            "lab.ask_sampling asked for sampling/createMessage, which this agent does not answer",
        ),
    ],
)
async def test_questions_that_cannot_be_asked_abandon_the_call(requester, reviewer, ledger, tool, said):
    """a nested schema, a javascript: link, a sampling request: nobody is asked, the call ends unrun."""
    thread_id, thread = await lab(requester, tool, {"note_id": "n1"})
    await approved(reviewer, thread_id, thread)
    thread = await until_idle(requester, thread_id)
    assert thread["interrupts"] == {}
    assert said in await last_reply(requester, thread_id)
    assert ledger.lab_calls(tool.removeprefix("lab_")) == []


async def test_a_link_question_shows_its_link_and_waits_for_the_owners_confirmation(
    requester, reviewer, ledger
):
    """url elicitation: the link in the value; the owner confirms (accept, no content); the server gets it."""
    thread_id, thread = await lab(requester, "lab_ask_link", {"note_id": "n2"})
    await approved(reviewer, thread_id, thread)
    question = only_question(await requester.threads.get(thread_id))
    assert (question["value"]["mode"], question["value"]["url"]) == ("url", "https://example.com/consent")
    with refused(422, "content"):
        bad = {"action": "accept", "content": {"x": "y"}}
        await requester.runs.wait(thread_id, AGENT, command={"resume": {question["id"]: bad}})
    await requester.runs.wait(thread_id, AGENT, command={"resume": {question["id"]: {"action": "accept"}}})
    [ran] = ledger.lab_calls("ask_link")
    assert json.loads(ran["answers"]) == {"action": "accept"}


async def test_a_question_in_markup_is_kept_as_text_and_answered(requester, reviewer, ledger):
    """ask_reason: '<b>Why</b>' reaches the value as the server's text; the owner's answer reaches it."""
    thread_id, thread = await lab(requester, "lab_ask_reason", {"note_id": "n4"})
    await approved(reviewer, thread_id, thread)
    question = only_question(await requester.threads.get(thread_id))
    assert question["value"]["message"] == "<b>Why</b> delete this note?"
    with refused(403):
        await reviewer.runs.wait(
            thread_id,
            AGENT,
            command={"resume": {question["id"]: {"action": "accept", "content": {"reason": "old"}}}},
        )
    answer = {"action": "accept", "content": {"reason": "Outdated"}}
    await requester.runs.wait(thread_id, AGENT, command={"resume": {question["id"]: answer}})
    [ran] = ledger.lab_calls("ask_reason")
    assert json.loads(ran["answers"]) == {"action": "accept", "content": {"reason": "Outdated"}}
