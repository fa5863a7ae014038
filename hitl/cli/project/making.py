"""`hitl new project DIR`: a project of your own, made from one release of the template.

copier renders the template at the release's commit without the demo (`copier.yml`), from the
URL the team shares (any URL git clones: `sources`), and records both (`.copier-answers.yml`), so
that any clone of the project upgrades the same way (`hitl upgrade`). The release's own code then
finishes the project (`finishing`, run inside it), so a project is that release's and nothing of
the checkout that made it.
Not for upgrades (`upgrade`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hitl.cli.project.releases import Release, ReleaseError, chosen
from hitl.cli.project.sources import Template, remote_of

PROJECT_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
AGENT_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


class ProjectError(ValueError):
    """A project that cannot be made or upgraded; the message says why and what to do."""


@dataclass(frozen=True)
class NewProject:
    """What `new_project` made: where, from which template and release, and its example agent."""

    root: Path
    template: str
    release: Release
    example: str
    run_command: str


def new_project(
    destination: Path, name: str, example: str = "assistant", template: str = "", release: str | None = None
) -> NewProject:
    """Render `release` (the newest when None) of the template at `template` into `destination`.

    `template` is where the team shares the template (any URL git clones, or a folder with a clone
    of it); empty: the remote this checkout was cloned from. The project records it, not this
    machine's path.

    Raises:
        ProjectError: `destination` is not empty, a name does not fit, the template or the
            release cannot be found, copier cannot render it, or the release could not finish the project.
    """
    import copier  # noqa: PLC0415  (a dev dependency, needed for this command only)
    from copier.errors import CopierError  # noqa: PLC0415

    if destination.exists() and any(destination.iterdir()):
        msg = f"{destination} is not empty: choose a new folder"
        raise ProjectError(msg)
    if not PROJECT_NAME.match(name):
        msg = f"{name!r} is no project name: use lowercase letters, digits and -"
        raise ProjectError(msg)
    if not AGENT_NAME.match(example):
        msg = f"{example!r} is no agent name: use lowercase letters, digits and _, starting with a letter"
        raise ProjectError(msg)
    url = template or remote_of(Path(__file__).resolve().parents[3])
    if not url:
        msg = (
            "this checkout of the template has no remote `origin`: pass --template with the URL your team "
            "clones the template from (or a folder holding a clone of it), so the project records that"
        )
        raise ProjectError(msg)
    shared = Template(url)
    try:
        made_from = chosen(shared.releases(), release)
    except ReleaseError as error:
        raise ProjectError(str(error)) from None
    try:
        copier.run_copy(
            shared.for_copier,
            destination,
            data={"project_name": name, "example_agent": example, "release": str(made_from)},
            vcs_ref=made_from.commit,
            defaults=True,
            quiet=True,
        )
    except (CopierError, ValueError) as error:
        msg = f"copier could not render release {made_from} of the template at {url}: {error}"
        raise ProjectError(msg) from None
    finished = _finish(destination, name, example)
    return NewProject(destination, url, made_from, example, finished)


def _finish(root: Path, name: str, example: str) -> str:
    """Run the release's own finishing step in `root`; the `hitl run` line of its example agent.

    The project's code comes first on the path (`-m` from its folder), the dependencies from
    this interpreter's environment.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(  # noqa: S603  (this Python, the release's own module, checked names)
        [sys.executable, "-m", "hitl.cli.project.finishing", name, example],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        msg = f"the release could not finish the project in {root}:\n{done.stderr.strip()[-2000:]}"
        raise ProjectError(msg)
    return done.stdout.strip().splitlines()[-1]
