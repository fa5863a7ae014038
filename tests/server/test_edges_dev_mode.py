"""Dev mode is explicit: HITL_DEV_MODE=true in the environment, and loopback, or no dev tokens at all.

Servers of their own (`start_dev_server`): dev mode off with the published dev-* tokens of
`.env.example` must not start; dev mode off with secret tokens starts and /app-config carries
no secret; the session's server (dev mode on, loopback) offers the dev users.
"""

from __future__ import annotations

import httpx
import pytest

from server.http.outgoing import tls
from tests.devserver import TOKENS, start_dev_server, stop

pytestmark = pytest.mark.server

SECRET_USERS = "ann:requester:s3cr3t-ann-7f2c,bob:supervisor:s3cr3t-bob-91aa"  # noqa: S105  (test tokens)


def test_dev_tokens_outside_dev_mode_stop_the_server_with_a_clear_message(tmp_path):
    """dev mode off + dev-* tokens: `langgraph dev` exits; the log names HITL_USERS and HITL_DEV_MODE."""
    with pytest.raises(pytest.fail.Exception) as failed:
        start_dev_server(tmp_path, {"HITL_DEV_MODE": "false"})
    said = str(failed.value)
    assert "exited" in said, said
    assert "HITL_USERS" in said
    assert "HITL_DEV_MODE" in said
    assert "requester1" in said


@pytest.fixture(scope="module")
def production_like(tmp_path_factory):
    """A server outside dev mode with secret tokens."""
    running = start_dev_server(
        tmp_path_factory.mktemp("no-dev-mode"), {"HITL_DEV_MODE": "false", "HITL_USERS": SECRET_USERS}
    )
    yield running
    stop(running.process)


def test_outside_dev_mode_app_config_carries_no_secret(production_like):
    """dev mode off: /app-config answers 200 with no users and no token anywhere in it."""
    answer = httpx.get(f"{production_like.url}/app-config", verify=tls())
    assert (answer.status_code, answer.json()) == (200, {"dev_users": []})
    assert "s3cr3t" not in answer.text


def test_outside_dev_mode_only_the_configured_tokens_get_in(production_like):
    """dev mode off: a configured token reads the inbox; a dev-* token is a 401."""
    own = httpx.get(
        f"{production_like.url}/inbox", headers={"Authorization": "Bearer s3cr3t-bob-91aa"}, verify=tls()
    )
    assert own.status_code == 200, own.text
    dev = httpx.get(
        f"{production_like.url}/inbox", headers={"Authorization": "Bearer dev-supervisor1"}, verify=tls()
    )
    assert dev.status_code == 401


def test_in_dev_mode_loopback_is_offered_the_dev_users(server):
    """dev mode on (the session's server), request over loopback: every dev user with the token."""
    answer = httpx.get(f"{server.url}/app-config", verify=tls())
    assert answer.status_code == 200
    assert {u["name"]: u["token"] for u in answer.json()["dev_users"]} == TOKENS
