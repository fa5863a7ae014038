"""The template as a team shares it, for the tests of projects made from it and upgraded.

The team's template is a bare repository on disk reached by a `file://` URL without `.git` (as a
self-hosted server would serve it), holding this checkout's HEAD; the maintainers cut each release
in their clone as docs/projects.md says (`__version__`, the CHANGELOG's section, then the commit
listed in `releases.toml` in a commit of its own) and push it. A project gets its own venv (its own
code, this checkout's installed dependencies: `tests.newcomer.project_venv`); copier's cache of
remote templates is the test's own folder, never the home directory's.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tests.newcomer import project_venv, shell_env

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
FIRST, NEXT, LATER = "99.0.0", "99.1.0", "99.2.0"
"""The template's releases in these tests: this checkout's HEAD, and two made on top of it."""
GIT_IDENTITY = ("-c", "user.name=Test Team", "-c", "user.email=team@example.com")
VERSION_LINE = re.compile(r'^__version__ = ".*"$', re.MULTILINE)


def git(folder: Path, *args: str) -> str:
    """`git args` in `folder`, as a team member with a name; its output."""
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=folder, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class SharedTemplate:
    """The team's bare repository, its URL, the maintainers' clone, and copier's cache for these tests."""

    bare: Path
    maintainers: Path
    copier_cache: Path

    @property
    def url(self) -> str:
        """What the team clones: `file://` and the folder, no `.git`."""
        return f"file://{self.bare}"

    def env(self) -> dict[str, str]:
        """A person's shell (`shell_env`), copier's cache of remote templates in the test's own folder."""
        return {**shell_env(), "COPIER_CACHE_DIR": str(self.copier_cache)}

    def release(
        self, version: str, change: Callable[[Path], None] | None = None, asks: str = "Nothing."
    ) -> str:
        """Cut `version` as docs/projects.md says, after `change` (if any), and push it; its commit.

        One commit sets `__version__` and names the CHANGELOG's section (the "Unreleased" one, or a new
        one whose "Upgrading" part says `asks`); a second lists that commit in `releases.toml`.
        """
        clone = self.maintainers
        if change is not None:
            change(clone)
        changelog = clone / "CHANGELOG.md"
        text = changelog.read_text()
        heading = f"## {version} (2027-01-10)"
        if "\n## Unreleased\n" in text:
            text = text.replace("\n## Unreleased\n", f"\n{heading}\n", 1)
        else:
            first = text.index("\n## ")
            text = f"{text[:first]}\n{heading}\n\n### Upgrading\n- {asks}\n{text[first:]}"
        changelog.write_text(text)
        layer = clone / "hitl" / "__init__.py"
        layer.write_text(VERSION_LINE.sub(f'__version__ = "{version}"', layer.read_text(), count=1))
        git(clone, "commit", "-qam", f"release {version}")
        commit = git(clone, "rev-parse", "HEAD").strip()
        listed = clone / "releases.toml"
        listed.write_text(f'{listed.read_text()}"{version}" = "{commit}"\n')
        git(clone, "commit", "-qam", f"releases: {version} is {commit}")
        git(clone, "push", "-q", "origin", "HEAD")
        return commit


def shared_template(folder: Path) -> SharedTemplate:
    """The team's bare repository of this checkout's HEAD under `folder`, with FIRST released."""
    bare = folder / "srv" / "git" / "template"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--shared", str(ROOT), str(bare)], check=True, timeout=120
    )
    maintainers = folder / "maintainers"
    subprocess.run(["git", "clone", "-q", "--shared", str(bare), str(maintainers)], check=True, timeout=120)
    shared = SharedTemplate(bare, maintainers, folder / "copier-cache")
    shared.release(FIRST)
    return shared


def hitl(folder: Path, *args: str, cli: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`hitl args` in `folder` with the given CLI, as a person's shell runs it."""
    return subprocess.run(
        [str(cli), *args], cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def committed_project(folder: Path, made: subprocess.CompletedProcess[str]) -> Path:
    """The project `hitl new project` made at `folder`, with its venv and web packages, committed."""
    assert made.returncode == 0, made.stderr
    project_venv(ROOT, folder)
    (folder / "web" / "node_modules").symlink_to(ROOT / "web" / "node_modules")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", f"From hitl-agent-server {FIRST}")
    return folder
