"""The last step of `hitl new project`, run by the release's own code inside the project it rendered.

copier rendered the template without the demo; this serves the example agent in place of the
demo's graphs (one line of `langgraph.json`, every other byte kept), writes the agent with
`hitl new agent`, the project's README and its `project.mk` (the team's own make targets, which no
release touches), and its name into `pyproject.toml`. Run as
`python -m hitl.cli.project.finishing NAME EXAMPLE` in the project's folder; prints the request
that makes the example agent pause. Not for a project that exists already.
"""

from __future__ import annotations

import sys
from pathlib import Path
from string import Template

from hitl.cli.project import sources
from hitl.cli.project.served_graphs import with_graphs
from hitl.cli.scaffold import CONFIGS, EXAMPLE, TEMPLATES, new_agent

TEMPLATE_NAME = 'name = "hitl-agent-server"'
"""The distribution's name in the template's `pyproject.toml`, which becomes the project's."""


def finish(root: Path, name: str, example: str) -> str:
    """Finish the project at `root` named `name` with the agent `example`; its `hitl run` line."""
    for config in (root / listed for listed in CONFIGS):
        if config.is_file():
            config.write_text(with_graphs(config.read_text(), {}))
    agent = new_agent(root, example)
    answers = _answers(root / ".copier-answers.yml")
    values = {
        "project": name,
        "example": example,
        "example_request": EXAMPLE,
        "release": answers.get("release", "?"),
        "template": sources.Template.recorded(answers.get("_src_path", "?")).url,
    }
    for written in ("README.md", "project.mk"):
        text = Template((TEMPLATES / "project" / f"{written}.tmpl").read_text()).substitute(values)
        (root / written).write_text(text)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(TEMPLATE_NAME, f'name = "{name}"', 1))
    return agent.run_command


def _answers(path: Path) -> dict[str, str]:
    """The top-level `key: value` lines of copier's answers file, as text."""
    lines = (
        [line for line in path.read_text().splitlines() if not line.startswith("#")] if path.is_file() else []
    )
    return {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in lines) if value}


if __name__ == "__main__":
    print(finish(Path.cwd(), sys.argv[1], sys.argv[2]))  # noqa: T201  (the command's one line of output)
