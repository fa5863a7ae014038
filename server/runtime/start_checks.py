"""What the server checks about its configuration before it serves, and `make dev`'s question about it.

The lifespan (`server.http.app`) runs these checks on every start, on any runtime: the people and
identity settings, where things are kept, and that every approval of a served agent has someone
who may answer it. `python -m server.runtime.start_checks` runs the same checks on the files as
they are now, as `make dev` asks when its server stopped while starting (`dev_reload`): exit 3 with
the problem when the configuration is at fault, 0 otherwise (the code is, or nothing is).
Not for what a request may do (`server.http.auth`), nor for the code's own errors.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import ValidationError

from hitl.policy.served import filed_cards, load_graphs
from hitl.settings import get_settings
from server.identity.answerers import UnanswerablePolicyError, check_policies
from server.identity.tokens import check_configuration
from server.runtime.checkpointer import EMBEDDED_EDITION
from server.runtime.topology import DatabaseUnreachableError, SharedTopologyError, check_start_up

CONFIGURATION_ERROR = 3
"""The exit status of a start refused by its configuration (as `langgraph dev --no-reload`'s own)."""


def check_settings(edition: str | None = None) -> None:
    """The settings, the people (HITL_USERS, OIDC), and where things are kept, before any graph is read.

    `edition` is the runtime's (read from the server by default).

    Raises:
        ValueError: a malformed setting (HITL_USERS, HITL_OIDC_*), or dev tokens outside dev mode.
        ValidationError: a setting of the wrong kind.
        SharedTopologyError: a replica would keep something to itself.
        DatabaseUnreachableError: a PostgreSQL database the settings name cannot be used.
    """
    get_settings()
    check_configuration()
    check_start_up(edition=edition)


def configuration_problem(config: Path) -> str | None:
    """Why the server at `config` (a `langgraph.json`) cannot start because of its configuration; None if not.

    The settings first; then the graphs are loaded as the server loads them, and each approval of a
    served agent must have someone who may answer it. A graph that fails to load is the code's
    problem, not the configuration's: None (the server's own output says what failed).
    """
    try:
        check_settings(EMBEDDED_EDITION)
    except (ValueError, ValidationError, SharedTopologyError, DatabaseUnreachableError) as error:
        return str(error)
    try:
        load_graphs(config)
    except Exception:  # noqa: BLE001  (any error of the graphs' code is the code's, which the server reports)
        return None
    try:
        check_policies(filed_cards())
    except UnanswerablePolicyError as error:
        return str(error)
    return None


def main() -> None:
    """Print the configuration's problem and exit 3, or exit 0 when there is none."""
    problem = configuration_problem(Path("langgraph.json"))
    if problem is not None:
        sys.stderr.write(f"The server cannot start with this configuration: {problem}\n")
        raise SystemExit(CONFIGURATION_ERROR)


if __name__ == "__main__":
    main()
