"""`hitl new agent NAME` and `hitl new project DIR`: an approval-gated agent, or a project of your own.

`new_agent` writes `agents/NAME.py` (a `create_deep_agent` with its `interrupt_on`, `run_by` and
offline script; with `--mcp URL`, an MCP server whose URL `.env` holds), `tools/NAME.py` (one gated
example tool, idempotent by tool call id), a test in-process and one through the server, and the
graph's line in `langgraph.json`. `hitl new project`
is `hitl.cli.project.making`'s. The templates are in `hitl/cli/templates`. Not for the approval layer
itself.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Annotated

import typer

from hitl.cli.project.served_graphs import add_graph, served
from hitl.mcp.servers import SERVER_NAME

TEMPLATES = Path(__file__).parent / "templates"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
EXAMPLE = "Send ana@example.com the update: invoice INV-7 is paid"
"""The request the new agent's offline script answers by calling its gated tool."""
PATTERN = r"send (?P<to>\S+@\S+) the update:?\s*(?P<text>.+)"
"""The rule that reads it (a regular expression, as it is written into the agent's module)."""
CONFIGS = ("langgraph.json", "langgraph.replicas.json")
MCP_URL = re.compile(r"https?://[^\s/@]+(/\S*)?")
"""What `--mcp` takes: an http(s) URL with a host and no user or password."""
"""The package files that list the served graphs (the replicas' one only where it exists)."""


class ScaffoldError(ValueError):
    """A name or a project the scaffold cannot write into; the message says why."""


@dataclass(frozen=True)
class NewAgent:
    """What `new_agent` wrote, and the request that makes the agent pause on its gated tool."""

    name: str
    written: tuple[Path, ...]
    example: str

    @property
    def run_command(self) -> str:
        """The `hitl run` line that starts it."""
        return f'hitl run {self.name} "{self.example}"'


def new_agent(root: Path, name: str, mcp_url: str | None = None) -> NewAgent:
    """Write the agent `name` into the project at `root` and serve it from its `langgraph.json`.

    With `mcp_url`, the agent declares an MCP server (named after it) whose URL the setting
    `<NAME>_MCP_URL` holds: written to the project's `.env` (made from `.env.example` first, as
    `make dev` would), never into code.

    Raises:
        ScaffoldError: `name` is no lowercase identifier, is taken (a module, a served graph), or
            `root` has no `langgraph.json`; `mcp_url` is no http(s) URL.
    """
    config = root / CONFIGS[0]
    if not config.is_file():
        msg = f"{root} has no langgraph.json: run `hitl new agent` in your project's folder (or pass --root)"
        raise ScaffoldError(msg)
    if not NAME.match(name) or keyword.iskeyword(name):
        msg = f"{name!r} is no agent name: use lowercase letters, digits and _, starting with a letter"
        raise ScaffoldError(msg)
    files = {
        root / "agents" / f"{name}.py": "agent.py.tmpl",
        root / "tools" / f"{name}.py": "tools.py.tmpl",
        root / "tests" / "graphs" / f"test_{name}.py": "test_graph.py.tmpl",
        root / "tests" / "server" / f"test_{name}_server.py": "test_server.py.tmpl",
    }
    if taken := [str(path.relative_to(root)) for path in files if path.exists()]:
        msg = f"{name!r} is taken: {', '.join(taken)} exist already"
        raise ScaffoldError(msg)
    try:
        serving = served(config.read_text())
    except (ValueError, AttributeError) as error:
        msg = f"{config} cannot be read: {error}"
        raise ScaffoldError(msg) from None
    if name in serving:
        msg = f"{name!r} is taken: langgraph.json serves a graph of that name already"
        raise ScaffoldError(msg)
    values = {"name": name, "table": f"{name}_outbox", "example": EXAMPLE, "pattern": PATTERN}
    setting = f"{name.upper()}_MCP_URL"
    if mcp_url is not None:
        if not MCP_URL.fullmatch(mcp_url) or not SERVER_NAME.fullmatch(_server(name)):
            msg = f"--mcp takes the MCP server's http(s) URL (got {mcp_url!r})"
            raise ScaffoldError(msg)
        values |= {"server": _server(name), "setting": setting, "setting_field": setting.lower()}
    for path, template in files.items():
        chosen = "agent_mcp.py.tmpl" if template == "agent.py.tmpl" and mcp_url is not None else template
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template((TEMPLATES / "agent" / chosen).read_text()).substitute(values))
    served_by = [listed for listed in (root / c for c in CONFIGS) if listed.is_file()]
    for listed in served_by:
        _serve(listed, name)
    env = [_set_env(root, setting, mcp_url)] if mcp_url is not None else []
    return NewAgent(name, (*files, *served_by, *env), EXAMPLE)


def _server(name: str) -> str:
    """An agent's MCP server's name: its own, '_' as '-' (a server's name has no '_')."""
    return name.replace("_", "-")


def _set_env(root: Path, setting: str, value: str) -> Path:
    """`setting=value` in the project's `.env` (made from `.env.example` when missing); its path."""
    env = root / ".env"
    if not env.exists() and (root / ".env.example").is_file():
        env.write_text((root / ".env.example").read_text())
    kept = [
        line
        for line in (env.read_text().splitlines() if env.exists() else [])
        if not line.startswith(f"{setting}=")
    ]
    env.write_text("\n".join([*kept, f"{setting}={value}"]) + "\n")
    return env


def _serve(config: Path, name: str) -> None:
    """Add the graph `name` to a `langgraph.json`'s graphs: one line, every other byte as it was."""
    config.write_text(add_graph(config.read_text(), name, f"agents.{name}:graph"))


commands = typer.Typer(help="Start something of your own: an agent in this project, or a new project.")
"""`hitl new ...` (mounted by `hitl.cli.main`)."""


@commands.command("project")
def project_command(
    destination: Annotated[Path, typer.Argument(help="A new (or empty) folder for the project.")],
    name: Annotated[str, typer.Option(help="The project's name (lowercase, digits, -).")] = "",
    example: Annotated[str, typer.Option(help="The example agent's name.")] = "assistant",
    template: Annotated[
        str,
        typer.Option(
            help="Where your team shares the template: any URL git clones (https, ssh, file://), or a folder "
            "with a clone of it (default: the remote this checkout was cloned from). The project records it "
            "for upgrades."
        ),
    ] = "",
    release: Annotated[
        str | None, typer.Option(help="The template's release to start from (default: the newest).")
    ] = None,
) -> None:
    """Start a project of your own from a release: the layer, the web app, make dev/test, one agent."""
    from hitl.cli.project.making import ProjectError, new_project  # noqa: PLC0415  (copier, on demand)

    try:
        made = new_project(destination, name or destination.name.lower(), example, template, release)
    except ProjectError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    typer.echo(
        f"made {made.root} from release {made.release} of {made.template}, with the agent {example} "
        f"(no demo).\n\nNext:\n  cd {made.root}\n"
        f"  git init && git add -A && git commit -m 'From hitl-agent-server {made.release}'\n"
        f"  make test\n  make dev      # then, in another terminal:\n"
        f"  HITL_URL=http://127.0.0.1:2024 HITL_TOKEN=dev-requester1 .venv/bin/{made.run_command}"
    )


@commands.command("agent")
def agent_command(
    name: Annotated[str, typer.Argument(help="The agent's name: its graph id, module and tool file.")],
    root: Annotated[Path, typer.Option(help="The project's folder (where langgraph.json is).")] = Path(),
    mcp: Annotated[
        str | None,
        typer.Option(
            help="An MCP server's URL: the agent gets its tools behind its gate (the URL goes to .env)."
        ),
    ] = None,
) -> None:
    """Write agents/NAME.py, tools/NAME.py and their tests, and serve the agent from langgraph.json."""
    try:
        made = new_agent(root, name, mcp)
    except ScaffoldError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    for path in made.written:
        typer.echo(f"wrote {path.relative_to(root) if path.is_relative_to(root) else path}")
    typer.echo(
        f"\nNext: `make dev` serves {name} (web app: /app/, `hitl inbox`); `make test` runs its tests.\n"
        f"Ask it for something it must wait for (a reviewer approves with `hitl approve <thread>`):\n"
    )
    typer.echo(made.run_command)
