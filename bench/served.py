"""The bench server: the repository's `langgraph.json`, copied at run time, plus the stock agent.

Other keys of `langgraph.json` (auth, http, checkpointer, ...) are kept as they are, so the
stock agent is served behind the same auth and the same checkpointer as ours. The server is
started by the test suite's launcher (`tests.devserver.start_dev_server`), never by a
second one; this module only writes the configurations it serves and knows where it keeps data.
"""

from __future__ import annotations

import copy
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client

from server.insight import heap_probe
from tests.devserver import DEV_TOKENS, start_dev_server, stop

if TYPE_CHECKING:
    from collections.abc import Iterator

    from langgraph_sdk.client import LangGraphClient

    from tests.devserver import DevServer

ROOT = Path(__file__).resolve().parents[1]
OURS = "support"
STOCK = "stock"
STOCK_GRAPH = "bench.stock_agent:graph"
BENCH_USER = "supervisor1"
"""Every bench request acts as this dev user: it may create threads and decide every refund."""


def repo_config() -> dict[str, Any]:
    """The repository's `langgraph.json`, as it is now."""
    return json.loads((ROOT / "langgraph.json").read_text())


def side_by_side_config(repo: dict[str, Any]) -> dict[str, Any]:
    """`repo` with paths made absolute and the stock agent served as `stock` beside ours.

    Raises:
        ValueError: when `repo` already serves a graph called `stock`.
    """
    config = _absolute_paths(copy.deepcopy(repo))
    graphs = config.setdefault("graphs", {})
    if STOCK in graphs:
        msg = f"langgraph.json already serves a graph {STOCK!r}; the benchmark needs that name"
        raise ValueError(msg)
    graphs[STOCK] = STOCK_GRAPH
    return config


def stock_only_config() -> dict[str, Any]:
    """A bare configuration serving the stock agent alone: the start-up reference."""
    return {"dependencies": [str(ROOT)], "graphs": {STOCK: STOCK_GRAPH}}


def _absolute_paths(config: dict[str, Any]) -> dict[str, Any]:
    """Resolve the config's relative paths against the repository, since it is served from elsewhere."""
    config["dependencies"] = [
        str(ROOT / dep) if not Path(dep).is_absolute() and (ROOT / dep).exists() else dep
        for dep in config.get("dependencies", [])
    ]
    if isinstance(config.get("env"), str) and not Path(config["env"]).is_absolute():
        config["env"] = str(ROOT / config["env"])
    return _resolve_dot_paths(config)


def _resolve_dot_paths(value: Any) -> Any:  # noqa: ANN401  (any JSON value)
    if isinstance(value, dict):
        return {key: _resolve_dot_paths(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve_dot_paths(item) for item in value]
    if isinstance(value, str) and value.startswith(("./", "../")):
        path, colon, attribute = value.partition(":")
        return f"{(ROOT / path).resolve()}{colon}{attribute}"
    return value


def write_config(config: dict[str, Any], directory: Path) -> Path:
    """Write `config` as `directory/langgraph.json` and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def server_env() -> dict[str, str]:
    """What the bench server needs on top of the launcher's environment: `bench` importable."""
    python_path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": python_path}


@contextmanager
def serving(
    workdir: Path, config: dict[str, Any] | None, extra_env: dict[str, str] | None = None
) -> Iterator[DevServer]:
    """A running `langgraph dev` in `workdir/server` serving `config` (the repo's own when None).

    `extra_env` adds to its environment (where the MCP servers beside it are).
    """
    path = write_config(config, workdir / "config") if config is not None else None
    (workdir / "server").mkdir(parents=True, exist_ok=True)
    env = {**server_env(), heap_probe.ENV: str(heap_probe_file(workdir / "server")), **(extra_env or {})}
    server = start_dev_server(workdir / "server", env, config=path)
    try:
        yield server
    finally:
        stop(server.process)


def heap_probe_file(server_dir: Path) -> Path:
    """Where the server in `server_dir` writes its heap readings (`server.insight.heap_probe`)."""
    return server_dir / "heap-probe.json"


def bench_client(server: DevServer) -> LangGraphClient:
    """A `langgraph-sdk` client acting as the bench user (no API key from the environment)."""
    headers = {"Authorization": f"Bearer {DEV_TOKENS[BENCH_USER]}"}
    return get_client(url=server.url, headers=headers, api_key=None)


def server_state_dirs(server: DevServer) -> dict[str, Path]:
    """Where the server keeps its state: the runtime's `.langgraph_api/` and the data dir."""
    workdir = server.log.parent
    return {".langgraph_api": workdir / ".langgraph_api", "data": workdir / "data"}
