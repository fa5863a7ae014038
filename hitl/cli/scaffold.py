"""`hitl new agent NAME` and `hitl new project DIR`: an approval-gated agent, or a project of your own.

`new_agent` writes `agents/NAME.py` (a `create_deep_agent` with its `interrupt_on`, `run_by` and
offline script), `tools/NAME.py` (one gated example tool, idempotent by tool call id), a test
in-process and one through the server, and the graph's entry in `langgraph.json`. `new_project`
renders this template without the demo (copier, `copier.yml`), then gives it one such agent, its
README and its settings. The templates are in `hitl/cli/templates`. Not for the approval layer itself.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Annotated

import typer

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
    served = json.loads(config.read_text()).get("graphs") or {}
    if name in served:
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


@dataclass(frozen=True)
class NewProject:
    """What `new_project` made: where, and its example agent."""

    root: Path
    agent: NewAgent


DEMO_SETTINGS = re.compile(
    r"\n# --- The demo's own settings.*?# --- end of the demo's own settings ---\n", re.DOTALL
)
"""The demo's section of `.env.example`, which a project without the demo leaves out."""


def new_project(destination: Path, name: str, example: str = "assistant") -> NewProject:
    """Render this template at `destination` without the demo, with the agent `example` in it.

    The template is this checkout's committed HEAD (copier takes it from git), so a project is
    made from what was released, never from work in progress.

    Raises:
        ScaffoldError: `destination` is not empty, `name` or `example` is no fit name, or
            this checkout is no git repository (copier renders from git).
    """
    import copier  # noqa: PLC0415  (a dev dependency, needed for this command only)

    template = Path(__file__).resolve().parents[2]
    if not (template / ".git").exists() or not (template / "copier.yml").is_file():
        msg = f"{template} is no clone of the template (git, copier.yml): run it from your clone of it"
        raise ScaffoldError(msg)
    if destination.exists() and any(destination.iterdir()):
        msg = f"{destination} is not empty: choose a new folder"
        raise ScaffoldError(msg)
    if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        msg = f"{name!r} is no project name: use lowercase letters, digits and -"
        raise ScaffoldError(msg)
    copier.run_copy(
        str(template),
        destination,
        data={"project_name": name, "example_agent": example},
        vcs_ref="HEAD",
        defaults=True,
        quiet=True,
    )
    for listed in (destination / c for c in CONFIGS):
        if listed.is_file():
            document = json.loads(listed.read_text())
            document["graphs"] = {}
            listed.write_text(json.dumps(document, indent=2) + "\n")
    agent = new_agent(destination, example)
    values = {"project": name, "example": example, "example_request": EXAMPLE}
    readme = Template((TEMPLATES / "project" / "README.md.tmpl").read_text()).substitute(values)
    (destination / "README.md").write_text(readme)
    settings = destination / ".env.example"
    settings.write_text(DEMO_SETTINGS.sub("\n", settings.read_text()))
    pyproject = destination / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('name = "hitl-agent-server"', f'name = "{name}"', 1))
    return NewProject(destination, agent)


def _serve(config: Path, name: str) -> None:
    """Add the graph `name` to a `langgraph.json`'s graphs, keeping the rest as it was."""
    document = json.loads(config.read_text())
    document.setdefault("graphs", {})[name] = f"agents.{name}:graph"
    config.write_text(json.dumps(document, indent=2) + "\n")


commands = typer.Typer(help="Start something of your own: an agent in this project, or a new project.")
"""`hitl new ...` (mounted by `hitl.cli.main`)."""


@commands.command("project")
def project_command(
    destination: Annotated[Path, typer.Argument(help="A new (or empty) folder for the project.")],
    name: Annotated[str, typer.Option(help="The project's name (lowercase, digits, -).")] = "",
    example: Annotated[str, typer.Option(help="The example agent's name.")] = "assistant",
) -> None:
    """Start a project of your own: the approval layer, the web app, make dev/test, deploy, one agent."""
    try:
        made = new_project(destination, name or destination.name.lower(), example)
    except ScaffoldError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    typer.echo(
        f"made {made.root} with the agent {example} (no demo).\n\n"
        f"Next:\n  cd {made.root}\n  git init && git add -A && git commit -m 'From hitl-agent-server'\n"
        f"  make test\n  make dev      # then, in another terminal:\n"
        f"  HITL_URL=http://127.0.0.1:2024 HITL_TOKEN=dev-requester1 .venv/bin/{made.agent.run_command}"
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
