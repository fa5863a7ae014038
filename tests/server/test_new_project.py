"""A project of your own: made from a release without the demo, from the URL a team shares, tested.

The template is shared the way a team shares it (`tests.server.shared_template`): a bare
repository reached by a `file://` URL without `.git`, this checkout's HEAD listed there as a
release. The project is made with this checkout's `hitl new project --template <that URL>`; it
records the URL, carries its release's docs and a `project.mk` of its own, and its own `make test`
passes with nothing of the demo to lean on. Its upgrades are `test_project_upgrade`'s.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.newcomer import PREBUILT, shell_env
from tests.server.shared_template import (
    FIRST,
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

CLI = ROOT / ".venv" / "bin" / "hitl"
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
    "docs/benchmarks.md",
    "releases.toml",
    "tests/security",
    "tests/unit/demo",
    "tests/web",
    "tests/replicas",
)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> SharedTemplate:
    """The team's template: a bare repository at `file://.../srv/git/template`, HEAD released as FIRST."""
    return shared_template(tmp_path_factory.mktemp("shared"))


@pytest.fixture(scope="module")
def project(template, tmp_path_factory) -> Path:
    """`hitl new project acme --template file://.../template --release FIRST`, committed."""
    folder = tmp_path_factory.mktemp("new-project") / "acme"
    made = hitl(
        folder.parent,
        "new",
        "project",
        str(folder),
        "--template",
        template.url,
        "--release",
        FIRST,
        cli=CLI,
        env=template.env(),
    )
    assert f"from release {FIRST} of {template.url}" in made.stdout, made.stderr
    return committed_project(folder, made)


def test_the_project_has_the_layer_and_one_agent_and_nothing_of_the_demo(project):
    """layer, web app, make targets, deploy files, the layer's tests are there; the demo is not."""
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


def test_the_project_carries_its_releases_docs_and_a_project_mk_the_makefile_includes(project, template):
    """docs/: the release's pages byte for byte, as the README says; project.mk: the team's, make reads it."""
    released = template.maintainers
    for page in ("agents.md", "reviewing.md", "operating.md", "security.md", "projects.md"):
        assert (project / "docs" / page).read_bytes() == (released / "docs" / page).read_bytes(), page
    readme = (project / "README.md").read_text()
    assert f"`docs/` is release {FIRST}'s documentation of the layer" in readme
    assert "make schemas" in readme
    assert "project.mk" in readme
    assert "-include project.mk\n" in (project / "Makefile").read_text()
    assert (project / "project.mk").read_text().startswith("# acme's own make targets")


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
    released = template.maintainers
    for same in (".env.example", "Makefile"):
        assert (project / same).read_bytes() == (released / same).read_bytes(), same
    ours = (project / "langgraph.json").read_text().splitlines()
    theirs = (released / "langgraph.json").read_text().splitlines()
    assert [line for line in ours if line not in theirs] == ['    "assistant": "agents.assistant:graph"']
    assert [line for line in theirs if line not in ours] == [
        '    "support": "agents.support:graph",',
        '    "travel": "agents.travel:graph",',
        '    "ops": "agents.ops:graph"',
    ]


def test_the_project_records_its_release_and_the_shared_template(project, template):
    """.copier-answers.yml: the team's URL as copier reads it (`git+` before it), the release, its commit.

    The README names the URL as the team gave it.
    """
    answers = (project / ".copier-answers.yml").read_text()
    first = git(template.maintainers, "rev-parse", "HEAD~1").strip()
    assert f"_src_path: git+{template.url}\n" in answers
    assert f"release: {FIRST}\n" in answers
    assert f"_commit: {first[:7]}" in answers
    assert (
        f"release {FIRST} of the hitl-agent-server template ({template.url})"
        in (project / "README.md").read_text()
    )


def test_a_template_git_cannot_reach_is_one_line_naming_it(template, tmp_path):
    """`hitl new project --template file:///nowhere/template`: exit 1, one line naming the URL, no folder."""
    missing = f"file://{tmp_path}/nowhere/template"
    made = hitl(tmp_path, "new", "project", "acme", "--template", missing, cli=CLI, env=template.env())
    assert made.returncode == 1
    assert made.stderr.startswith(f"error: cannot reach the template at {missing}: "), made.stderr
    assert len(made.stderr.strip().splitlines()) == 1, made.stderr
    assert not (tmp_path / "acme").exists()


def test_make_help_lists_only_the_projects_targets(project):
    """`make help`: dev, test, lint and the rest; nothing for parts the project lacks (bench, chaos)."""
    listed = subprocess.run(
        ["make", "help"], cwd=project, capture_output=True, text=True, timeout=60, check=True
    )
    targets = {line.split()[1] for line in listed.stdout.splitlines() if line.strip().startswith("make ")}
    assert {"dev", "test", "lint", "setup", "serve-replicas"} <= targets
    assert targets.isdisjoint({"bench", "chaos"})


@pytest.mark.timeout(900)  # the project's whole suite: as long as its `make test` may take (below), not 300 s
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
