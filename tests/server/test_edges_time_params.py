"""Every time a client sends the server (`/inbox?deadline_before=`, `/analytics?since=&until=`): never a 5xx.

Issue 54, finding 8: the calendar's edges answered 500 (`9999-12-31T23:59:59-14:00` is past year 9999
in UTC; `0001-01-01T00:00:00+14:00` before year 1). Each parameter is read by one parser
(`server.http.instants`); the edges and a hypothesis fuzz of times, dates, zones and durations from
year 1 to 9999 must answer 200 or a 400 naming the parameter, as a requester and as a staff member.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.http.outgoing import tls
from tests.security.outcomes import headers

pytestmark = pytest.mark.server

PARAMETERS = {"deadline_before": "/inbox", "since": "/analytics", "until": "/analytics"}
"""Every time parameter the server reads, and the route that reads it."""
STAFF_ONLY = {"/analytics"}
EDGES = [
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59.999999-00:01",
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T00:00:00.000001+00:01",
    "9999-12-31T23:59:59-23:59",
    "0001-01-01T00:00:00+23:59",
]
FUZZ = settings(
    deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None, max_examples=120
)


@pytest.fixture
def http(server):
    """`http(user)`: a synchronous raw client of the session's server (hypothesis calls it per example)."""
    opened: list[httpx.Client] = []

    def make(user: str | None) -> httpx.Client:
        opened.append(httpx.Client(base_url=server.url, headers=headers(user), timeout=60, verify=tls()))
        return opened[-1]

    yield make
    for client in opened:
        client.close()


def answered(client: httpx.Client, name: str, value: str) -> httpx.Response:
    """Send `value` as parameter `name` to its route; a 5xx fails, a 400 must name the parameter."""
    answer = client.get(PARAMETERS[name], params={name: value})
    assert answer.status_code < 500, (name, value, answer.text)
    if answer.status_code == 400:
        assert name in answer.json()["detail"], (name, value, answer.text)
    return answer


@pytest.mark.parametrize("name", PARAMETERS)
@pytest.mark.parametrize("value", EDGES)
def test_a_time_past_the_calendars_edge_is_a_400_naming_it(http, name, value):
    """The edges that overflowed: 400 naming the parameter and the range, for a reviewer and a supervisor."""
    for user in ("reviewer1", "supervisor1"):
        answer = answered(http(user), name, value)
        assert answer.status_code == 400, (user, name, value, answer.text)
        assert "must lie between 0001-01-01T00:00Z and 9999-12-31T23:59Z in UTC" in answer.json()["detail"]


@pytest.mark.parametrize("name", PARAMETERS)
def test_a_requester_and_an_anonymous_caller_get_no_5xx_either(http, name):
    """requester: 400 on the inbox's edge, 403 on analytics (staff only); anonymous: 401, never read."""
    for value in EDGES[:3]:
        answer = answered(http("requester1"), name, value)
        assert answer.status_code == (403 if PARAMETERS[name] in STAFF_ONLY else 400), answer.text
        assert http(None).get(PARAMETERS[name], params={name: value}).status_code == 401


def test_the_inner_edges_still_answer(http):
    """control: the last instant of 9999 and the first of year 1, in UTC, are read (200); an inbox page."""
    reviewer = http("reviewer1")
    page = answered(reviewer, "deadline_before", datetime.max.replace(tzinfo=UTC).isoformat())
    assert page.status_code == 200, page.text
    assert set(page.json()) == {"items", "next_cursor", "total", "counts"}
    assert answered(reviewer, "deadline_before", "9999-12-31T23:59:59+23:59").status_code == 200
    assert answered(reviewer, "since", "0001-01-01T00:00:00Z").status_code == 200
    assert answered(reviewer, "since", "0001-01-01T00:00:00-23:59").status_code == 200
    assert answered(reviewer, "until", "9999-12-31").status_code == 200
    assert answered(reviewer, "since", "9999w").status_code == 200
    early = reviewer.get("/analytics", params={"until": "0001-01-01T00:00Z"})
    assert early.status_code == 400, early.text  # nothing lies before it: an empty period, said so
    assert "since must be before until" in early.json()["detail"]


FIRST, LAST = datetime.min, datetime.max  # noqa: DTZ901  (hypothesis takes zoneless bounds; zones are drawn)
EDGE_DAYS = st.one_of(
    st.datetimes(max_value=FIRST + timedelta(days=2)), st.datetimes(min_value=LAST - timedelta(days=2))
)
"""Times within a day or two of the calendar's ends, where a zone carries them past year 1 or 9999."""


@st.composite
def times(draw: st.DrawFn) -> str:
    """An ISO 8601 time anywhere from year 1 to 9999, with a zone up to ±23:59 (or none), or a date."""
    moment = draw(st.one_of(st.datetimes(), EDGE_DAYS))  # zoneless, year 1 to 9999: the zone is drawn below
    shape = draw(st.sampled_from(["zoned", "zoned", "zoned", "Z", "naive", "date"]))
    if shape == "date":
        return moment.date().isoformat()
    if shape == "naive":
        return moment.isoformat()
    if shape == "Z":
        return moment.isoformat() + "Z"
    minutes = draw(st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1))
    return moment.replace(tzinfo=timezone(timedelta(minutes=minutes))).isoformat()


DURATIONS = st.from_regex(r"\A[0-9]{1,4}[mhdw]\Z")


@settings(FUZZ)
@given(name=st.sampled_from(sorted(PARAMETERS)), value=st.one_of(times(), DURATIONS, st.text(max_size=45)))
def test_any_time_is_read_or_refused_naming_the_parameter(http, name, value):
    """fuzz: every time, date, zone and duration (and any text) answers 200 or a 400 naming the parameter."""
    answered(http("supervisor1"), name, value)
