"""Where a team shares the template: any URL git clones, or a folder, spelled for git and for copier.

copier takes a template as git only where it recognises one (a URL ending in `.git` or starting
`git@`, `git://`, GitHub's or GitLab's, a folder at the top of a clone) and reads anything else as
a folder ("Local template must be a directory"); `git+` before a URL tells it the URL is git's, and
copier takes the `git+` off before it clones. So `file:///srv/git/template`, `ssh://git@host/team/
template`, a self-hosted `https://git.example.com/team/template` or a bare repository's folder go to
copier with `git+` before them, and a project records that spelling (`_src_path`, which copier reads
again when it updates); people are shown, and git is given, the URL as the team gave it.
Not for the releases the template lists (`releases`) nor for rendering (`making`, `upgrade`).
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hitl.cli.project.releases import RELEASES_FILE, Release, ReleaseError, parse_releases

COPIER_KNOWS = ("git@", "git://", "git+", "https://github.com/", "https://gitlab.com/")
"""The starts of a URL that copier reads as a git template by itself (and one ending in `.git`)."""
GIT_MARK = "git+"
"""What copier reads as "the rest is a git URL" (and removes before cloning)."""


@dataclass(frozen=True)
class Template:
    """Where a team shares the template, as the team gave it: a URL git clones, or a folder with a clone."""

    url: str

    @classmethod
    def recorded(cls, source: str) -> Template:
        """The template a project's `.copier-answers.yml` names (`_src_path`, in copier's spelling)."""
        return cls(source.removeprefix(GIT_MARK))

    @property
    def for_copier(self) -> str:
        """The URL as copier reads it as a git template: `git+` before it where copier would not know it."""
        if self.url.endswith(".git") or self.url.startswith(COPIER_KNOWS):
            return self.url
        local = Path(self.url).expanduser()
        if local.is_dir() and _clone_top(local):
            return self.url
        return f"{GIT_MARK}{self.url}"

    def read(self, *paths: str) -> dict[str, str]:
        """The text of `paths` on the template's default branch (a path it lacks reads as '').

        Raises:
            ReleaseError: the template cannot be reached or is no git repository (one line, naming it).
        """
        local = Path(self.url).expanduser()
        if local.is_dir():
            return {path: self._show(local, path) for path in paths}
        with tempfile.TemporaryDirectory(prefix="hitl-template-") as scratch:
            done = git("clone", "--quiet", "--depth=1", "--no-checkout", "--", self.url, scratch, timeout=600)
            if done.returncode != 0:
                msg = f"cannot reach the template at {self.url}: {first_line(done.stderr)}"
                raise ReleaseError(msg)
            return {path: self._show(Path(scratch), path) for path in paths}

    def releases(self) -> list[Release]:
        """The releases the template lists on its default branch, oldest first."""
        return parse_releases(self.read(RELEASES_FILE)[RELEASES_FILE])

    def _show(self, repository: Path, path: str) -> str:
        done = git("-C", str(repository), "show", f"HEAD:{path}")
        if done.returncode == 0:
            return done.stdout
        if "exists on disk, but not in" in done.stderr or "does not exist in" in done.stderr:
            return ""
        msg = f"{self.url} is no git repository of the template: {first_line(done.stderr)}"
        raise ReleaseError(msg)


def _clone_top(folder: Path) -> bool:
    """Whether `folder` is the top of a clone with files (copier's own test of a local git template)."""
    done = git("-C", str(folder), "rev-parse", "--show-toplevel")
    return done.returncode == 0 and Path(done.stdout.strip()).resolve() == folder.resolve()


def first_line(said: str) -> str:
    """The first line of git's complaint, without its `fatal: ` (the rest repeats it or gives advice)."""
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    return lines[0].removeprefix("fatal: ") if lines else "git said nothing"


def remote_of(checkout: Path) -> str | None:
    """The URL `checkout` was cloned from (its `origin`), if it has one."""
    done = git("-C", str(checkout), "remote", "get-url", "origin")
    return done.stdout.strip() or None if done.returncode == 0 else None


def git(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`git args...`, its output as text (git from the PATH, as copier runs it)."""
    return subprocess.run(  # noqa: S603  (git, with arguments this package builds)
        ["git", *args],  # noqa: S607  (the PATH's git, as copier's own)
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
