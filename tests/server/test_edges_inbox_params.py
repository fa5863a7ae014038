"""GET /inbox with parameters this server never made: a 400 naming the parameter, never a 500.

Crafted cursors (not base64, base64 of non-JSON, JSON of the wrong shape or types, huge),
limits and filters, sent as a requester and as a reviewer; without a token, 401 first.
"""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from server.http.outgoing import tls

pytestmark = pytest.mark.server


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()


BAD = [
    ({"cursor": "%%%not base64%%%"}, "cursor"),
    ({"cursor": "a"}, "cursor"),
    ({"cursor": b64(b"\xff\xfe not json")}, "cursor"),
    ({"cursor": b64(b"not json at all")}, "cursor"),
    ({"cursor": b64(b"42")}, "cursor"),
    ({"cursor": b64(b'{"a": 1, "b": 2, "c": 3, "d": "4"}')}, "cursor"),
    ({"cursor": b64(json.dumps(["2026-01-01", "t", "i"]).encode())}, "cursor"),
    ({"cursor": b64(json.dumps(["2026-01-01", "t", "i", "0"]).encode())}, "cursor"),
    ({"cursor": b64(json.dumps(["2026-01-01", "t", "i", 1.5]).encode())}, "cursor"),
    ({"cursor": b64(json.dumps(["2026-01-01", "t", "i", True]).encode())}, "cursor"),
    ({"cursor": b64(json.dumps([1, 2, 3, 4]).encode())}, "cursor"),
    ({"cursor": b64(b'["a", "b", "c", 1e999]')}, "cursor"),
    ({"cursor": b64(b"[" * 5000 + b"]" * 5000)}, "cursor"),
    ({"cursor": b64(json.dumps(["x" * 15_000, "t", "i", 0]).encode())}, "cursor"),
    ({"cursor": "é" * 10}, "cursor"),
    ({"limit": "abc"}, "limit"),
    ({"limit": "-1"}, "limit"),
    ({"limit": "0"}, "limit"),
    ({"limit": "501"}, "limit"),
    ({"limit": "1e3"}, "limit"),
    ({"limit": "9" * 5000}, "limit"),
    ({"limit": "٣"}, "limit"),
    ({"limit": ""}, "limit"),
    ({"agent": "a" * 5000}, "agent"),
    ({"agent": "support\x00"}, "agent"),
    ({"tool": "t" * 5000}, "tool"),
    ({"tool": "issue_refund\n"}, "tool"),
    ({"group": "Finance"}, "group"),
    ({"group": "finance leads"}, "group"),
    ({"group": "g" * 65}, "group"),
    ({"group": "finance\x00"}, "group"),
    ({"group": "../reviewer"}, "group"),
    ({"mine": "yes please"}, "mine"),
    ({"mine": "2"}, "mine"),
    ({"deadline_before": "tomorrow"}, "deadline_before"),
    ({"deadline_before": "2026-01-31"}, "deadline_before"),
    ({"deadline_before": "2026-01-31T17:00:00"}, "deadline_before"),
    ({"deadline_before": "2026-13-31T17:00:00Z"}, "deadline_before"),
    ({"deadline_before": "9" * 5000}, "deadline_before"),
    ({"asked_by": "a" * 5000}, "asked_by"),
    ({"asked_by": "requester1\r\n"}, "asked_by"),
]


@pytest.mark.parametrize("user", ["requester1", "reviewer1"])
@pytest.mark.parametrize(("params", "named"), BAD, ids=[f"{n}-{i}" for i, (_, n) in enumerate(BAD)])
async def test_a_crafted_parameter_is_a_400_naming_it(client_as, user, params, named):
    """400 with a message that names the parameter, for a requester and a reviewer alike."""
    with pytest.raises(httpx.HTTPStatusError) as caught:
        await client_as(user).http.get("/inbox", params=params)
    response = caught.value.response
    assert response.status_code == 400, response.text
    assert named in response.json()["detail"]


@pytest.mark.parametrize(("params", "named"), BAD[:3] + BAD[15:17])
def test_without_a_token_it_is_401_before_any_parameter_is_read(server, params, named):
    """anonymous: 401 whatever the parameters (they are not even looked at)."""
    del named
    answer = httpx.get(f"{server.url}/inbox", params=params, verify=tls())
    assert answer.status_code == 401, answer.text


async def test_good_parameters_still_work(client_as):
    """control: the largest page and both filters answer 200."""
    page = await client_as("reviewer1").http.get(
        "/inbox", params={"limit": "500", "agent": "support", "tool": "issue_refund"}
    )
    assert set(page) == {"items", "next_cursor", "total", "counts"}
