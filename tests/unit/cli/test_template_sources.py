"""Where a team shares the template: every URL git clones goes to copier as git, and reads back as given.

The shapes copier does not know by itself (`file://`, `ssh://`, a self-hosted https URL without
`.git`, a bare repository's folder) get `git+` before them; the rest stay as they are. No network:
the URLs of other hosts are only spelled here, the `file://` ones are read from real repositories.
"""

from __future__ import annotations

import subprocess

import pytest

from hitl.cli.project.making import ProjectError
from hitl.cli.project.releases import ReleaseError
from hitl.cli.project.sources import Template
from hitl.cli.project.upgrade import upgrade

SPELLED = [
    ("file:///srv/git/template", "git+file:///srv/git/template"),
    ("ssh://git@host/team/template", "git+ssh://git@host/team/template"),
    ("https://git.example.com/team/template", "git+https://git.example.com/team/template"),
    ("http://127.0.0.1:8080/team/template", "git+http://127.0.0.1:8080/team/template"),
    ("deploy@host:team/template", "git+deploy@host:team/template"),
    ("https://git.example.com/team/template.git", "https://git.example.com/team/template.git"),
    ("git@host:team/template", "git@host:team/template"),
    ("git://host/team/template", "git://host/team/template"),
    ("https://github.com/acme/hitl-agent-server", "https://github.com/acme/hitl-agent-server"),
    ("git+https://git.example.com/team/template", "git+https://git.example.com/team/template"),
]


def git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True, timeout=60)


@pytest.mark.parametrize(("given", "for_copier"), SPELLED)
def test_a_url_goes_to_copier_as_git_and_reads_back_as_the_team_gave_it(given, for_copier):
    """copier's spelling: `git+` only where copier would not read the URL as git; recorded, it reads back."""
    assert Template(given).for_copier == for_copier
    assert Template.recorded(for_copier).url == given.removeprefix("git+")


@pytest.mark.parametrize(("given", "for_copier"), SPELLED)
def test_copier_reads_each_spelling_as_the_url_git_clones(given, for_copier):
    """copier's own reader (private: this test fails first when copier moves it) clones what the team gave."""
    from copier._vcs import get_repo  # noqa: PLC0415  (the one look at copier's private reader)

    read = get_repo(for_copier)
    assert read is not None, f"copier would read {for_copier} as a folder"
    assert read.removesuffix(".git") == given.removeprefix("git+").removesuffix(".git")


def test_a_clone_is_given_as_is_and_a_bare_repository_as_git(tmp_path):
    """a folder at a clone's top: as given (copier knows it); a bare repository's folder: `git+` before it."""
    clone, bare = tmp_path / "clone", tmp_path / "bare"
    git("init", "-q", str(clone))
    git("init", "-q", "--bare", str(bare))
    assert Template(str(clone)).for_copier == str(clone)
    assert Template(str(bare)).for_copier == f"git+{bare}"


def test_releases_are_read_from_a_bare_repository_by_its_file_url(tmp_path):
    """file:// of a bare repository without `.git`: releases.toml is read from its default branch."""
    work, bare = tmp_path / "work", tmp_path / "srv" / "git" / "template"
    git("init", "-q", "-b", "main", str(work))
    (work / "releases.toml").write_text(f'[releases]\n"1.0.0" = "{"a" * 40}"\n')
    git("-C", str(work), "add", "-A")
    git("-C", str(work), "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "1.0.0")
    git("clone", "-q", "--bare", str(work), str(bare))
    assert [str(r) for r in Template(f"file://{bare}").releases()] == ["1.0.0"]


@pytest.mark.parametrize("where", ["file:///nowhere/template", "nowhere/template"])
def test_a_template_git_cannot_reach_is_one_line_naming_it(where, tmp_path, monkeypatch):
    """a URL or folder that is no repository: one ReleaseError line naming it and what git said."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ReleaseError) as refused:
        Template(where).releases()
    said = str(refused.value)
    assert said.startswith(f"cannot reach the template at {where}: "), said
    assert "\n" not in said


def test_a_folder_that_is_no_repository_is_one_line_naming_it(tmp_path):
    """an existing folder without git: one line saying it is no git repository of the template."""
    with pytest.raises(ReleaseError) as refused:
        Template(str(tmp_path)).releases()
    said = str(refused.value)
    assert said.startswith(f"{tmp_path} is no git repository of the template: "), said
    assert "\n" not in said


def test_an_upgrade_from_a_url_recorded_as_copier_cannot_read_it_says_what_to_write(tmp_path):
    """`_src_path: file:///srv/git/template`, as a 1.0.0 project wrote it: refused, naming what to write."""
    (tmp_path / ".copier-answers.yml").write_text("_commit: abc1234\n_src_path: file:///srv/git/template\n")
    with pytest.raises(ProjectError, match=r"write `_src_path: git\+file:///srv/git/template` there, commit"):
        upgrade(tmp_path)
