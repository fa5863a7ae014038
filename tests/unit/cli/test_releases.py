"""Releases: releases.toml read and checked, a version chosen, and what the CHANGELOG asks of a project."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from hitl.cli.project.releases import RELEASES_FILE, ReleaseError, chosen, must_do, parse_releases, version_of

ROOT = Path(__file__).resolve().parents[3]
A, B = "a" * 40, "b" * 40
CHANGELOG = """# Changelog

## Unreleased

### Upgrading
- not yet

## 1.2.0 (2027-01-10)

### Added
- a thing

### Upgrading
- run `make schemas`

## 1.1.0 (2026-12-20)

### Upgrading
- nothing

## 1.0.0 (2026-12-02)
"""


def test_releases_are_read_oldest_first_and_the_newest_is_the_default():
    """parse_releases sorts by version (1.10 after 1.9); chosen(None) is the newest, a 'v' prefix is fine."""
    releases = parse_releases(f'[releases]\n"1.10.0" = "{A}"\n"1.9.0" = "{B}"\n')
    assert [str(r) for r in releases] == ["1.9.0", "1.10.0"]
    assert chosen(releases, None).commit == A
    assert chosen(releases, "v1.9.0").commit == B


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[releases]\n"1.0" = "' + A + '"\n', "no release version"),
        ('[releases]\n"1.0.0" = "abc123"\n', "no full commit hash"),
        ("[releases\n", "no valid TOML"),
    ],
)
def test_a_malformed_list_is_refused_in_words(text, problem):
    """a short version, a short hash, broken TOML: a ReleaseError naming the problem."""
    with pytest.raises(ReleaseError, match=problem):
        parse_releases(text)


def test_an_unknown_release_names_those_there_are():
    """chosen('2.0.0'): refused with the list; none listed: refused saying so."""
    with pytest.raises(ReleaseError, match=r"no release 2\.0\.0: the template has 1\.0\.0"):
        chosen(parse_releases(f'[releases]\n"1.0.0" = "{A}"\n'), "2.0.0")
    with pytest.raises(ReleaseError, match="lists no release yet"):
        chosen([], None)


def test_what_a_project_must_do_is_each_releases_upgrading_section_it_crosses():
    """from 1.0.0 to 1.2.0: 1.1.0's and 1.2.0's Upgrading sections, oldest first; Unreleased never."""
    assert must_do(CHANGELOG, version_of("1.0.0"), version_of("1.2.0")) == [
        ("1.1.0", "- nothing"),
        ("1.2.0", "- run `make schemas`"),
    ]
    assert must_do(CHANGELOG, version_of("1.1.0"), version_of("1.1.0")) == []


@pytest.mark.skipif(not (ROOT / RELEASES_FILE).exists(), reason="a project lists no releases of its own")
def test_each_listed_release_is_a_commit_at_that_version_with_its_changelog_section():
    """releases.toml: each commit is in this history, says that __version__ and has its CHANGELOG heading."""
    changelog = (ROOT / "CHANGELOG.md").read_text()
    for release in parse_releases((ROOT / RELEASES_FILE).read_text()):
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{release.commit}:hitl/__init__.py"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert shown.returncode == 0, f"{release}: {shown.stderr}"
        assert f'__version__ = "{release}"' in shown.stdout, release
        assert re.search(rf"^## {re.escape(str(release))} \(", changelog, re.MULTILINE), release
