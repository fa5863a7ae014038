"""Every interrupt shape the contract publishes, through every Python client: the CLI, Slack and e-mail.

The kinds and their example values are read from the published schema (`contracts.json`, the file the
web app reads too), so a shape added to the contract is a failure here, naming the shape and the
client, until each client shows it. The web app's side is `web/src/interrupts/guards.test.ts`; the
same shapes made by real runs through the real server are `tests/web/test_shapes_matrix.py`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hitl.cli.pending_view import interrupt_lines
from hitl.contracts.asks import KINDS, read
from hitl.contracts.interrupts import InterruptShapes
from hitl.contracts.publish import SCHEMA_PATH
from hitl.policy.groups import who
from hitl.settings import Settings
from server.channels import email, slack_message
from server.coordination.inbox_rows import rows_of
from server.decisions.pending import Pending

PUBLISHED = json.loads(SCHEMA_PATH.read_text())


def published_examples() -> dict[str, list[dict[str, Any]]]:
    """Each kind `InterruptShapes` publishes, with the example values of its shape."""
    defs = PUBLISHED["$defs"]
    return {
        kind: defs[ref["$ref"].rsplit("/", 1)[-1]].get("examples", [])
        for kind, ref in defs["InterruptShapes"]["properties"].items()
    }


EXAMPLES = [(kind, value) for kind, values in published_examples().items() for value in values]


def test_the_published_kinds_are_the_contract_modules():
    """kinds: the schema's InterruptShapes, `InterruptKind` and the shapes mapping name the same kinds.

    Each kind publishes at least one example, so every client below is tried on it.
    """
    published = published_examples()
    assert set(published) == set(KINDS) == set(InterruptShapes.__annotations__)
    assert all(published[kind] for kind in KINDS), "a published shape without an example value"


@pytest.mark.parametrize(("kind", "value"), EXAMPLES, ids=[kind for kind, _ in EXAMPLES])
def test_the_contract_reads_each_example_as_its_kind(kind, value):
    """read: each example is of its kind, survives a JSON round trip, and asks someone something."""
    asked = read(json.loads(json.dumps(value)))
    assert asked is not None, f"{kind}: its published example does not match its own shape"
    assert asked.kind == kind
    assert asked.asks, f"{kind}: asks nobody anything"
    assert all(ask.decider for ask in asked.asks)


@pytest.mark.parametrize(("kind", "value"), EXAMPLES, ids=[kind for kind, _ in EXAMPLES])
def test_hitl_show_prints_each_shape_with_its_fields(kind, value):
    """CLI: `hitl show` names each thing asked, its fields, who decides, what answers it and the deadline."""
    asked = read(value)
    assert asked is not None
    shown = "\n".join(interrupt_lines({"id": "i" * 32, "value": value}))
    assert "no published shape" not in shown, f"hitl show cannot show a {kind}"
    for ask in asked.asks:
        assert f"wants {ask.subject}" in shown, f"hitl show: {kind} without its subject"
        assert f"decided by: {who(ask.decider)}" in shown, f"hitl show: {kind} without who decides"
        for name in ask.fields:
            assert json.dumps(name) in shown, f"hitl show: {kind} without its field {name}"
    if asked.deadline:
        assert f"deadline: {asked.deadline}" in shown, f"hitl show: {kind} without its deadline"
    escalated = "\n".join(
        interrupt_lines({"id": "i" * 32, "value": value}, escalated_at="2030-01-01T10:00:00+00:00")
    )
    assert f"decided by: {who(asked.escalates_to)} (escalated" in escalated


def notice_rows(value: dict[str, Any]) -> tuple[Pending, list[dict[str, Any]]]:
    """The pending interrupt and its inbox rows, as the watcher hands them to the channels."""
    pending = Pending(id="i" * 32, value=value)
    thread = {"thread_id": "t1", "metadata": {"owner": "ann", "graph_id": "demo"}, "updated_at": "2030-01-01"}
    return pending, [row for row, _ in rows_of(thread, [pending], {})]


@pytest.mark.parametrize(("kind", "value"), EXAMPLES, ids=[kind for kind, _ in EXAMPLES])
def test_slack_and_email_notices_describe_each_shape(kind, value):
    """notices: Slack's message and the e-mail name each thing asked, who decides and the deadline.

    Slack offers Approve and Reject exactly when every thing asked allows them, else the web app's link.
    """
    asked = read(value)
    assert asked is not None
    pending, rows = notice_rows(value)
    posted = json.dumps(slack_message.pause_message(pending, rows, "https://hitl.example.com"))
    mailed = email.notice(Settings(), "ann@example.com", pending, rows, "approval_pending").get_content()
    for client, text in (("slack", posted), ("email", mailed)):
        for ask in asked.asks:
            assert ask.subject in text, f"{client}: a {kind} notice without {ask.subject}"
        assert who(next(iter(pending.deciders))) in text, f"{client}: a {kind} notice without who decides"
        if asked.deadline:
            assert asked.deadline in text, f"{client}: a {kind} notice without its deadline"
    buttons = {b.get("action_id") for b in json.loads(posted)["blocks"][-2:] for b in b.get("elements", [])}
    allowed = [set(ask.decisions) for ask in asked.asks]
    assert ("approve" in buttons) is all("approve" in a for a in allowed), f"slack: {kind}'s Approve"
    assert ("reject" in buttons) is all("reject" in a for a in allowed), f"slack: {kind}'s Reject"
