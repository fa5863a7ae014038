"""A project of your own: made from a release without the demo, tested by its own `make test`, upgraded.

The template is shared the way a team shares it: a clone of this checkout's HEAD stands for the
team's remote, where HEAD is listed as a release in `releases.toml`, and each later release is a
commit there with its own line. Each project gets its own venv (its own code, the template's
installed dependencies: `tests.newcomer.project_venv`), so the approval layer runs there with
nothing of the demo to lean on, and its own `hitl upgrade` (the old release's code) upgrades it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.newcomer import PREBUILT, project_venv, shell_env

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = [pytest.mark.server, pytest.mark.long]

ROOT = Path(__file__).resolve().parents[2]
FIRST, NEXT, LATER = "99.0.0", "99.1.0", "99.2.0"
"""The template's releases in these tests: this checkout's HEAD, and two made on top of it."""
DEMO = (
    "agents/support.py",
    "agents/offline",
    "agents/settings.env.example",
    "tools/support.py",
    "tools/travel.py",
    "services/orders.py",
    "subagents/refund_specialist.py",
    "web/src/demo",
    "bench",
    "docs",
    "releases.toml",
    "tests/security",
    "tests/unit/demo",
    "tests/web",
    "tests/replicas",
)
GIT_IDENTITY = ("-c", "user.name=Test Team", "-c", "user.email=team@example.com")


def git(folder: Path, *args: str) -> str:
    """`git args` in `folder`, as a team member with a name; its output."""
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=folder, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def release(template: Path, version: str, change: Callable[[Path], None] | None = None) -> str:
    """Commit `change` to the template (if any), then list that commit as `version`; the commit."""
    if change is not None:
        change(template)
        git(template, "commit", "-qam", f"layer changes for {version}")
    commit = git(template, "rev-parse", "HEAD").strip()
    listed = template / "releases.toml"
    listed.write_text(f'{listed.read_text()}"{version}" = "{commit}"\n')
    git(template, "commit", "-qam", f"releases: {version} is {commit}")
    return commit


def hitl(folder: Path, *args: str, cli: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`hitl args` in `folder`, with the given CLI (default: this checkout's), as a person's shell runs it."""
    return subprocess.run(
        [str(cli or ROOT / ".venv" / "bin" / "hitl"), *args],
        cwd=folder,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """The team's copy of the template: a clone of HEAD, which it lists as release FIRST."""
    shared = tmp_path_factory.mktemp("shared") / "hitl-agent-server"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(shared)], check=True, timeout=120)
    release(shared, FIRST)
    return shared


def new_project(template: Path, folder: Path) -> Path:
    """`hitl new project` at release FIRST from `template`, with its venv and web packages, committed."""
    made = hitl(folder.parent, "new", "project", str(folder), "--template", str(template), "--release", FIRST)
    assert made.returncode == 0, made.stderr
    assert f"from release {FIRST} of {template}" in made.stdout
    project_venv(ROOT, folder)
    (folder / "web" / "node_modules").symlink_to(ROOT / "web" / "node_modules")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", f"From hitl-agent-server {FIRST}")
    return folder


@pytest.fixture(scope="module")
def project(template, tmp_path_factory) -> Path:
    """`hitl new project acme --template <the team's copy> --release FIRST`, committed."""
    return new_project(template, tmp_path_factory.mktemp("new-project") / "acme")


def test_the_project_has_the_layer_and_one_agent_and_nothing_of_the_demo(project, template):
    """layer, web app, make targets, deploy files and the layer's tests are there; the demo is not."""
    for kept in (
        "hitl/gate/gate.py",
        "server/http/app.py",
        "web/src/App.tsx",
        "Makefile",
        "deploy",
        "tests/unit/admission/test_run_admission.py",
        "tests/graphs/layer",
    ):
        assert (project / kept).exists(), kept
    assert [part for part in DEMO if (project / part).exists()] == []
    assert json.loads((project / "langgraph.json").read_text())["graphs"] == {
        "assistant": "agents.assistant:graph"
    }
    assert 'name = "acme"' in (project / "pyproject.toml").read_text()
    assert "hitl upgrade" in (project / "README.md").read_text()


DEMO_NAMES = re.compile(
    r"\b(support|travel|ops|issue_refund|send_email|ask_user|book_flight|cancel_booking|flight-booking|"
    r"refund_specialist|booking_agent|file_manager|deployer|get_order|execute_sql|delete_file|request_approval)\b"
)
HELP = (
    "from typer.testing import CliRunner; from hitl.cli.main import app; "
    "names = [c.name or c.callback.__name__ for c in app.registered_commands]; "
    "print('\\n'.join(CliRunner().invoke(app, [*cmd, '--help'], env={'COLUMNS': '200'}).output "
    "for cmd in [[], ['new', 'agent'], ['new', 'project'], *[[n] for n in names]]))"
)


def test_texts_a_person_reads_in_the_project_name_nothing_of_the_demo(project):
    """README, .env.example, the Makefile, web/README.md, every `hitl ... --help`: no demo agent or tool."""
    read = ("README.md", ".env.example", "Makefile", "web/README.md")
    texts = {name: (project / name).read_text() for name in read}
    helped = subprocess.run(
        [str(project / ".venv" / "bin" / "python"), "-c", HELP],
        cwd=project,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    texts["hitl --help"] = helped.stdout
    assert "Take a later release of the template" in helped.stdout  # hitl upgrade --help was read
    assert {name: DEMO_NAMES.findall(text) for name, text in texts.items() if DEMO_NAMES.search(text)} == {}


def test_the_generator_changes_only_the_graph_lines_of_the_layers_files(project, template):
    """`.env.example`, the Makefile: the release's, byte for byte; langgraph.json differs in graphs only."""
    for same in (".env.example", "Makefile"):
        assert (project / same).read_bytes() == (template / same).read_bytes(), same
    ours = (project / "langgraph.json").read_text().splitlines()
    theirs = (template / "langgraph.json").read_text().splitlines()
    assert [line for line in ours if line not in theirs] == ['    "assistant": "agents.assistant:graph"']
    assert [line for line in theirs if line not in ours] == [
        '    "support": "agents.support:graph",',
        '    "travel": "agents.travel:graph",',
        '    "ops": "agents.ops:graph"',
    ]


def test_the_project_records_its_release_and_the_shared_template(project, template):
    """.copier-answers.yml names the team's template (not this checkout), the release and its commit."""
    answers = (project / ".copier-answers.yml").read_text()
    first = git(template, "rev-parse", "HEAD~1").strip()
    assert f"_src_path: {template}\n" in answers
    assert f"release: {FIRST}\n" in answers
    assert f"_commit: {first[:7]}" in answers


def test_make_help_lists_only_the_projects_targets(project):
    """`make help`: dev, test, lint and the rest; nothing for parts the project lacks (bench, chaos)."""
    listed = subprocess.run(
        ["make", "help"], cwd=project, capture_output=True, text=True, timeout=60, check=True
    )
    targets = {line.split()[1] for line in listed.stdout.splitlines() if line.strip().startswith("make ")}
    assert {"dev", "test", "lint", "setup", "serve-replicas"} <= targets
    assert targets.isdisjoint({"bench", "chaos"})


def test_make_test_passes_without_replicas_postgresql_redis_or_a_browser(project):
    """the project's `make test`: Vitest, the layer's tests, its agent's; no replicas, services, Chromium."""
    prebuilt = [*PREBUILT, "-o", "web/node_modules/.installed"]
    planned = subprocess.run(
        ["make", "-n", *prebuilt, "test"], cwd=project, capture_output=True, text=True, timeout=60, check=True
    )
    for unused in (".venv-replicas", "pg_isready", "redis", "chromium", "npm run build"):
        assert unused not in planned.stdout, unused
    done = subprocess.run(
        ["make", *prebuilt, "test"],
        cwd=project,
        env={**shell_env(), "TEST_WORKERS": "2"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-3000:]}"
    assert "passed" in done.stdout
    assert not (project / ".venv-replicas").exists()


def layer_changes(template: Path) -> None:
    """A release's changes to the three files a project shares with the layer: config, settings, make."""
    config = template / "langgraph.json"
    config.write_text(
        config.read_text().replace(
            '"disable_meta": true,',
            '"disable_meta": true,\n    "cors": {"allow_origins": ["http://127.0.0.1:5173"]},',
        )
    )
    settings = template / ".env.example"
    settings.write_text(
        settings.read_text().replace(
            "PORT=2024\n", "PORT=2024\n# A setting of a later release.\nHITL_LATER=1\n"
        )
    )
    makefile = template / "Makefile"
    makefile.write_text(makefile.read_text().replace("PORT ?= 2024\n", "PORT ?= 2024\nLATER ?= 1\n"))


@pytest.fixture(scope="module")
def team(template, tmp_path_factory) -> Path:
    """A project at FIRST with the team's own agent (`hitl new agent expenses`) and a setting of its own."""
    folder = new_project(template, tmp_path_factory.mktemp("team") / "books")
    made = hitl(folder, "new", "agent", "expenses", cli=folder / ".venv" / "bin" / "hitl")
    assert made.returncode == 0, made.stderr
    settings = folder / ".env.example"
    settings.write_text(
        f"{settings.read_text()}\n# Our own: the largest expense paid without a person.\nEXPENSES_LIMIT=50\n"
    )
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "expenses: our agent")
    return folder


def test_an_upgrade_keeps_the_teams_agent_and_merges_the_layers_changes_without_conflict(team, template):
    """`hitl upgrade NEXT` (the project's own CLI): exit 0, the release's changes in, the team's kept."""
    commit = release(template, NEXT, layer_changes)
    done = hitl(team, "upgrade", NEXT, cli=team / ".venv" / "bin" / "hitl")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert f"upgraded from release {FIRST} to {NEXT}" in done.stdout
    assert git(team, "diff", "--name-only", "--diff-filter=U") == ""
    config = json.loads((team / "langgraph.json").read_text())
    assert config["graphs"] == {"assistant": "agents.assistant:graph", "expenses": "agents.expenses:graph"}
    assert config["http"]["cors"] == {"allow_origins": ["http://127.0.0.1:5173"]}
    settings = (team / ".env.example").read_text()
    assert "HITL_LATER=1\n" in settings
    assert "EXPENSES_LIMIT=50\n" in settings
    assert "LATER ?= 1\n" in (team / "Makefile").read_text()
    answers = (team / ".copier-answers.yml").read_text()
    assert f"release: {NEXT}\n" in answers
    assert f"_commit: {commit[:7]}" in answers
    tests = subprocess.run(
        [str(team / ".venv" / "bin" / "pytest"), "-q", "-p", "no:cacheprovider", "tests/graphs"],
        cwd=team,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout[-3000:]
    git(team, "add", "-A")
    git(team, "commit", "-qm", f"hitl-agent-server {NEXT}")


def test_an_upgrade_that_leaves_a_conflict_fails_and_names_the_files(team, template):
    """the team and the release change the same Makefile line: `hitl upgrade` exits 1 naming the Makefile."""
    if "LATER ?= 1" not in (team / "Makefile").read_text():
        pytest.skip(reason="runs on the project the upgrade test before took to NEXT: run the module whole")
    makefile = team / "Makefile"
    makefile.write_text(makefile.read_text().replace("LATER ?= 1\n", "LATER ?= ours\n"))
    git(team, "commit", "-qam", "our LATER")

    def theirs(folder: Path) -> None:
        (folder / "Makefile").write_text(
            (folder / "Makefile").read_text().replace("LATER ?= 1\n", "LATER ?= 2\n")
        )

    release(template, LATER, theirs)
    done = hitl(team, "upgrade", cli=team / ".venv" / "bin" / "hitl")
    assert done.returncode == 1, f"{done.stdout}\n{done.stderr}"
    assert f"the upgrade to {LATER} left conflicts in: Makefile." in done.stderr
    assert "<<<<<<< before updating" in (team / "Makefile").read_text()
