"""`hitl upgrade [VERSION]`: take a later release of the template into this project, or say why not.

The project's `.copier-answers.yml` says where the template is shared and which commit it came
from; the template's `releases.toml` says which commit a release is. copier replays the layer's
changes since then on top of the project's own; where it leaves a conflict, this command says so,
names the files and exits 1 (copier alone exits 0 and leaves them for `git status` to find).
Either way it prints what the CHANGELOG says a project must do first, since resolving a conflict
is when a team needs it most. Not for making a project (`making`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from hitl.cli.project.making import ProjectError
from hitl.cli.project.releases import (
    RELEASES_FILE,
    Release,
    ReleaseError,
    chosen,
    must_do,
    parse_releases,
    version_of,
)
from hitl.cli.project.sources import Template, git

ANSWERS = ".copier-answers.yml"
CONFLICT_MARKERS = (b"<<<<<<< before updating", b">>>>>>> after updating")
"""The lines copier's three-way merge leaves around a conflict."""


class UpgradeConflictError(ProjectError):
    """copier left conflicts; `files` are where, relative to the project; `must_do`, what the releases ask."""

    def __init__(self, release: Release, files: list[str], must_do: list[tuple[str, str]]) -> None:
        """The conflict of the upgrade to `release`, in `files`; each crossed release's "Upgrading" part."""
        self.files = files
        self.must_do = must_do
        super().__init__(
            f"the upgrade to {release} left conflicts in: {', '.join(files)}. Resolve each (between "
            "`<<<<<<< before updating` and `>>>>>>> after updating`), then `git add` them, `make test` and "
            "commit; or undo the upgrade with `git reset --hard && git clean -fd`."
        )


@dataclass(frozen=True)
class Upgraded:
    """What `upgrade` did: the release the project was at, the one it is at now, and what to do."""

    before: str
    after: Release
    changed: bool
    must_do: list[tuple[str, str]]


def upgrade(root: Path, version: str | None = None) -> Upgraded:
    """Move the project at `root` to the template's release `version` (the newest when None).

    Raises:
        ProjectError: the project has no template recorded, has uncommitted work, the release
            is unknown or older than the project's, or copier failed.
        UpgradeConflictError: copier left conflicts (the files are named).
    """
    import copier  # noqa: PLC0415  (a dev dependency, needed for this command only)
    from copier.errors import CopierError  # noqa: PLC0415

    answers = _answers(root)
    recorded, current = str(answers.get("_src_path") or ""), str(answers.get("release") or "")
    if not recorded:
        msg = f"{ANSWERS} names no template (`_src_path`): was this project made with `hitl new project`?"
        raise ProjectError(msg)
    shared = Template.recorded(recorded)
    if shared.for_copier != recorded:
        msg = (
            f"{ANSWERS} names the template as {recorded}, which copier does not read as git: write "
            f"`_src_path: {shared.for_copier}` there, commit, and run `hitl upgrade` again"
        )
        raise ProjectError(msg)
    try:
        files = shared.read(RELEASES_FILE, "CHANGELOG.md")
        target = chosen(parse_releases(files[RELEASES_FILE]), version)
        at = version_of(current) if current else None
    except ReleaseError as error:
        raise ProjectError(str(error)) from None
    if at is not None and at > target.version:
        msg = f"this project is at {current}, later than {target}: upgrades do not go back"
        raise ProjectError(msg)
    if target.commit.startswith(str(answers.get("_commit") or "-")):
        return Upgraded(current, target, changed=False, must_do=[])
    if _git(root, "status", "--porcelain"):
        msg = "this project has uncommitted changes: commit or stash them first, so an upgrade can be undone"
        raise ProjectError(msg)
    try:
        copier.run_update(
            root,
            data={"release": str(target)},
            vcs_ref=target.commit,
            defaults=True,
            overwrite=True,
            quiet=True,
            conflict="inline",
            skip_answered=True,
        )
    except CopierError as error:
        msg = f"copier could not update the project: {error}"
        raise ProjectError(msg) from None
    asked = must_do(files["CHANGELOG.md"], at, target.version)
    if conflicts := _conflicts(root):
        raise UpgradeConflictError(target, conflicts, asked)
    return Upgraded(current, target, changed=True, must_do=asked)


def _answers(root: Path) -> dict[str, Any]:
    import yaml  # noqa: PLC0415  (copier's own dependency)

    path = root / ANSWERS
    if not path.is_file():
        msg = f"{root.resolve()} has no {ANSWERS}: run `hitl upgrade` in a project `hitl new project` made"
        raise ProjectError(msg)
    answers = yaml.safe_load(path.read_text()) or {}
    if not isinstance(answers, dict):
        msg = f"{ANSWERS} is no mapping of answers"
        raise ProjectError(msg)
    return answers


def _conflicts(root: Path) -> list[str]:
    """Files copier left unmerged, with conflict markers, or with a `.rej` beside them."""
    found = set(_git(root, "diff", "--name-only", "--diff-filter=U").split())
    for line in _git(root, "status", "--porcelain", "--untracked-files=all").splitlines():
        name = line[3:].split(" -> ")[-1].strip('"')
        if name.endswith(".rej"):
            found.add(name.removesuffix(".rej"))
        elif (root / name).is_file():
            with (root / name).open("rb") as text:
                if any(line.rstrip() in CONFLICT_MARKERS for line in text):
                    found.add(name)
    return sorted(found)


def _git(root: Path, *args: str) -> str:
    done = git("-C", str(root), *args)
    if done.returncode != 0:
        msg = f"git {' '.join(args)} failed in {root}: {done.stderr.strip()} (is it a git repository?)"
        raise ProjectError(msg)
    return done.stdout


def upgrade_command(
    version: Annotated[
        str | None, typer.Argument(help="The release to take, e.g. 1.2.0 (default: the newest).")
    ] = None,
    root: Annotated[Path, typer.Option(help="The project's folder (where .copier-answers.yml is).")] = Path(),
) -> None:
    """Take a later release of the template into this project; exit 1 naming any conflict."""
    try:
        done = upgrade(root, version)
    except UpgradeConflictError as conflict:
        _say_what_releases_ask(conflict.must_do)
        typer.echo(f"\nerror: {conflict}", err=True)
        raise typer.Exit(1) from None
    except ProjectError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    if not done.changed:
        typer.echo(f"already at release {done.after}")
        return
    typer.echo(f"upgraded from release {done.before or '?'} to {done.after}; now run `make test` and commit.")
    _say_what_releases_ask(done.must_do)


def _say_what_releases_ask(asked: list[tuple[str, str]]) -> None:
    """Each crossed release's "Upgrading" part of CHANGELOG.md, oldest first."""
    for release, steps in asked:
        typer.echo(f"\nWhat {release} asks of a project (CHANGELOG.md):\n{steps}")
