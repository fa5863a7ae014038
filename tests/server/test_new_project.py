"""A project of your own: `hitl new project DIR` makes one without the demo, and its `make test` passes.

The project gets its own venv (its own code, the template's installed dependencies: see
`tests.newcomer.project_venv`), so the approval layer runs there with nothing of the demo to
lean on: a layer module that imported the demo's code would fail its tests.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.newcomer import PREBUILT, project_venv, shell_env

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = [pytest.mark.server, pytest.mark.long]

ROOT = Path(__file__).resolve().parents[2]
DEMO = (
    "agents/support.py",
    "agents/offline",
    "tools/support.py",
    "tools/travel.py",
    "services/orders.py",
    "subagents/refund_specialist.py",
    "web/src/demo",
    "bench",
    "docs",
    "tests/security",
)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Iterator[Path]:
    """`hitl new project acme` (this checkout's HEAD), with its own venv and the web app's packages."""
    root = tmp_path_factory.mktemp("new-project") / "acme"
    made = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "hitl"), "new", "project", str(root)],
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    project_venv(ROOT, root)
    for shared in (".venv-replicas", "web/node_modules"):
        (root / shared).symlink_to(ROOT / shared)
    return root


def test_the_project_has_the_layer_and_one_agent_and_nothing_of_the_demo(project):
    """layer, web app, make targets and deploy files are there; the demo is not; one agent is served."""
    for kept in (
        "hitl/gate/gate.py",
        "server/http/app.py",
        "web/src/App.tsx",
        "Makefile",
        "deploy",
        ".copier-answers.yml",
    ):
        assert (project / kept).exists(), kept
    assert [part for part in DEMO if (project / part).exists()] == []
    assert json.loads((project / "langgraph.json").read_text())["graphs"] == {
        "assistant": "agents.assistant:graph"
    }
    assert "REFUND" not in (project / ".env.example").read_text()
    assert 'name = "acme"' in (project / "pyproject.toml").read_text()
    assert "copier update" in (project / "README.md").read_text()


def test_make_test_passes_in_the_project(project):
    """the project's own `make test`: its web tests and its agent's tests, in-process and served."""
    done = subprocess.run(
        ["make", *PREBUILT, "-o", ".venv-replicas/.installed", "-o", "web/node_modules/.installed", "test"],
        cwd=project,
        env={**shell_env(), "TEST_WORKERS": "0"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-3000:]}"
    assert "passed" in done.stdout
