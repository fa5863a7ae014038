"""The answers: `hitl approve`, `reject`, `respond`, `edit` and `answer`, by tool call id or tool name.

A decision names one call; the resume is built by tool call id (`hitl.contracts.asks`), never by
position, so a reordered batch can never approve the wrong call. The server checks who may decide.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import click
import httpx
import typer

from hitl.cli.queue import report
from hitl.cli.terminal import DEFAULT_URL, Token, Url, connect, fail, json_object, server_error
from hitl.contracts.asks import ResumeError, build_resume, pending_interrupts, tool_call_ids

if TYPE_CHECKING:
    from langgraph_sdk.client import SyncLangGraphClient

    from hitl.contracts.decisions import Decision

Call = Annotated[str | None, typer.Argument(help="Tool call id or tool name; optional if only one waits.")]
Rest = Annotated[
    str | None, typer.Option(help="Decide the other calls of the same batch too: approve or reject.")
]


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
        limits = {"bounds": json_object(bounds, "--bounds")} if bounds else {}
        decision["allow"] = {"scope": "thread", **limits}
    _decide(thread, call, decision, rest, connect(url, token))


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
    given = json_object(args, "--args") if args is not None else None
    _decide(thread, call, {"type": "edit", "edited_action": {"args": given}}, rest, connect(url, token))


def answer(
    thread: str,
    interrupt: str,
    as_json_answer: Annotated[
        str, typer.Option("--json", help="The answer, as JSON: the fields `hitl show` lists for the form.")
    ],
    url: Url = DEFAULT_URL,
    token: Token = "",
) -> None:
    """Answer one interrupt by id with a JSON value: a tool's form, a sign-off, or an MCP server's question.

    A sign-off takes `{"approved": ..., "reason": ...}`; an MCP server's question
    `{"action": "accept", "content": {...}}`, `{"action": "decline"}` or `{"action": "cancel"}`.
    """
    value = json_object(as_json_answer, "--json")
    client = connect(url, token)
    try:
        result = client.runs.wait(thread, _assistant(client, thread), command={"resume": {interrupt: value}})
    except httpx.HTTPError as error:
        server_error(error)
    report(client, thread, result)


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
    report(client, thread, result)


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


def _edited(  # noqa: RET503  (`fail` exits)
    interrupts: list[dict[str, Any]], call: str, decision: dict[str, Any]
) -> dict[str, Any]:
    for interrupt in interrupts:
        value = interrupt.get("value") or {}
        for action in value.get("action_requests") or [value]:
            if action.get("tool_call_id") == call:
                args = decision["edited_action"]["args"]
                if args is None:
                    text = click.edit(json.dumps(action.get("args", {}), indent=2), extension=".json")
                    if text is None:
                        fail("edit cancelled: the editor was closed without saving")
                    args = json_object(text, "the edited args")
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
