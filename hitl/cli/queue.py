"""What waits and what a run leaves: `hitl inbox`, `hitl show`, `hitl run`, and the report after each answer.

Reads the server as every client does (`GET /inbox`, the thread and its state); the answers
themselves are `decide`'s. A pending interrupt is read by its shape alone, whatever its agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import httpx
import typer
from rich.table import Table
from rich.text import Text

from hitl.cli.pending_view import field_lines, interrupt_lines, may_escalate
from hitl.cli.terminal import DEFAULT_URL, AsJson, Token, Url, connect, emit, out, progress, server_error
from hitl.contracts.asks import pending_interrupts, read

if TYPE_CHECKING:
    from langgraph_sdk.client import SyncLangGraphClient

Group = Annotated[
    str | None,
    typer.Option(
        help="Only what one of your groups decides (reviewer, supervisor), or owner: your own questions."
    ),
]
Mine = Annotated[
    bool,
    typer.Option("--mine", help="Only what waits for you: you may decide it and have not approved it yet."),
]
DeadlineBefore = Annotated[
    str | None, typer.Option(help="Only what is due before this ISO 8601 time, with its timezone.")
]
AskedBy = Annotated[str | None, typer.Option(help="Only the threads of this person (the thread's owner).")]


def inbox(
    url: Url = DEFAULT_URL,
    token: Token = "",
    agent: Annotated[str | None, typer.Option(help="Only this agent or subagent.")] = None,
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
    group: Group = None,
    mine: Mine = False,
    deadline_before: DeadlineBefore = None,
    asked_by: AskedBy = None,
    limit: int = 50,
    as_json: AsJson = False,
) -> None:
    """List the pending approvals you may decide, oldest first, and how many wait for each of your groups."""
    client = connect(url, token)
    filters = {"agent": agent, "tool": tool, "group": group, "mine": "true" if mine else None}
    filters |= {"deadline_before": deadline_before, "asked_by": asked_by}
    params = {name: value for name, value in filters.items() if value is not None}
    try:
        page = client.http.get("/inbox", params={**params, "limit": limit})
    except httpx.HTTPError as error:
        server_error(error)
    if emit(page, as_json):
        return
    if counts := group_counts(page.get("counts")):
        out.print(counts, markup=False)
    out.print(inbox_table(page, matching=bool(params)))
    if page.get("next_cursor"):
        hidden = page["total"] - len(page["items"])
        out.print(f"more: {hidden} not shown (--limit, --group, --mine, --agent, --tool)")


def inbox_table(page: dict[str, Any], *, matching: bool = False) -> Table:
    """`GET /inbox`'s page as `hitl inbox` prints it: a row per pending call, oldest first.

    A quorum's progress stays on one line ('1 of 2 approvals: supervisor1'): folded, it read
    differently with each set of other rows beside it; the longer columns give way instead.
    """
    table = Table(title=f"Inbox ({page['total']} {'matching' if matching else 'waiting'})")
    table.add_column("thread", no_wrap=True, min_width=36)
    columns = ("agent", "tool", "what", "decisions", "group", "approvals", "owner", "age", "also waiting")
    for column in columns:
        table.add_column(column, overflow="fold", no_wrap=column == "approvals")
    for item in page["items"]:  # what agents and servers wrote is shown as text, never read as markup
        table.add_row(
            item["thread_id"],
            Text(str(item["agent"])),
            Text(str(item["tool"])),
            Text(str(item["description"])[:60]),
            ",".join(item["allowed_decisions"]) or _answered(item),
            str(item.get("group") or item["required_role"]),
            progress(item.get("approvals")) or "",
            str(item["owner"]),
            f"{item['age_seconds'] / 60:.0f} min",
            also_waiting(item),
        )
    return table


def _answered(item: dict[str, Any]) -> str:
    """What a row without decisions takes: an answer to a server's question, or a form's fields."""
    return "answer" if item.get("kind") == "mcp_elicitation" else "form"


def group_counts(counts: object) -> str:
    """Your whole inbox per group, in the server's order: 'waiting per group: reviewer 3, supervisor 1'.

    '' when the server sends no counts; `owner` is your own questions.
    """
    if not isinstance(counts, dict) or not counts:
        return ""
    return "waiting per group: " + ", ".join(f"{group} {count}" for group, count in counts.items())


def also_waiting(item: dict[str, Any]) -> str:
    """What else waits on the row's thread, for whom: 'confirm_address (owner)'; '' when nothing does."""
    return "; ".join(f"{w.get('tool')} ({w.get('required_role')})" for w in item.get("also_waiting") or [])


def show(thread: str, url: Url = DEFAULT_URL, token: Token = "", as_json: AsJson = False) -> None:
    """Show a thread's pending approvals (who decides, what answers, a form's fields) and the decisions."""
    with connect(url, token) as client:  # closed after: `show` also runs in-process (a test, a script)
        try:
            state = client.threads.get(thread)
            values = client.threads.get_state(thread)["values"]
            receipts = values.get("approval_receipts", []) if isinstance(values, dict) else []
            pending = pending_interrupts(state)
            fields = any(_filled_in(i.get("value")) for i in pending)
            schemas = client.http.get(f"/threads/{thread}/answer-schemas")["schemas"] if fields else {}
            escalated = escalations(client, thread) if may_escalate(pending) else {}
        except httpx.HTTPError as error:
            server_error(error)
    if emit({"status": state["status"], "pending": pending, "receipts": receipts}, as_json):
        return
    out.print(f"thread {thread}: [bold]{state['status']}[/bold]")
    for interrupt in pending:
        for line in interrupt_lines(interrupt, escalated_at=escalated.get(interrupt["id"]), thread=thread):
            out.print(line, markup=False, soft_wrap=True)
        value = interrupt.get("value") or {}
        if isinstance(schema := schemas.get(interrupt["id"]), dict) and _filled_in(value):
            title = f": {value['title']}" if value.get("title") else ""
            out.print(f"    to fill in{title} (hitl answer {thread} {interrupt['id']} --json '{{...}}')")
            for line in field_lines(schema):
                out.print(f"      {line}", markup=False, soft_wrap=True)
    for receipt in receipts:
        stamp = receipt.get("first_line")
        model = (
            f" (a model: {stamp.get('model')}; {receipt.get('message')})" if isinstance(stamp, dict) else ""
        )
        who = f"{receipt['reviewer']}{model} at {receipt['decided_at']}"
        quorum = progress(receipt.get("approvals"))
        out.print(
            f"  decided  {receipt['tool']}: {receipt['decision']} by {who}"
            + (f" [{quorum}]" if quorum else "")
        )


def _filled_in(value: object) -> bool:
    """Whether an interrupt is answered with fields its answer schema lists (a form, a sign-off).

    Not one answered with decisions (approve, ...), nor an MCP server's question, whose own fields
    `interrupt_lines` shows from the question.
    """
    asked = read(value)
    return asked is not None and asked.answered_with == "fields" and asked.kind != "mcp_elicitation"


def escalations(client: SyncLangGraphClient, thread: str) -> dict[str, str]:
    """When the server escalated each interrupt of `thread` (its audit trail); none if not yours to read."""
    try:
        records = client.http.get(f"/audit/{thread}")["records"]
    except httpx.HTTPStatusError:
        return {}
    return {
        str(r.get("interrupt_id")): str(r.get("decided_at"))
        for r in records
        if r.get("decision") == "escalated"
    }


def run(agent: str, message: str, url: Url = DEFAULT_URL, token: Token = "", as_json: AsJson = False) -> None:
    """Start a conversation with AGENT and wait until it finishes or first pauses."""
    client = connect(url, token)
    try:
        thread = client.threads.create()
        said: dict[str, Any] = {"messages": [{"role": "user", "content": message}]}
        result = client.runs.wait(thread["thread_id"], agent, input=said)
        state = client.threads.get(thread["thread_id"])
    except httpx.HTTPError as error:
        server_error(error)
    if emit(
        {"thread_id": thread["thread_id"], "status": state["status"], "pending": pending_interrupts(state)},
        as_json,
    ):
        return
    report(client, thread["thread_id"], result, again=False)


def report(client: SyncLangGraphClient, thread: str, result: Any, *, again: bool = True) -> None:  # noqa: ANN401
    """What a thread does after a run or an answer: waits (again: after an answer) for what, or its reply."""
    state = client.threads.get(thread)
    waiting = pending_interrupts(state)
    messages = (result or {}).get("messages") if isinstance(result, dict) else None
    if waiting:
        counts = [
            f"{action.get('name')} {text}"
            for interrupt in waiting
            for action, config in zip(
                (interrupt.get("value") or {}).get("action_requests") or [interrupt.get("value") or {}],
                (interrupt.get("value") or {}).get("review_configs") or [interrupt.get("value") or {}],
                strict=False,
            )
            if (
                text := progress(
                    {"required": config.get("approvals_required"), "approved_by": config.get("approved_by")}
                )
            )
        ]
        more = f"; {'; '.join(counts)}" if counts else ""
        asked = sum(len((i.get("value") or {}).get("action_requests") or [None]) for i in waiting)
        pending = f"{asked} approval{'' if asked == 1 else 's'} pending"
        out.print(f"thread {thread} waits{' again' if again else ''}: {pending}{more} (hitl show {thread})")
    elif messages:
        out.print(f"thread {thread}: {messages[-1].get('content')}")
    else:
        out.print(f"thread {thread}: {state['status']}")
