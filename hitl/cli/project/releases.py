"""The template's releases: each version of the approval layer and the commit it is, read from the template.

`releases.toml` on the template's default branch lists them (git tags are not in every clone of
it, a file is), and `CHANGELOG.md` says what each changed and what a project must do.
Both are read from where the team shares the template (`sources.Template`), never from a
project's own copy. Not for rendering or updating files: that is copier's (`making`, `upgrade`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

RELEASES_FILE = "releases.toml"
VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
"""A release's version: MAJOR.MINOR.PATCH (semver, no pre-release)."""
COMMIT = re.compile(r"^[0-9a-f]{40}$")
HEADING = re.compile(r"^## (?P<version>\d+\.\d+\.\d+)\b.*$", re.MULTILINE)
MUST_DO = "### Upgrading"
"""The heading of a release's CHANGELOG section that says what a project must do when it takes it."""


class ReleaseError(ValueError):
    """The template or a release cannot be read; the message says what to do."""


Version = tuple[int, int, int]


def version_of(text: str) -> Version:
    """`"1.2.0"` -> `(1, 2, 0)`.

    Raises:
        ReleaseError: `text` is no MAJOR.MINOR.PATCH version.
    """
    found = VERSION.match(text.removeprefix("v"))
    if found is None:
        msg = f"{text!r} is no release version (MAJOR.MINOR.PATCH, e.g. 1.2.0)"
        raise ReleaseError(msg)
    major, minor, patch = (int(part) for part in found.groups())
    return (major, minor, patch)


@dataclass(frozen=True, order=True)
class Release:
    """A version of the approval layer and the commit of the template it is."""

    version: Version
    commit: str

    def __str__(self) -> str:
        """The version as the CHANGELOG writes it."""
        return ".".join(str(part) for part in self.version)


def parse_releases(text: str) -> list[Release]:
    """The releases `releases.toml` lists, oldest first.

    Raises:
        ReleaseError: the file is no TOML, a version no version, a commit no full commit hash.
    """
    try:
        listed = tomllib.loads(text).get("releases", {})
    except tomllib.TOMLDecodeError as error:
        msg = f"{RELEASES_FILE} is no valid TOML ({error})"
        raise ReleaseError(msg) from None
    releases = []
    for version, commit in listed.items():
        try:
            parsed = version_of(version)
        except ReleaseError as error:
            msg = f"{RELEASES_FILE}: {error}"
            raise ReleaseError(msg) from None
        if not isinstance(commit, str) or not COMMIT.match(commit):
            msg = f"{RELEASES_FILE}: release {version} names no full commit hash (40 hex digits)"
            raise ReleaseError(msg)
        releases.append(Release(parsed, commit))
    return sorted(releases)


def chosen(releases: list[Release], version: str | None) -> Release:
    """The release `version` names, or the newest when None.

    Raises:
        ReleaseError: there is none, or no such release (the message lists those there are).
    """
    if not releases:
        msg = f"the template lists no release yet ({RELEASES_FILE} on its default branch)"
        raise ReleaseError(msg)
    if version is None:
        return releases[-1]
    wanted = version_of(version)
    for release in releases:
        if release.version == wanted:
            return release
    msg = f"no release {version}: the template has {', '.join(str(r) for r in releases)}"
    raise ReleaseError(msg)


def must_do(changelog: str, after: Version | None, up_to: Version) -> list[tuple[str, str]]:
    """Each release's "Upgrading" section after `after` up to `up_to`, oldest first: (version, text)."""
    sections = []
    found = list(HEADING.finditer(changelog))
    for number, heading in enumerate(found):
        version = version_of(heading["version"])
        if (after is not None and version <= after) or version > up_to:
            continue
        end = found[number + 1].start() if number + 1 < len(found) else len(changelog)
        body = changelog[heading.end() : end]
        if MUST_DO in body:
            part = body.split(MUST_DO, 1)[1].split("\n### ", 1)[0]
            sections.append((version, part.split("\n", 1)[-1].strip()))
    return [(".".join(map(str, v)), text) for v, text in sorted(sections)]
