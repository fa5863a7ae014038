"""A team's project through two releases: its group-decided agent, its make target, its people, upgraded.

The team clones the template from its `file://` URL (`tests.server.shared_template`) and makes its
project with that clone's `hitl new project` (the template: the clone's `origin`), at FIRST. Then
it adds what a team adds: an `expenses` agent whose updates finance decides, its server test
answered by ana (in finance), its people below `.env.example`'s last line, a target in
`project.mk`, a setting of its own. The maintainers cut NEXT (changes to `langgraph.json`,
`.env.example`, the Makefile's `clean` and a docs page) and LATER (a Makefile line the team changed
too): the project's own `hitl upgrade` takes NEXT without a conflict and keeps all of the team's;
LATER leaves one, and the release's notes are printed before the file is named.
"""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.devserver import dev_users
from tests.newcomer import project_venv, shell_env
from tests.server.shared_template import (
    FIRST,
    LATER,
    NEXT,
    ROOT,
    SharedTemplate,
    committed_project,
    git,
    hitl,
    shared_template,
)

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.server, pytest.mark.long]

TEAM_TARGET = "expenses-report: ## Count what our expenses agent sent\n\t@echo our expenses report\n"
TEAM_USERS = f"HITL_USERS={dev_users()},ana:reviewer+finance:dev-ana"
"""The team's people: the layer's dev users, and ana, in finance, who decides the expenses agent's calls."""
NEXT_ASKS = "Set HITL_LATER=1 in your `.env`."
LATER_ASKS = "LATER is 2 now: keep your own value if you set one."


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> SharedTemplate:
    """The team's template: a bare repository at `file://.../srv/git/template`, HEAD released as FIRST."""
    return shared_template(tmp_path_factory.mktemp("shared"))


def cli(folder: Path) -> Path:
    return folder / ".venv" / "bin" / "hitl"


def edited(path: Path, old: str, new: str) -> None:
    """`path` with `old` (which it must hold) replaced by `new`."""
    text = path.read_text()
    assert old in text, f"{path.name} has no {old!r}"
    path.write_text(text.replace(old, new, 1))


@pytest.fixture(scope="module")
def team(template, tmp_path_factory) -> Path:
    """`hitl new project books` from a team member's clone (its origin: the URL), then the team's own work."""
    home = tmp_path_factory.mktemp("team")
    clone = home / "hitl-agent-server"
    subprocess.run(["git", "clone", "-q", template.url, str(clone)], check=True, timeout=300)
    project_venv(ROOT, clone)
    folder = home / "books"
    made = hitl(home, "new", "project", str(folder), "--release", FIRST, cli=cli(clone), env=template.env())
    assert f"from release {FIRST} of {template.url}" in made.stdout, made.stderr
    committed_project(folder, made)
    added = hitl(folder, "new", "agent", "expenses", cli=cli(folder), env=template.env())
    assert added.returncode == 0, added.stderr
    edited(
        folder / "agents" / "expenses.py",
        '{"send_update": {"allowed_decisions": ["approve", "edit", "reject"]}}',
        '{"send_update": {"allowed_decisions": ["approve", "edit", "reject"], "decider": "finance"}}',
    )
    edited(
        folder / "tests" / "server" / "test_expenses_server.py", 'client_as("reviewer1")', 'client_as("ana")'
    )
    settings = folder / ".env.example"
    settings.write_text(
        f"{settings.read_text()}\n# Our own: the largest expense paid without a person.\nEXPENSES_LIMIT=50\n"
        f"# Our people: the layer's dev users, and ana in finance, who decides our expenses.\n{TEAM_USERS}\n"
    )
    targets = folder / "project.mk"
    targets.write_text(f"{targets.read_text()}\n{TEAM_TARGET}")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "expenses: our agent, decided by finance")
    return folder


def run_tests(folder: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    """The project's own pytest on `paths`, in a person's shell."""
    return subprocess.run(
        [str(folder / ".venv" / "bin" / "pytest"), "-q", "-p", "no:cacheprovider", *paths],
        cwd=folder,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_a_project_made_from_a_clones_origin_records_the_teams_url(team, template):
    """no --template: the clone's origin (`file://`, no `.git`), recorded as copier reads it, shown as is."""
    answers = (team / ".copier-answers.yml").read_text()
    assert f"_src_path: git+{template.url}\n" in answers
    assert f"({template.url})" in (team / "README.md").read_text()


def test_the_teams_group_decided_agent_passes_its_server_tests(team):
    """finance decides the expenses agent's sends: ana (the team's HITL_USERS line) approves on a server."""
    done = run_tests(team, "tests/server/test_expenses_server.py")
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
    assert "1 passed" in done.stdout


def test_make_help_lists_the_teams_own_target_from_project_mk(team):
    """project.mk's target: listed by `make help`, and run by make."""
    listed = subprocess.run(
        ["make", "help"], cwd=team, capture_output=True, text=True, timeout=60, check=True
    )
    assert "make expenses-report Count what our expenses agent sent" in listed.stdout
    ran = subprocess.run(
        ["make", "expenses-report"], cwd=team, capture_output=True, text=True, timeout=60, check=True
    )
    assert ran.stdout.strip() == "our expenses report"


def layer_changes(template: Path) -> None:
    """NEXT's changes to what a project shares with the layer: config, settings, make, a docs page."""
    edited(
        template / "langgraph.json",
        '"disable_meta": true,',
        '"disable_meta": true,\n    "cors": {"allow_origins": ["http://127.0.0.1:5173"]},',
    )
    edited(
        template / ".env.example", "PORT=2024\n", "PORT=2024\n# A setting of a later release.\nHITL_LATER=1\n"
    )
    edited(template / "Makefile", "PORT ?= 2024\n", "PORT ?= 2024\nLATER ?= 1\n")
    edited(
        template / "Makefile", " .langgraph_api $(WEB)/dist\n", " .langgraph_api $(WEB)/dist test-artifacts\n"
    )
    edited(
        template / "docs" / "projects.md",
        "## Making a project\n",
        "## Making a project\n\nRelease NEXT's page.\n",
    )


def test_an_upgrade_keeps_the_teams_work_and_merges_the_layers_changes_without_conflict(team, template):
    """`hitl upgrade NEXT` (the project's own CLI): exit 0, NEXT's notes, its changes in, the team's kept."""
    ours = {name: (team / name).read_bytes() for name in ("project.mk", "agents/expenses.py")}
    commit = template.release(NEXT, layer_changes, asks=NEXT_ASKS)
    done = hitl(team, "upgrade", NEXT, cli=cli(team), env=template.env())
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert f"upgraded from release {FIRST} to {NEXT}" in done.stdout
    assert f"What {NEXT} asks of a project (CHANGELOG.md):\n- {NEXT_ASKS}" in done.stdout
    assert git(team, "diff", "--name-only", "--diff-filter=U") == ""
    config = json.loads((team / "langgraph.json").read_text())
    assert config["graphs"] == {"assistant": "agents.assistant:graph", "expenses": "agents.expenses:graph"}
    assert config["http"]["cors"] == {"allow_origins": ["http://127.0.0.1:5173"]}
    settings = (team / ".env.example").read_text()
    assert "HITL_LATER=1\n" in settings
    assert "EXPENSES_LIMIT=50\n" in settings
    assert f"{TEAM_USERS}\n" in settings
    makefile = (team / "Makefile").read_text()
    assert "LATER ?= 1\n" in makefile
    assert " .langgraph_api $(WEB)/dist test-artifacts\n" in makefile
    assert {name: (team / name).read_bytes() for name in ours} == ours
    assert "Release NEXT's page." in (team / "docs" / "projects.md").read_text()
    answers = (team / ".copier-answers.yml").read_text()
    assert f"release: {NEXT}\n" in answers
    assert f"_commit: {commit[:7]}" in answers
    assert f"_src_path: git+{template.url}\n" in answers
    git(team, "add", "-A")
    git(team, "commit", "-qm", f"hitl-agent-server {NEXT}")


def test_the_teams_tests_pass_on_the_upgraded_project(team):
    """after NEXT: the layer's graph tests, the team's agent in-process and through its server, all pass."""
    if "LATER ?= 1" not in (team / "Makefile").read_text():
        pytest.skip(reason="runs on the project the upgrade test before took to NEXT: run the module whole")
    done = run_tests(team, "tests/graphs", "tests/server/test_expenses_server.py")
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-2000:]}"


def test_an_upgrade_that_leaves_a_conflict_prints_what_the_release_asks_then_names_the_files(team, template):
    """the team and LATER change one Makefile line: LATER's notes first, then exit 1 naming the Makefile."""
    if "LATER ?= 1" not in (team / "Makefile").read_text():
        pytest.skip(reason="runs on the project the upgrade test before took to NEXT: run the module whole")
    edited(team / "Makefile", "LATER ?= 1\n", "LATER ?= ours\n")
    git(team, "commit", "-qam", "our LATER")
    template.release(
        LATER, lambda clone: edited(clone / "Makefile", "LATER ?= 1\n", "LATER ?= 2\n"), LATER_ASKS
    )
    done = subprocess.run(
        [str(cli(team)), "upgrade"],
        cwd=team,
        env=template.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stdout
    notes = done.stdout.index(f"What {LATER} asks of a project (CHANGELOG.md):\n- {LATER_ASKS}")
    conflict = done.stdout.index(f"error: the upgrade to {LATER} left conflicts in: Makefile.")
    assert notes < conflict, done.stdout
    assert "<<<<<<< before updating" in (team / "Makefile").read_text()
