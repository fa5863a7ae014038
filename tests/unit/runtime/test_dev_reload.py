"""`make dev`'s restarts: which changes start the server again, and which never do."""

from __future__ import annotations

import pytest
from watchfiles import Change

from server.runtime.dev_reload import CodeAndSettings

ROOT = "/home/ana/acme"


@pytest.mark.parametrize(
    ("path", "restarts"),
    [
        ("agents/expenses.py", True),
        ("hitl/gate/gate.py", True),
        ("langgraph.json", True),
        (".env", True),
        (".env.example", False),
        ("data/business.db", False),
        ("data/checkpoints.db-wal", False),
        (".langgraph_api/store.pckl", False),
        (".venv/lib/python3.11/site-packages/x.py", False),
        ("web/node_modules/flatted/python/flatted.py", False),
        ("agents/__pycache__/expenses.cpython-311.pyc", False),
        ("web/src/App.tsx", False),
    ],
)
def test_code_langgraph_json_and_env_restart_the_server_the_rest_never(path, restarts):
    """Python files, langgraph.json, .env: a restart; data, server state, venv, packages, caches: none."""
    assert CodeAndSettings()(Change.modified, f"{ROOT}/{path}") is restarts
