"""How the server serves the web app: its files and sign-in config without a token, the API never.

A browser cannot send a bearer token for the page that asks for one, so `/app/*` and `/app-config`
answer GET without one (`server.http.routes.PublicRoute`); every other route still needs a known token
(`server.http.app.TokenRequired`; the server's own meta routes are checked in
`tests/server/test_edges_public_routes.py`).
"""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from hitl.settings import get_settings
from server.http import routes
from server.http.outgoing import tls
from server.identity.users import directory
from tests.web.conftest import TOKENS

DEV_USERS = "ann:requester:tok-ann,bob:supervisor:tok-bob:with-colon"


@pytest.mark.server
def test_the_app_and_its_assets_load_without_a_token(server):
    """GET /app/ is the built index.html, its script loads too, and /app redirects to /app/."""
    page = httpx.get(f"{server.url}/app/", verify=tls())
    assert page.status_code == 200
    assert '<div id="root">' in page.text
    script = re.search(r'src="(/app/assets/[^"]+\.js)"', page.text)
    assert script, page.text
    asset = httpx.get(f"{server.url}{script.group(1)}", verify=tls())
    assert (asset.status_code, asset.headers["content-type"].split(";")[0]) == (200, "text/javascript")
    bare = httpx.get(f"{server.url}/app", verify=tls())
    assert (bare.status_code, bare.headers["location"]) == (307, f"{server.url}/app/")


@pytest.mark.server
def test_app_config_answers_without_a_token_and_offers_dev_users_over_loopback_in_dev_mode(server):
    """GET /app-config needs no token; the session's server is in dev mode, so loopback gets the dev users.

    Every one of .env.example, with the token that signs them in; test servers may add their own.
    """
    answer = httpx.get(f"{server.url}/app-config", verify=tls())
    assert answer.status_code == 200
    offered = {u["name"]: u["token"] for u in answer.json()["dev_users"]}
    assert offered.items() >= TOKENS.items()


# a fixed id: pytest-xdist workers must collect the same test names
NO_THREAD = uuid.UUID(int=0x5EED, version=4)


@pytest.mark.server
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/inbox"),
        ("GET", f"/audit/{NO_THREAD}"),
        ("POST", "/threads/search"),
        ("POST", "/assistants/search"),
        ("GET", f"/threads/{NO_THREAD}"),
        ("POST", "/app/"),
        ("POST", "/app-config"),
        ("GET", "/metrics"),
        ("GET", "/docs"),
        ("GET", "/openapi.json"),
        ("POST", "/info"),
        ("GET", "/"),
        ("POST", "/internal/truncate"),
        ("GET", f"/internal/debug/thread/{NO_THREAD}"),
        ("GET", "/deploy"),
    ],
)
@pytest.mark.parametrize("authorization", [None, "Bearer not-a-known-token"])
def test_everything_else_still_needs_a_known_token(server, method, path, authorization):
    """API routes, and writes to the public paths, answer 401 without a known bearer token."""
    headers = {"Authorization": authorization} if authorization else {}
    answer = httpx.request(method, f"{server.url}{path}", headers=headers, json={}, verify=tls())
    assert answer.status_code == 401, answer.text


@pytest.fixture
def settings_from_env(monkeypatch):
    """Settings and users re-read from the environment this test sets, and again after it."""
    monkeypatch.setenv("HITL_USERS", DEV_USERS)
    get_settings.cache_clear()
    directory.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()
    directory.cache_clear()


def app_config(monkeypatch, *, dev_mode: str, host: str = "127.0.0.1") -> dict:
    monkeypatch.setenv("HITL_DEV_MODE", dev_mode)
    get_settings.cache_clear()
    app = Starlette(routes=[routes.PublicRoute(Route("/app-config", routes.app_config))])
    with TestClient(app, client=(host, 50000)) as c:
        return c.get("/app-config").json()


def test_dev_mode_offers_every_user_with_the_token_that_signs_them_in(settings_from_env):
    """Dev mode, loopback: each HITL_USERS entry with its role and token (a token may contain ':')."""
    assert app_config(settings_from_env, dev_mode="true") == {
        "dev_users": [
            {"name": "ann", "role": "requester", "token": "tok-ann"},
            {"name": "bob", "role": "supervisor", "token": "tok-bob:with-colon"},
        ]
    }
    assert app_config(settings_from_env, dev_mode="true", host="::1")["dev_users"]
    assert app_config(settings_from_env, dev_mode="false") == {"dev_users": []}


@pytest.mark.parametrize("host", ["192.168.1.20", "10.0.0.7", "2001:db8::1", "testclient"])
def test_dev_mode_offers_no_token_to_a_visitor_from_another_machine(settings_from_env, host):
    """HITL_DEV_MODE=true, but the request did not come over loopback: no users, no tokens."""
    assert app_config(settings_from_env, dev_mode="true", host=host) == {"dev_users": []}


def test_without_a_build_the_app_says_how_to_make_one(tmp_path):
    """No web/dist: /app/ answers 503 with a page that names `make dev`; once built, the files are served."""
    app = Starlette(routes=[Mount("/app", app=routes.WebApp(tmp_path / "dist"))])
    with TestClient(app) as client:
        missing = client.get("/app/")
        assert missing.status_code == 503
        assert "make dev" in missing.text
        (tmp_path / "dist").mkdir()
        (tmp_path / "dist" / "index.html").write_text("<div id=root></div>")
        assert client.get("/app/").text == "<div id=root></div>"
