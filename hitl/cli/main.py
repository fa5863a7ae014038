"""`hitl`: the reviewer's terminal client: inbox, show, decide, run, stats, verify receipts.

It talks to the server like every other client (bearer token, the same validated and
authorised resume path) and builds resumes by tool call id (`hitl.contracts.resume`). Errors are one
line on stderr and a non-zero exit.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import click
import httpx
import typer
from langgraph_sdk import get_sync_client
from rich.console import Console
from rich.table import Table

from hitl.cli import scaffold, verify_view
from hitl.cli import stats as stats_view
from hitl.contracts.resume import ResumeError, build_resume, pending_interrupts, tool_call_ids
from hitl.proof.verification import Evidence
from hitl.proof.verification import verify as check_thread

if TYPE_CHECKING:
    from langgraph_sdk.client import SyncLangGraphClient

    from hitl.contracts.decisions import Decision

app = typer.Typer(help="Work the approval queue of a hitl-agent-server.", no_args_is_help=True)
app.add_typer(scaffold.commands, name="new")
out = Console()
err = Console(stderr=True)

Url = Annotated[str, typer.Option(envvar="HITL_URL", help="Server address.")]
Token = Annotated[str, typer.Option(envvar="HITL_TOKEN", help="Your bearer token.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
Call = Annotated[str | None, typer.Argument(help="Tool call id or tool name; optional if only one waits.")]
Rest = Annotated[
    str | None, typer.Option(help="Decide the other calls of the same batch too: approve or reject.")
]
DEFAULT_URL = "http://127.0.0.1:2024"


def fail(message: str) -> NoReturn:
    """Print one clear line and exit 1."""
    err.print(f"[red]error:[/red] {message}", highlight=False)
    raise typer.Exit(1)


def connect(url: str, token: str) -> SyncLangGraphClient:
    """A client of the server at `url`, acting with `token`."""
    if not token:
        fail("no token: pass --token or set HITL_TOKEN")
    return get_sync_client(url=url, headers={"Authorization": f"Bearer {token}"})


def server_error(error: httpx.HTTPError) -> NoReturn:
    """Turn an HTTP error into the server's own one-line explanation."""
    if isinstance(error, httpx.HTTPStatusError):
        detail = " ".join(getattr(error, "__notes__", [])) or error.response.text
        with contextlib.suppress(ValueError, AttributeError):
            detail = json.loads(detail).get("detail", detail)
        fail(f"{error.response.status_code}: {detail}")
    fail(f"cannot reach the server: {error}")


def emit(data: Any, as_json: bool) -> bool:  # noqa: ANN401, FBT001
    """Print `data` as JSON when asked; returns whether it did."""
    if as_json:
        out.print_json(json.dumps(data, default=str))
    return as_json


@app.command()
def inbox(
    url: Url = DEFAULT_URL,
    token: Token = "",
    agent: Annotated[str | None, typer.Option(help="Only this agent or subagent.")] = None,
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
    limit: int = 50,
    as_json: AsJson = False,
) -> None:
    """List the pending approvals you may decide, oldest first."""
    client = connect(url, token)
    params = {k: v for k, v in {"agent": agent, "tool": tool, "limit": limit}.items() if v is not None}
    try:
        page = client.http.get("/inbox", params=params)
    except httpx.HTTPError as error:
        server_error(error)
    if emit(page, as_json):
        return
    table = Table(title=f"Inbox ({page['total']} waiting)")
    table.add_column("thread", no_wrap=True, min_width=36)
    for column in ("agent", "tool", "what", "decisions", "approvals", "owner", "age"):
        table.add_column(column, overflow="fold")
    for item in page["items"]:
        table.add_row(
            item["thread_id"],
            str(item["agent"]),
            str(item["tool"]),
            str(item["description"])[:60],
            ",".join(item["allowed_decisions"]) or "form",
            progress(item.get("approvals")) or "",
            str(item["owner"]),
            f"{item['age_seconds'] / 60:.0f} min",
        )
    out.print(table)
    if page.get("next_cursor"):
        out.print(f"more: {page['total'] - len(page['items'])} not shown (--limit, --agent, --tool)")


@app.command()
def show(thread: str, url: Url = DEFAULT_URL, token: Token = "", as_json: AsJson = False) -> None:
    """Show a thread's pending approvals and the decisions already taken."""
    client = connect(url, token)
    try:
        state = client.threads.get(thread)
        values = client.threads.get_state(thread)["values"]
        receipts = values.get("approval_receipts", []) if isinstance(values, dict) else []
    except httpx.HTTPError as error:
        server_error(error)
    pending = pending_interrupts(state)
    if emit({"status": state["status"], "pending": pending, "receipts": receipts}, as_json):
        return
    out.print(f"thread {thread}: [bold]{state['status']}[/bold]")
    for interrupt in pending:
        value = interrupt.get("value") or {}
        configs = value.get("review_configs") or [value]
        for index, action in enumerate(value.get("action_requests") or [value]):
            what = action.get("name") or action.get("form") or action.get("action")
            args = json.dumps(action.get("args") or action.get("context"))
            config = configs[index] if index < len(configs) else {}
            quorum = progress(
                {"required": config.get("approvals_required"), "approved_by": config.get("approved_by")}
            )
            out.print(
                f"  waiting  {interrupt['id']}  {action.get('agent', value.get('agent'))} wants {what}  "
                f"call={action.get('tool_call_id')}  args={args}" + (f"  [{quorum}]" if quorum else "")
            )
    for receipt in receipts:
        who = f"{receipt['reviewer']} at {receipt['decided_at']}"
        quorum = progress(receipt.get("approvals"))
        out.print(
            f"  decided  {receipt['tool']}: {receipt['decision']} by {who}"
            + (f" [{quorum}]" if quorum else "")
        )


def progress(approvals: object) -> str | None:
    """A quorum's progress in words: '1 of 2 approvals: supervisor1'; None for a call one person decides."""
    if not isinstance(approvals, dict) or not isinstance(required := approvals.get("required"), int):
        return None
    people = [str(p) for p in approvals.get("approved_by") or []]
    return f"{len(people)} of {required} approvals" + (f": {', '.join(people)}" if people else "")


def _decide(
    thread: str, call: str | None, decision: dict[str, Any], rest: str | None, client: SyncLangGraphClient
) -> None:
    try:
        interrupts = pending_interrupts(client.threads.get(thread))
        target = _find_call(interrupts, call)
        if decision["type"] == "edit":
            decision = _edited(interrupts, target, decision)
        chosen: dict[str, Decision] = {target: decision}  # type: ignore[dict-item]
        if rest is not None:
            if rest not in {"approve", "reject"}:
                fail("--rest must be approve or reject")
            batch = next(ids for i in interrupts if target in (ids := tool_call_ids(i)))
            chosen |= {other: {"type": rest} for other in batch if other != target}  # type: ignore[misc]
        resume = build_resume(interrupts, chosen)
        result = client.runs.wait(thread, _assistant(client, thread), command={"resume": resume})
    except ResumeError as error:
        fail(f"{error} (use --rest approve|reject to decide them together)")
    except httpx.HTTPError as error:
        server_error(error)
    _report(client, thread, result)


def _find_call(interrupts: list[dict[str, Any]], call: str | None) -> str:
    calls = [
        (cid, action.get("name") or action.get("form") or "")
        for i in interrupts
        for cid, action in zip(
            tool_call_ids(i),
            (i.get("value") or {}).get("action_requests") or [i.get("value") or {}],
            strict=False,
        )
    ]
    if not calls:
        fail("nothing is waiting on this thread")
    matching = [cid for cid, name in calls if call in {None, cid, name}]
    if len(matching) != 1:
        listed = ", ".join(f"{cid} ({name})" for cid, name in calls)
        fail(
            f"say which call to decide: {listed}"
            if matching
            else f"no pending call {call!r}; waiting: {listed}"
        )
    return matching[0]


def _edited(interrupts: list[dict[str, Any]], call: str, decision: dict[str, Any]) -> dict[str, Any]:
    for interrupt in interrupts:
        value = interrupt.get("value") or {}
        for action in value.get("action_requests") or [value]:
            if action.get("tool_call_id") == call:
                args = decision["edited_action"]["args"]
                if args is None:
                    text = click.edit(json.dumps(action.get("args", {}), indent=2), extension=".json")
                    if text is None:
                        fail("edit cancelled: the editor was closed without saving")
                    args = _json_object(text, "the edited args")
                return {
                    "type": "edit",
                    "edited_action": {"name": action["name"], "args": {**action.get("args", {}), **args}},
                }
    fail(f"no pending call {call}")


def _assistant(client: SyncLangGraphClient, thread: str) -> str:
    """The agent a thread runs (its metadata, as the server records it); no guess when it names none."""
    metadata = client.threads.get(thread).get("metadata") or {}
    agent = metadata.get("graph_id") or metadata.get("assistant_id")
    if not agent:
        fail(f"thread {thread} names no agent (its metadata has no graph_id): it was never run")
    return str(agent)


def _report(client: SyncLangGraphClient, thread: str, result: Any) -> None:  # noqa: ANN401
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
        out.print(f"thread {thread} waits again: {pending}{more} (hitl show {thread})")
    elif messages:
        out.print(f"thread {thread}: {messages[-1].get('content')}")
    else:
        out.print(f"thread {thread}: {state['status']}")


def _json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as error:
        fail(f"{what} is not valid JSON: {error}")
    if not isinstance(value, dict):
        fail(f"{what} must be a JSON object")
    return value


@app.command()
def approve(
    thread: str,
    call: Call = None,
    rest: Rest = None,
    allow_in_thread: Annotated[
        bool, typer.Option("--allow-in-thread", help="Don't ask again in this thread for this tool.")
    ] = False,
    bounds: Annotated[
        str | None,
        typer.Option(help='With --allow-in-thread: argument bounds, e.g. \'{"amount": {"max": 100}}\'.'),
    ] = None,
    url: Url = DEFAULT_URL,
    token: Token = "",
) -> None:
    """Approve a pending tool call (and, with --allow-in-thread, later ones of its tool in the thread)."""
    decision: dict[str, Any] = {"type": "approve"}
    if allow_in_thread or bounds:
        limits = {"bounds": _json_object(bounds, "--bounds")} if bounds else {}
        decision["allow"] = {"scope": "thread", **limits}
    _decide(thread, call, decision, rest, connect(url, token))


@app.command()
def reject(
    thread: str,
    call: Call = None,
    message: Annotated[str | None, typer.Option(help="Why; the agent is told.")] = None,
    rest: Rest = None,
    url: Url = DEFAULT_URL,
    token: Token = "",
) -> None:
    """Reject a pending tool call, optionally saying why."""
    decision: dict[str, Any] = {"type": "reject", **({"message": message} if message else {})}
    _decide(thread, call, decision, rest, connect(url, token))


@app.command()
def respond(
    thread: str,
    call: Call = None,
    message: Annotated[str, typer.Option(help="The answer the agent receives.")] = "",
    rest: Rest = None,
    url: Url = DEFAULT_URL,
    token: Token = "",
) -> None:
    """Answer in the tool's place (e.g. a question the agent asks its user)."""
    if not message:
        fail("respond needs --message")
    _decide(thread, call, {"type": "respond", "message": message}, rest, connect(url, token))


@app.command()
def edit(
    thread: str,
    call: Call = None,
    args: Annotated[
        str | None, typer.Option(help="JSON object of args to change; without it $EDITOR opens.")
    ] = None,
    rest: Rest = None,
    url: Url = DEFAULT_URL,
    token: Token = "",
) -> None:
    """Edit a pending tool call's arguments, then run it."""
    given = _json_object(args, "--args") if args is not None else None
    _decide(thread, call, {"type": "edit", "edited_action": {"args": given}}, rest, connect(url, token))


@app.command()
def answer(
    thread: str,
    interrupt: str,
    as_json_answer: Annotated[str, typer.Option("--json", help="The answer, as JSON (forms).")],
    url: Url = DEFAULT_URL,
    token: Token = "",
) -> None:
    """Answer one interrupt by id with a JSON value (flight booking form, sign-off)."""
    value = _json_object(as_json_answer, "--json")
    client = connect(url, token)
    try:
        result = client.runs.wait(thread, _assistant(client, thread), command={"resume": {interrupt: value}})
    except httpx.HTTPError as error:
        server_error(error)
    _report(client, thread, result)


@app.command()
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
    _report(client, thread["thread_id"], result)


@app.command()
def stats(
    url: Url = DEFAULT_URL,
    token: Token = "",
    since: Annotated[str | None, typer.Option(help="From: an ISO time or date, or 24h, 7d, 4w back.")] = None,
    until: Annotated[str | None, typer.Option(help="Until (default now): as --since.")] = None,
    agent: Annotated[str | None, typer.Option(help="Only this agent or subagent.")] = None,
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
    as_json: AsJson = False,
) -> None:
    """How approvals were decided: counts, time to decision, rates, edits, reviewers, signals."""
    client = connect(url, token)
    filters = {"since": since, "until": until, "agent": agent, "tool": tool}
    try:
        summary = client.http.get("/analytics", params={k: v for k, v in filters.items() if v})
    except httpx.HTTPError as error:
        server_error(error)
    if not emit(summary, as_json):
        stats_view.render(summary, out)


@app.command()
def verify(
    thread: Annotated[
        str | None, typer.Argument(help="The thread whose receipts and trail to check.")
    ] = None,
    receipt: Annotated[
        Path | None, typer.Option(help="Check one receipt file instead (a JSON receipt or a bare JWS).")
    ] = None,
    offline: Annotated[
        Path | None, typer.Option(help="Check an export written by --save, without the server.")
    ] = None,
    save: Annotated[Path | None, typer.Option(help="Also write what was checked here (JSON).")] = None,
    jwks: Annotated[
        Path | None, typer.Option(help="Public keys (JWKS JSON) you trust, instead of the server's.")
    ] = None,
    url: Url = DEFAULT_URL,
    token: Token = "",
    as_json: AsJson = False,
) -> None:
    """Check signed receipts against the JWKS, and the audit chain; print what is wrong (exit 1)."""
    keys = _json_object(jwks.read_text(), "--jwks") if jwks else None
    if receipt is not None:
        try:
            given = verify_view.read_receipt(receipt)
        except (OSError, ValueError) as error:
            fail(str(error))
        problems, claims = verify_view.receipt_problems(given, keys or _public_keys(url))
        if not emit({"ok": not problems, "problems": problems, "claims": claims}, as_json):
            verify_view.render_receipt(problems, claims, out)
        raise typer.Exit(1 if problems else 0)
    if offline is not None:
        try:
            evidence = Evidence.from_json(_json_object(offline.read_text(), str(offline)))
        except (OSError, ValueError) as error:
            fail(f"cannot read {offline}: {error}")
    elif thread is not None:
        evidence = _evidence(connect(url, token), thread, keys or _public_keys(url))
    else:
        fail("say what to verify: a thread, --receipt FILE or --offline FILE")
    if keys is not None:
        evidence = replace(evidence, jwks=keys)
    if save is not None:
        save.write_text(json.dumps(evidence.as_json(), indent=2, default=str) + "\n")
    report = check_thread(evidence)
    if not emit(report.as_json(), as_json):
        verify_view.render(report, out)
    raise typer.Exit(0 if report.ok else 1)


def _public_keys(url: str) -> dict[str, Any]:
    try:
        answer = httpx.get(f"{url.rstrip('/')}/.well-known/jwks.json", timeout=30)
        answer.raise_for_status()
    except httpx.HTTPError as error:
        server_error(error)
    return dict(answer.json())


def _evidence(client: SyncLangGraphClient, thread: str, keys: dict[str, Any]) -> Evidence:
    try:
        trail = client.http.get(f"/audit/{thread}")
        values = client.threads.get_state(thread)["values"]
    except httpx.HTTPError as error:
        server_error(error)
    receipts = values.get("approval_receipts", []) if isinstance(values, dict) else []
    return Evidence(
        thread_id=thread,
        jwks=keys,
        records=list(trail["records"]),
        head=trail.get("head"),
        receipts=list(receipts),
    )


@app.command("openai-scripted")
def openai_scripted(
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8788,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    config: Annotated[
        Path, typer.Option(help="The langgraph.json whose agents' offline scripts it answers with.")
    ] = Path("langgraph.json"),
) -> None:
    """Serve the offline scripted model as an OpenAI-compatible endpoint (/v1/chat/completions)."""
    from hitl.model.scripted.endpoint import serve  # noqa: PLC0415  (the reviewer commands never need it)
    from hitl.policy.served import load_graphs  # noqa: PLC0415

    if not config.is_file():
        fail(f"{config} not found: run this where your langgraph.json is, or pass --config.")
    load_graphs(config)
    serve(port, host)
