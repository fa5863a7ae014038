"""Every run the server starts passes one door (`server.decisions.server_runs`), and no path goes around it.

Issue 54, finding 1: the server's own `runs.create` calls passed `on_run` unchecked, and a
withdrawal's run named nobody. The scan finds every call in `server/` that starts a run
(`runs.create`, `runs.wait`, `runs.stream`, `runs.create_batch`): only the door may make one. The
paths that start runs through the door are listed here, so a new one is seen (and tested through
the real server: `tests/security/test_server_runs.py`, `tests/server/test_deadlines.py`,
`tests/server/test_channels_slack.py`). At run time `on_run` refuses a server run made outside it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from langgraph_sdk import Auth

from server.decisions import server_runs

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "server"
DOOR = SERVER / "decisions" / "server_runs.py"
STARTS_A_RUN = frozenset({"create", "wait", "stream", "create_batch"})
"""The SDK's `client.runs` methods that start a run."""
PATHS = {
    "server/decisions/withdrawals.py": {"start_decided"},
    "server/coordination/watcher.py": {"start_decided"},
    "server/coordination/reconciler.py": {"start_admitted"},
    "server/channels/slack.py": {"start_admitted"},
}
"""Every server path that starts a run, and the door it takes."""


def run_starts(source: str) -> list[int]:
    """The lines of `source` that call `<anything>.runs.<a method that starts a run>(...)`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        target = node.func.value
        named = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if node.func.attr in STARTS_A_RUN and named == "runs":
            found.append(node.lineno)
    return sorted(found)


def door_calls(source: str) -> set[str]:
    """The door's functions `source` calls (`server_runs.start_decided(...)`, ...)."""
    return {
        node.func.attr
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "server_runs"
    }


def test_the_scan_finds_a_run_started_beside_the_door():
    """planted `client.runs.create(...)`, `get_client().runs.wait(...)`, `runs.stream(...)`: each found."""
    planted = (
        "async def f(client, runs):\n"
        "    await client.runs.create('t', 'a')\n"
        "    await get_client().runs.wait('t', 'a')\n"
        "    runs.stream('t', 'a')\n"
        "    client.runs.list('t')\n"
    )
    assert run_starts(planted) == [2, 3, 4]


def test_only_the_door_starts_a_run_in_the_server():
    """server/: exactly one call that starts a run, in `server/decisions/server_runs.py`."""
    found = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(SERVER.rglob("*.py"))
        if (lines := run_starts(path.read_text()))
    }
    assert list(found) == [str(DOOR.relative_to(ROOT))], found
    assert len(found[str(DOOR.relative_to(ROOT))]) == 1


def test_every_path_that_starts_a_run_is_known_and_takes_the_door():
    """the modules calling the door are the listed paths, each through the function listed for it."""
    callers = {
        str(path.relative_to(ROOT)): calls
        for path in sorted(SERVER.rglob("*.py"))
        if path != DOOR and (calls := door_calls(path.read_text()) - {"admit", "RunNotStarted"})
    }
    assert callers == PATHS


def test_on_run_lets_the_servers_own_run_through_only_from_the_door():
    """`on_run` for a server run goes to `server_runs.admit`, never lets it through unchecked."""
    source = (SERVER / "http" / "auth.py").read_text()
    on_run = next(
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.AsyncFunctionDef) and node.name == "on_run"
    )
    guard = next(node for node in on_run.body if isinstance(node, ast.If))
    assert ast.unparse(guard.test) == "is_server()"
    assert ast.unparse(guard.body[0]) == "server_runs.admit(value)"


def named(person: object) -> dict:
    return {"thread_id": "t", "kwargs": {"config": {"configurable": {"hitl_acting_for": person}}}}


@pytest.mark.parametrize(
    ("value", "through_the_door"),
    [
        (named({"identity": "requester1", "roles": ["requester"]}), False),
        (named(None), True),
        (named({"identity": ""}), True),
        ({"thread_id": "t", "kwargs": {}}, True),
    ],
    ids=["named, beside the door", "nobody named", "an empty name", "no config"],
)
def test_a_server_run_outside_the_door_or_naming_nobody_is_refused(value, through_the_door):
    """`admit`: 403 saying runs start only through the door, for each run not made there or naming nobody."""
    token = server_runs._STARTING.set(through_the_door)  # noqa: SLF001  (what the door sets while it creates)
    try:
        with pytest.raises(Auth.exceptions.HTTPException) as refused:
            server_runs.admit(value)
    finally:
        server_runs._STARTING.reset(token)  # noqa: SLF001
    assert refused.value.status_code == 403
    assert "only through server.decisions.server_runs" in str(refused.value.detail)


def test_a_run_the_door_creates_naming_the_owner_is_let_through():
    """`admit` inside the door, the run naming whose records it works on: no refusal."""
    token = server_runs._STARTING.set(True)  # noqa: SLF001  (what the door sets while it creates)
    try:
        server_runs.admit(named({"identity": "requester1", "roles": ["requester"]}))
    finally:
        server_runs._STARTING.reset(token)  # noqa: SLF001
