"""The web app's types are what the published contracts generate: `make schemas` keeps them in step.

A contract changed in Python and not regenerated fails here, not in a person's browser. Not run in a
project made without the demo (`copier.yml`): the template's `generated.ts` carries the demo's form
types, whose `forms.json` the project does not get; its first `make schemas` writes both anew.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_web_apps_types_are_what_the_published_contracts_generate():
    """drift: web/src/contracts/generated.ts is what `make schemas` generates, and no contract is copied.

    The web app's provisional definitions (web/src/contracts/contracts.json) keep none the Python side
    publishes; a contract changed in Python and not regenerated fails here, not in a person's browser.
    """
    node = shutil.which("node")
    assert node, "node is missing: `make setup` needs it for the web app"
    done = subprocess.run(
        [node, "scripts/gen-types.mjs", "--check"],
        cwd=ROOT / "web",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr + done.stdout
