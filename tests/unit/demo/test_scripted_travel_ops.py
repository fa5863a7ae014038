"""The scripted model for travel and ops: natural variants, and scripts that keep to their own agents."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from agents.offline import phrases
from agents.offline.ops import OpsRequest, ops_script
from agents.offline.travel import TravelRequest, travel_script
from hitl.model.scripted.conversation import Conversation

TRAVEL = frozenset({"search_flights", "cancel_booking", "task", "write_file", "read_file"})
OPS = frozenset({"read_data", "execute_sql", "delete_file", "task", "write_file", "read_file"})
SUPPORT = frozenset({"get_order", "issue_refund", "send_email", "ask_user", "task", "write_file"})


def chat(text: str, tools: frozenset[str]) -> Conversation:
    return Conversation.of([HumanMessage(text)], tools)


@pytest.mark.parametrize(
    ("text", "route", "book", "earliest"),
    [
        (phrases.FIND_FLIGHT, ("Berlin", "Lisbon", "2026-12-18"), False, False),
        (phrases.FIND_AND_BOOK_CHEAPEST, ("Berlin", "Lisbon", "2026-12-18"), True, False),
        (
            "any flights from berlin to lisbon for 2026-12-18?",
            ("Berlin", "Lisbon", "2026-12-18"),
            False,
            False,
        ),
        (
            "Please reserve the earliest flight from New York to Lisbon on 2027-01-02",
            ("New York", "Lisbon", "2027-01-02"),
            True,
            True,
        ),
        (phrases.BOOK_CHEAPEST, None, True, False),
    ],
)
def test_travel_requests_are_read_from_natural_variants(text, route, book, earliest):
    """parsing: route, date, booking and which flight come from the words."""
    request = TravelRequest.read(text)
    read_route = tuple(request.route.values()) if request.route else None
    assert (read_route, request.book, request.earliest) == (route, book, earliest)


@pytest.mark.parametrize(
    ("text", "year", "delete_rows", "deletes"),
    [
        (phrases.ARCHIVE_OLD_ORDERS, "2025", True, ()),
        ("archive all orders before 2024 to old.csv", "2024", False, ()),
        (phrases.ARCHIVE_AND_DELETE_LOG, "2025", True, ("tmp/old.log",)),
        (phrases.DELETE_OLD_LOG, None, False, ("tmp/old.log",)),
        (
            "Please remove the files tmp/a.log, tmp/b.log and logs/c.txt.",
            None,
            False,
            ("tmp/a.log", "tmp/b.log", "logs/c.txt"),
        ),
    ],
)
def test_ops_requests_are_read_from_natural_variants(text, year, delete_rows, deletes):
    """parsing: archive year, deleting the rows, and every file to delete."""
    request = OpsRequest.read_text(text)
    assert (request.archive_year, request.delete_rows, request.deletes) == (year, delete_rows, deletes)


def test_each_script_answers_only_its_own_agents():
    """scope: a script decides by the tools offered, so a phrase never crosses agents."""
    for text in (phrases.FIND_AND_BOOK_CHEAPEST, phrases.ARCHIVE_OLD_ORDERS, phrases.DEPLOY_TO_PRODUCTION):
        assert travel_script(chat(text, OPS)) is None
        assert travel_script(chat(text, SUPPORT)) is None
        assert ops_script(chat(text, TRAVEL)) is None
        assert ops_script(chat(text, SUPPORT)) is None


def test_the_first_steps_are_the_expected_calls():
    """First turn: search, read the rows, delegate the deploy, delete the file."""
    assert [c.name for c in travel_script(chat(phrases.FIND_FLIGHT, TRAVEL))] == ["search_flights"]
    assert [c.name for c in ops_script(chat(phrases.ARCHIVE_OLD_ORDERS, OPS))] == ["read_data"]
    [deploy] = ops_script(chat(phrases.DEPLOY_TO_PRODUCTION, OPS))
    assert (deploy.name, deploy.args["subagent_type"]) == ("task", "deployer")
    [delete] = ops_script(chat(phrases.DELETE_OLD_LOG, OPS))
    assert (delete.name, delete.args) == ("delete_file", {"path": "tmp/old.log"})
