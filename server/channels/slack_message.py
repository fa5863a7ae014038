"""Slack Block Kit messages for approvals: the one a pause posts, and what it becomes once pressed.

Pure: built from the inbox rows of one interrupt (`server.coordination.inbox_rows.rows_of`). The buttons
carry only which thread and interrupt they answer; who pressed and whether they may decide is
the server's to find out when the press arrives (`server.channels.slack`). Everything put into
mrkdwn that a model, a tool call or a person wrote is escaped for it (`mrkdwn`, `code_block`):
args cannot ping a channel, hide a link or leave their code block.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hitl.contracts.asks import read
from hitl.policy.groups import who

if TYPE_CHECKING:
    from server.decisions.pending import Pending

APPROVE = "approve"
REJECT = "reject"
ACTIONS_BLOCK = "hitl_decide"
REASON_BLOCK = "hitl_reason"
REASON_INPUT = "reason"
MAX_ARGS_CHARS = 2500
"""Slack refuses a section text over 3,000 characters: longer args are cut, the web app has them all."""


CODE_FENCE = "`"
FENCE_STAND_IN = "\u02cb"
"""MODIFIER LETTER GRAVE ACCENT (U+02CB): looks like a backtick in args, but closes no code block."""


def mrkdwn(text: object) -> str:
    """`text` as Slack mrkdwn shows it literally: `&`, `<` and `>` escaped, so no mention or link forms."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code_block(text: object) -> str:
    """`text` in a code block it cannot leave: escaped, each backtick a look-alike that fences nothing."""
    return f"```{mrkdwn(text).replace(CODE_FENCE, FENCE_STAND_IN)}```"


def thread_link(public_url: str, thread_id: str) -> str:
    """Where the web app opens this thread (signing in is still needed to decide there)."""
    return f"{public_url.rstrip('/')}/app/#/threads/{thread_id}"


def button_value(thread_id: str, interrupt_id: str) -> str:
    """What a button carries back: the thread and the interrupt it answers, nothing else."""
    return json.dumps({"thread_id": thread_id, "interrupt_id": interrupt_id}, separators=(",", ":"))


def decisions_offered(pending: Pending) -> tuple[bool, bool]:
    """Whether Approve and Reject can answer `pending` from Slack: each thing it asks allows them.

    Read through the published contract (`hitl.contracts.asks`): a form, an answer only a person
    writes (respond) or a value of no published shape gets the web app's link alone.
    """
    asked = read(pending.value)
    if asked is None:
        return False, False
    allowed = [set(ask.decisions) for ask in asked.asks]
    return all(APPROVE in a for a in allowed), all(REJECT in a for a in allowed)


def who_decides(row: dict[str, Any]) -> str:
    """Who must decide a row (its `required_role`, an escalation's), in words, with a quorum's progress."""
    words = who(str(row.get("required_role")))
    approvals = row.get("approvals")
    if isinstance(approvals, dict) and isinstance(approvals.get("required"), int):
        required = approvals["required"]
        done = approvals.get("approved_by") or []
        people = f" (approved so far: {', '.join(map(str, done))})" if done else ""
        words = f"{required} different people, each {words}{people}"
    if row.get("escalated"):
        words += ", escalated"
    return words


def headline(rows: list[dict[str, Any]], event: str) -> str:
    """What a notice is about: an escalation, an MCP server's question, or an approval."""
    if event == "approval_escalated":
        return "Escalated"
    return "Question" if rows and all(r.get("kind") == "mcp_elicitation" for r in rows) else "Approval needed"


def subjects(pending: Pending, rows: list[dict[str, Any]]) -> list[str]:
    """What each row asks about, as the contract reads it (`Ask.subject`: an MCP tool as `server.tool`)."""
    asked = read(pending.value)
    named = {ask.tool_call_id: ask.subject for ask in asked.asks} if asked is not None else {}
    return [str(named.get(str(row.get("tool_call_id")), row.get("tool"))) for row in rows]


def link_to_open(pending: Pending) -> str | None:
    """The link an MCP server asks its person to open (url mode), as the server gave it; None otherwise."""
    value = pending.value if isinstance(pending.value, dict) else {}
    url = value.get("url") if value.get("type") == "mcp_elicitation" and value.get("mode") == "url" else None
    return url if isinstance(url, str) else None


def pause_message(
    pending: Pending, rows: list[dict[str, Any]], public_url: str, event: str = "approval_pending"
) -> dict[str, Any]:
    """The incoming-webhook message for one waiting interrupt: what, who asks, args, deadline, who decides."""
    first = rows[0]
    thread_id = str(first["thread_id"])
    link = thread_link(public_url, thread_id)
    named = subjects(pending, rows)
    title = f"{headline(rows, event)}: {', '.join(named)}"
    asker = str(first.get("agent") or "agent")
    graph = first.get("graph_id")
    if graph and graph != asker:
        asker = f"{asker} (subagent of {graph})"
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": _plain(title[:150])},
        {
            "type": "section",
            "fields": [
                _markdown(f"*Asked by*\n{mrkdwn(asker)}"),
                _markdown(f"*For*\n{mrkdwn(first.get('owner') or 'unknown')}"),
                _markdown(f"*Who must decide*\n{mrkdwn(who_decides(first))}"),
                _markdown(f"*Deadline*\n{mrkdwn(first.get('deadline') or 'none')}"),
            ],
        },
    ]
    for row, subject in zip(rows, named, strict=True):
        args = json.dumps(row.get("args") or {}, indent=1, ensure_ascii=False, default=str)
        if len(args) > MAX_ARGS_CHARS:
            args = f"{args[:MAX_ARGS_CHARS]}\n… (cut: see the web app)"
        text = f"*{mrkdwn(subject)}*: {mrkdwn(str(row.get('description') or '')[:400])}".strip()
        blocks.append({"type": "section", "text": _markdown(f"{text}\n{code_block(args)}")})
    if (url := link_to_open(pending)) is not None:  # shown, never linked: the web app opens it
        blocks.append({"type": "section", "text": _markdown(f"*Link to open*\n{code_block(url)}")})
    approve, reject = decisions_offered(pending)
    value = button_value(thread_id, pending.id)
    buttons: list[dict[str, Any]] = []
    if approve:
        buttons.append(_button("Approve", APPROVE, value, "primary"))
    if reject:
        blocks.append(
            {
                "type": "input",
                "block_id": REASON_BLOCK,
                "optional": True,
                "label": _plain("Reason, if you reject (the agent reads it)"),
                "element": {"type": "plain_text_input", "action_id": REASON_INPUT},
            }
        )
        buttons.append(_button("Reject", REJECT, value, "danger"))
    buttons.append(
        {"type": "button", "action_id": "open", "text": _plain("Open in the web app"), "url": link}
    )
    blocks.append({"type": "actions", "block_id": ACTIONS_BLOCK, "elements": buttons})
    if not (approve or reject):
        blocks.append({"type": "context", "elements": [_markdown("Answer this one in the web app.")]})
    return {"text": mrkdwn(f"{title} ({thread_id})"), "blocks": blocks}


def outcome_message(original: dict[str, Any] | None, line: str) -> dict[str, Any]:
    """The message after a press: the original's first blocks without the buttons, and `line` below.

    Sent to the press's `response_url` (`replace_original`), so everyone in the channel sees it.
    """
    kept = [
        b
        for b in (original or {}).get("blocks") or []
        if isinstance(b, dict) and b.get("type") in {"header", "section"}
    ]
    return {
        "replace_original": True,
        "text": line,
        "blocks": [*kept, {"type": "section", "text": _markdown(line)}],
    }


def _button(text: str, action_id: str, value: str, style: str) -> dict[str, Any]:
    return {"type": "button", "action_id": action_id, "text": _plain(text), "value": value, "style": style}


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text}


def _markdown(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}
