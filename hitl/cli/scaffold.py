"""`hitl new agent NAME` and `hitl new project DIR`: an approval-gated agent, or a project of your own.

`new_agent` writes `agents/NAME.py` (a `create_deep_agent` with its `interrupt_on`, `run_by` and
offline script), `tools/NAME.py` (one gated example tool, idempotent by tool call id), a test
in-process and one through the server, and the graph's line in `langgraph.json`. `hitl new project`
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

TEMPLATES = Path(__file__).parent / "templates"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
EXAMPLE = "Send ana@example.com the update: invoice INV-7 is paid"
"""The request the new agent's offline script answers by calling its gated tool."""
PATTERN = r"send (?P<to>\S+@\S+) the update:?\s*(?P<text>.+)"
"""The rule that reads it (a regular expression, as it is written into the agent's module)."""
CONFIGS = ("langgraph.json", "langgraph.replicas.json")
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


def new_agent(root: Path, name: str) -> NewAgent:
    """Write the agent `name` into the project at `root` and serve it from its `langgraph.json`.

    Raises:
        ScaffoldError: `name` is no lowercase identifier, is taken (a module, a served graph), or
            `root` has no `langgraph.json`.
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
    for path, template in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template((TEMPLATES / "agent" / template).read_text()).substitute(values))
    served_by = [listed for listed in (root / c for c in CONFIGS) if listed.is_file()]
    for listed in served_by:
        _serve(listed, name)
    return NewAgent(name, (*files, *served_by), EXAMPLE)


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
) -> None:
    """Write agents/NAME.py, tools/NAME.py and their tests, and serve the agent from langgraph.json."""
    try:
        made = new_agent(root, name)
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
