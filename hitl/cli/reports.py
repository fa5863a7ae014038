"""What was decided, counted and checked: `hitl stats`, `hitl verify` and `hitl triage`.

`verify` checks signed receipts against the JWKS and a thread's audit chain (`hitl.proof`),
from the server, a saved export or one receipt file; the printing is `stats_view` and `verify_view`.
`triage` checks a first-line reviewer: `eval` runs it over a labelled set before a team delegates
to it (`hitl.model.first_line.evaluation`), `samples` and `check` are people's look at what it
decided afterwards (`GET /first-line/samples`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import httpx
import typer

from hitl.cli import stats_view, verify_view
from hitl.cli.terminal import (
    DEFAULT_URL,
    AsJson,
    Token,
    Url,
    connect,
    emit,
    fail,
    json_object,
    out,
    server_error,
)
from hitl.model.first_line import evaluation
from hitl.model.first_line.classifier import build
from hitl.proof.verification import Evidence
from hitl.proof.verification import verify as check_thread
from hitl.settings import get_settings

if TYPE_CHECKING:
    from langgraph_sdk.client import SyncLangGraphClient

    from hitl.model.first_line.classifier import Classifier
    from hitl.policy.gates import ToolGate
    from hitl.policy.served import AgentCard
    from hitl.settings import Settings

triage = typer.Typer(help="Check a first-line reviewer: before delegating to it, and what it decided.")


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
    keys = json_object(jwks.read_text(), "--jwks") if jwks else None
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
            evidence = Evidence.from_json(json_object(offline.read_text(), str(offline)))
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
    """The thread's trail and the receipts in its state; a deleted thread's trail alone (staff read it)."""
    try:
        trail = client.http.get(f"/audit/{thread}")
    except httpx.HTTPError as error:
        server_error(error)
    try:
        values = client.threads.get_state(thread)["values"]
    except httpx.HTTPStatusError as error:
        if error.response.status_code != httpx.codes.NOT_FOUND:
            server_error(error)
        values = {}  # the thread was deleted since: its trail alone
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


@triage.command("eval")
def triage_eval(
    labelled: Annotated[Path, typer.Argument(help="JSON Lines: {tool, args, label: approve|reject|person}.")],
    graph: Annotated[str, typer.Option(help="The graph (as langgraph.json serves it) whose policy to use.")],
    config: Annotated[Path, typer.Option(help="The langgraph.json that serves it.")] = Path("langgraph.json"),
    as_json: AsJson = False,
) -> None:
    """Run a graph's first-line reviewer over labelled calls: confusion matrix and false-approval rate."""
    from hitl.policy.served import card_of, load_graphs  # noqa: PLC0415  (only this command loads graphs)

    if not config.is_file():
        fail(f"{config} not found: run this where your langgraph.json is, or pass --config.")
    try:
        calls = evaluation.read_labelled(labelled.read_text().splitlines())
        card = card_of(load_graphs(config).get(graph))
    except (OSError, evaluation.LabelledSetError) as error:
        fail(f"{labelled}: {error}")
    if card is None:
        fail(f"{config} serves no graph {graph!r} built with hitl's create_deep_agent")
    settings = get_settings()
    try:
        result = evaluation.evaluate(
            calls, lambda call: _gate(card, call), lambda gate: _classifier(gate, settings)
        )
    except evaluation.LabelledSetError as error:
        fail(f"{labelled}: {error} in graph {graph} (is its first-line reviewer switched on?)")
    if not emit(result.as_json(), as_json):
        stats_view.render_evaluation(result, out)


def _gate(card: AgentCard, call: evaluation.Labelled) -> tuple[str, ToolGate] | None:
    """The gate a labelled call is reviewed under: its agent's (or the first naming a first-line reviewer)."""
    gates = [g for g in card.catalog.gates.get(call.tool, ()) if g.first_line is not None]
    return (call.agent or card.name, gates[0]) if gates else None


def _classifier(gate: ToolGate, settings: Settings) -> Classifier:
    """The gate's first-line classifier; one that cannot be built fails each call, as in the server."""
    assert gate.first_line is not None  # noqa: S101  (`_gate` only finds gates that name one)
    return build(gate.first_line, settings)


@triage.command("samples")
def triage_samples(
    url: Url = DEFAULT_URL, token: Token = "", limit: int = 50, as_json: AsJson = False
) -> None:
    """List first-line approvals sampled for a person to check, oldest first."""
    client = connect(url, token)
    try:
        page = client.http.get("/first-line/samples", params={"limit": limit})
    except httpx.HTTPError as error:
        server_error(error)
    if not emit(page, as_json):
        stats_view.render_samples(page, out)


@triage.command("check")
def triage_check(
    thread: Annotated[str, typer.Argument(help="The thread of the first-line decision.")],
    tool_call_id: Annotated[str, typer.Argument(help="Its tool call id.")],
    review: Annotated[str, typer.Argument(help="fine, or should_not_have.")],
    note: Annotated[str, typer.Option(help="Why, for the trail.")] = "",
    url: Url = DEFAULT_URL,
    token: Token = "",
    as_json: AsJson = False,
) -> None:
    """Say whether the first-line reviewer's decision on a call was fine; recorded once, on the trail."""
    client = connect(url, token)
    try:
        checked = client.http.post(
            f"/first-line/samples/{thread}/{tool_call_id}", json={"review": review, "note": note}
        )
    except httpx.HTTPError as error:
        server_error(error)
    if not emit(checked, as_json):
        out.print(
            f"{checked['tool']} ({tool_call_id}): {checked['review']} by {checked['reviewed_by']}",
            highlight=False,
        )
