"""What a newcomer does first, for the tests that do it too: a clean copy of HEAD, `make dev` in it.

The copy is `git clone` of what is committed; only what make would build on a fresh machine (the
venv, the web build) is linked from this checkout, and `make -o` treats those steps as done. The
server is started by `make dev` itself, in a shell with none of the test run's variables.
"""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from server.runtime.replicas import free_port, polled_ok, stop

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SHARED = (".venv", "web/dist", "web/node_modules")
"""What make would build on a fresh machine: linked from this checkout instead (minutes of installs)."""
PREBUILT = ("-o", ".venv/.installed", "-o", "web/dist/index.html")
SHELL = ("PATH", "HOME", "LANG", "LC_ALL", "USER", "TERM")
"""The variables a newcomer's shell has; nothing of the test run's (DATA_DIR, HITL_*, ...)."""


def shell_env() -> dict[str, str]:
    """A newcomer's environment: the shell's basics only."""
    return {key: os.environ[key] for key in SHELL if key in os.environ}


def clean_copy(root: Path, into: Path) -> Path:
    """`git clone` of HEAD at `into`, with the venv and the web build linked from `root`."""
    subprocess.run(["git", "clone", "-q", "--shared", str(root), str(into)], check=True, timeout=120)
    for part in SHARED:
        if (root / part).exists():
            (into / part).parent.mkdir(parents=True, exist_ok=True)
            (into / part).symlink_to(root / part)
    return into


@contextmanager
def make_dev(copy: Path) -> Iterator[int]:
    """`make dev PORT=<free>` in `copy` until the block ends; the port, once `/ok` answers there.

    What `make dev` serves beside the agents (the demo's billing MCP server) gets a free port too.
    """
    port = free_port()
    log = copy.parent / f"{copy.name}-make-dev.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["make", *PREBUILT, "dev", f"PORT={port}", f"MCP_PORT={free_port()}"],
            cwd=copy,
            env=shell_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def failed() -> str | None:
            if process.poll() is not None:
                return f"make dev exited:\n{log.read_text()[-3000:]}"
            if "Application startup failed" in log.read_text():
                return log.read_text()[-3000:]
            return None

        try:
            answered = polled_ok(f"http://127.0.0.1:{port}", 90, failed, interval=0.5)
        except RuntimeError as failure:
            pytest.fail(str(failure))
        if not answered:
            pytest.fail(f"make dev did not serve /ok on {port} in 90 s:\n{log.read_text()[-3000:]}")
        yield port
    finally:
        stop(process)


def as_typed(copy: Path, port: int, lines: list[str]) -> str:
    """Run `lines` in bash in `copy` as a person types them (aliases on), the server on `port`; stdout.

    Raises:
        AssertionError: a line failed (its output says why).
    """
    script = "\n".join(["shopt -s expand_aliases", *lines]).replace("127.0.0.1:2024", f"127.0.0.1:{port}")
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=copy,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{lines[-1]}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def project_venv(template: Path, project: Path) -> Path:
    """A `.venv` for `project` as make would install it: its own code, the template's dependencies.

    The dependencies are the template venv's site-packages, added by a `.pth` path (minutes of
    installs saved); the project's own packages come from the project only, as an editable
    install of it would give them: the template venv's editable install of the template is not
    read there, so nothing of the template's own code can stand in for what the project lacks.
    Console scripts are the template's, run by this venv's Python.
    """
    venv = project / ".venv"
    subprocess.run(["python3", "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    [site] = (venv / "lib").glob("python3.*/site-packages")
    [shared] = (template / ".venv" / "lib").glob("python3.*/site-packages")
    (site / "_project.pth").write_text(f"{project}\n")
    (site / "zz_template_dependencies.pth").write_text(f"{shared}\n")
    for script in (template / ".venv" / "bin").iterdir():
        target = venv / "bin" / script.name
        if target.exists() or script.name.startswith(("python", "activate", "Activate")):
            continue
        head = script.read_bytes()[:2]
        if head == b"#!":
            body = script.read_text().split("\n", 1)[1]
            target.write_text(f"#!{venv / 'bin' / 'python'}\n{body}")
            target.chmod(0o755)
        else:
            target.symlink_to(script)
    (venv / ".installed").touch()
    return venv
