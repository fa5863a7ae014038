"""`hitl`: the reviewer's terminal client: inbox, show, decide, run, stats, verify receipts, triage.

It talks to the server like every other client (bearer token, the same validated and
authorised resume path) and builds resumes by tool call id (`hitl.contracts.asks`). Errors are one
line on stderr and a non-zero exit. This module is the command (`hitl.cli.main:app`, the console
script): the queue is `queue`, the answers `decide`, stats and verification `reports`; a
project's own agents and releases are `scaffold` and `project` (`hitl new`, `hitl upgrade`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hitl.cli import decide, queue, reports, scaffold
from hitl.cli.project.upgrade import upgrade_command
from hitl.cli.terminal import fail

app = typer.Typer(help="Work the approval queue of a hitl-agent-server.", no_args_is_help=True)
app.add_typer(scaffold.commands, name="new")
app.add_typer(reports.triage, name="triage")
for command in (
    queue.inbox,
    queue.show,
    decide.approve,
    decide.reject,
    decide.respond,
    decide.edit,
    decide.answer,
    queue.run,
    reports.stats,
    reports.verify,
):
    app.command()(command)
app.command("upgrade")(upgrade_command)


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
