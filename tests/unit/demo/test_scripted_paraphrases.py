"""The scripted model understands close paraphrases of every request it knows, ten or more each.

A paraphrase passes when the model reads the same request from it (the parsed request) and
answers it with the same first step (the same tool calls and arguments, or the same words) as
the phrase the demo and the tests use.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from agents.offline import DEMO, phrases
from agents.offline.ops import OpsRequest
from agents.offline.support import SupportRequest
from agents.offline.travel import TravelRequest
from hitl.model.scripted.chat import help_text, scripted_reply
from hitl.model.scripted.conversation import Conversation

SUPPORT = frozenset({"get_order", "get_refund_policy", "issue_refund", "send_email", "ask_user", "task"})
TRAVEL = frozenset({"search_flights", "cancel_booking", "task"})
BOOKING_AGENT = frozenset({"book_flight"})
OPS = frozenset({"read_data", "write_file", "read_file", "execute_sql", "delete_file", "task"})
DEPLOYER = frozenset({"request_approval"})

PARAPHRASES: dict[str, tuple[str, frozenset[str], list[str]]] = {
    "refund in full": (
        phrases.REFUND_IN_FULL,
        SUPPORT,
        [
            "Please refund order A1024 in full, it arrived broken.",
            "Could you refund A1024 in full? It arrived broken.",
            "A1024 came broken - full refund please",
            "Order A1024 arrived damaged. Refund the whole amount, thanks!",
            "Hi, my order A1024 was broken on arrival, can you refund it fully?",
            "Refund order A1024 in full please",
            "I'd like a full refund for order A1024, it arrived broken.",
            "Could you please give a full refund on order A1024? Thanks",
            "Kindly refund everything on order A1024.",
            "Please issue a full refund for A1024, thank you.",
        ],
    ),
    "refund an amount": (
        phrases.REFUND_PARTIAL,
        SUPPORT,
        [
            "Please refund 59 on order A2048",
            "Could you refund $59 for order A2048?",
            "refund 59.00 on A2048, thanks",
            "Refund €59 to the customer of order A2048 please",
            "Order A2048: refund 59",
            "Can you issue a refund of 59 on order A2048?",
            "Please give order A2048 a refund of 59.",
            "A2048 needs a refund of 59, thank you",
            "Refund 59 for A2048.",
            "I need you to refund 59 on order A2048, cheers",
            "Hi! Refund 59 on order A2048 please.",
        ],
    ),
    "e-mail the customer": (
        phrases.EMAIL_CUSTOMER,
        SUPPORT,
        [
            "Please email the customer of A1024 that the refund is on its way",
            "Could you e-mail the customer of order A1024 that the refund is on its way? Thanks",
            "Write to the customer of A1024 that the refund is on its way.",
            "Tell the customer of order A1024 that the refund is on its way",
            "Send an email to the customer of A1024 that the refund is on its way",
            "E-mail the customer of A1024 that the refund is on its way, thank you.",
            "For order A1024, email the customer that the refund is on its way",
            "Kindly email the customer of A1024 that the refund is on its way.",
            "Hi, please tell the customer of A1024 that the refund is on its way!",
            "Email the customer of order A1024 that the refund is on its way please",
            "Could you write to the customer of A1024 that the refund is on its way",
        ],
    ),
    "refund without an order id": (
        phrases.REFUND_WITHOUT_ORDER,
        SUPPORT,
        [
            "Refund my order please, it arrived broken",
            "Could you refund my order? It came damaged.",
            "I want a refund, my parcel arrived broken.",
            "My order arrived broken, please refund it.",
            "Please give me a full refund, the item was damaged",
            "refund please",
            "Can I get a refund? Thanks",
            "Hi, I would like a refund for my order.",
            "Kindly refund my purchase, it arrived broken.",
            "Refund my order in full, thank you",
        ],
    ),
    "refund and e-mail": (
        phrases.REFUND_AND_EMAIL,
        SUPPORT,
        [
            "Please refund order A1024 in full and email the customer that the refund is on its way",
            "Refund A1024 in full, then email the customer that the refund is on its way.",
            "Could you refund A1024 fully and e-mail the customer that the refund is on its way? Thanks",
            "Refund order A1024 in full and tell the customer that the refund is on its way",
            "Full refund for order A1024, and write to the customer that the refund is on its way",
            "Refund the whole amount of order A1024 and email the customer that the refund is on its way",
            "Kindly refund order A1024 in full and email the customer that the refund is on its way.",
            "Hi! Refund order A1024 in full and email the customer that the refund is on its way, thanks",
            "Refund order A1024 in full; email the customer that the refund is on its way",
            "Refund order A1024 in full, and also email the customer that the refund is on its way please",
        ],
    ),
    "through the refund specialist": (
        phrases.REFUND_VIA_SPECIALIST,
        SUPPORT,
        [
            "Please ask the refund specialist to refund 59 on order A2048",
            "Could you ask the refund specialist to refund 59 on order A2048? Thanks",
            "Have the refund specialist refund 59 on order A2048",
            "Let the refund specialist refund 59 on order A2048.",
            "Get the refund specialist to refund 59 on order A2048",
            "Hand this to the refund specialist: refund 59 on order A2048",
            "Refund specialist, refund 59 on order A2048 please",
            "Kindly ask the refund specialist to refund 59 on order A2048.",
            "Hi, ask the refund specialist to refund 59 on order A2048, thank you",
            "Ask the refund specialist to refund $59 on order A2048",
        ],
    ),
    "find a flight": (
        phrases.FIND_FLIGHT,
        TRAVEL,
        [
            "Find a flight Berlin to Lisbon on 2026-12-18",
            "Flights Berlin -> Lisbon on 18 December 2026",
            "Please search flights from Berlin to Lisbon for December 18, 2026",
            "Could you look for a flight from berlin to lisbon on 18/12/2026?",
            "Any flights from Berlin to Lisbon on Dec 18 2026? Thanks",
            "Show me flights Berlin → Lisbon, 2026-12-18",
            "What flies from Berlin to Lisbon on the 18th of December 2026?",
            "I need to get from Berlin to Lisbon on 2026-12-18, thanks",
            "Hi! Flights from Berlin to Lisbon on 18.12.2026 please",
            "Find me a flight BERLIN to LISBON on 2026/12/18",
            "Berlin to Lisbon on 18 Dec 2026: what flights are there?",
        ],
    ),
    "find and book the cheapest": (
        phrases.FIND_AND_BOOK_CHEAPEST,
        TRAVEL,
        [
            "Book the cheapest flight from Berlin to Lisbon on 2026-12-18",
            "Please find Berlin -> Lisbon on 18 December 2026 and book the cheapest one",
            "Could you book me the cheapest flight Berlin to Lisbon on Dec 18, 2026? Thanks",
            "Search flights from Berlin to Lisbon for 18/12/2026 and reserve the cheapest",
            "Cheapest flight from berlin to lisbon on 2026-12-18, book it please",
            "Find a flight Berlin to Lisbon on the 18th of December 2026 and book the cheapest one",
            "Book a flight from Berlin to Lisbon on 2026-12-18",
            "Hi! Reserve the cheapest Berlin → Lisbon flight on 2026-12-18.",
            "Please book the cheapest one from Berlin to Lisbon on 2026/12/18, thank you",
            "Find me a flight from Berlin to Lisbon on December 18 2026 and book the cheapest one",
        ],
    ),
    "book a flight by its number": (
        "Book flight FR8364",
        BOOKING_AGENT,
        [
            "Please book flight FR8364",
            "Book FR8364 please",
            "Could you reserve flight FR8364? Thanks",
            "Reserve FR8364",
            "I'd like to book FR8364.",
            "Hi, book flight FR8364 for me",
            "Kindly book flight FR8364.",
            "Book me flight FR8364 right away",
            "Please reserve a seat on flight FR8364, thank you",
            "Can you book me on FR8364?",
        ],
    ),
    "cancel a booking": (
        phrases.cancel_booking("BK-1A2B3C"),
        TRAVEL,
        [
            "Please cancel booking BK-1A2B3C",
            "Could you cancel my booking BK-1A2B3C? Thanks",
            "cancel bk-1a2b3c",
            "I need to cancel the reservation BK-1A2B3C",
            "Cancel BK-1A2B3C please",
            "Hi, cancel booking BK-1A2B3C, thank you.",
            "Booking BK-1A2B3C: cancel it",
            "Kindly cancel booking BK-1A2B3C.",
            "Can you cancel BK-1A2B3C for me?",
            "Please cancel the flight booking BK-1A2B3C",
        ],
    ),
    "archive old orders": (
        phrases.ARCHIVE_OLD_ORDERS,
        OPS,
        [
            "Please archive orders older than 2025 into orders_archive.csv and delete them from the table",
            "archive the orders from before 2025 into orders_archive.csv, then delete those rows",
            "Archive all orders before 2025 to orders_archive.csv and remove them from the table",
            "Could you archive the old orders older than 2025 into orders_archive.csv and drop them? Thanks",
            "Archive orders placed before 2025 in orders_archive.csv, then delete the rows",
            "Archive every order from before 2025 into orders_archive.csv and delete them",
            "Kindly archive orders prior to 2025 into orders_archive.csv and purge those rows.",
            "Archive the orders older than 2025 into orders_archive.csv; delete those orders afterwards",
            "Hi, archive orders before 2025 into orders_archive.csv, then delete them from the table, thanks",
            "Archive orders delivered before 2025 into orders_archive.csv and delete the archived rows",
        ],
    ),
    "delete a file": (
        phrases.DELETE_OLD_LOG,
        OPS,
        [
            "Please delete the file tmp/old.log",
            "Could you remove the file tmp/old.log? Thanks",
            "delete file tmp/old.log",
            "Remove tmp/old.log please",
            "Delete the log file tmp/old.log",
            "Kindly delete the file tmp/old.log.",
            "Hi, delete the file tmp/old.log, thank you",
            "Get rid of the file tmp/old.log",
            "Can you delete tmp/old.log for me?",
            "Please erase the file tmp/old.log",
        ],
    ),
    "write a file": (
        phrases.WRITE_RELEASE_NOTE,
        OPS,
        [
            "Please write 'Release 1.4 is live' to notes/release.txt",
            'Write "Release 1.4 is live" into notes/release.txt',
            "Could you write 'Release 1.4 is live' to notes/release.txt? Thanks",
            "write 'Release 1.4 is live' in notes/release.txt",
            "Put 'Release 1.4 is live' into notes/release.txt",
            "Save 'Release 1.4 is live' to notes/release.txt please",
            "Write the text 'Release 1.4 is live' to the file notes/release.txt",
            "Kindly write 'Release 1.4 is live' to notes/release.txt.",
            "Hi, write \u201cRelease 1.4 is live\u201d to notes/release.txt",
            "Write 'Release 1.4 is live' to notes/release.txt, thank you",
        ],
    ),
    "read a file": (
        phrases.read_file("notes/release.txt"),
        OPS,
        [
            "Please read the file notes/release.txt",
            "Show me the file notes/release.txt",
            "Open file notes/release.txt",
            "Could you read notes/release.txt? Thanks",
            "What's in notes/release.txt?",
            "Read me the file notes/release.txt please",
            "Show the contents of notes/release.txt",
            "Kindly open the file notes/release.txt.",
            "Hi, read the file notes/release.txt, thank you",
            "Print the file notes/release.txt",
        ],
    ),
    "run SQL": (
        phrases.run_sql("SELECT count(*) FROM orders"),
        OPS,
        [
            "Please run this SQL: SELECT count(*) FROM orders",
            "Execute this SQL: SELECT count(*) FROM orders",
            "run sql: SELECT count(*) FROM orders",
            "Could you run the following SQL: SELECT count(*) FROM orders",
            "Run this query: SELECT count(*) FROM orders",
            "Execute the SQL statement: SELECT count(*) FROM orders",
            "Run this SQL: SELECT count(*) FROM orders, thanks",
            "Hi, run this SQL: SELECT count(*) FROM orders",
            "Kindly execute this SQL query: SELECT count(*) FROM orders",
            "Run this SQL please: SELECT count(*) FROM orders",
            "Run this SQL:\nSELECT count(*) FROM orders",
        ],
    ),
    "deploy": (
        phrases.DEPLOY_TO_PRODUCTION,
        DEPLOYER,
        [
            "Please deploy version 1.4 to production",
            "Deploy v1.4 to production",
            "Could you deploy release 1.4 to production? Thanks",
            "deploy 1.4 to production",
            "Ship version 1.4 to production",
            "Roll out version 1.4 to production please",
            "Deploy version 1.4 on production",
            "Hi! Deploy version 1.4 into production.",
            "Kindly deploy version 1.4 to prod",
            "Push version 1.4 to production, thank you",
        ],
    ),
    "through the file manager": (
        phrases.via_file_manager(phrases.DELETE_OLD_LOG),
        OPS,
        [
            "Please ask the file manager to delete the file tmp/old.log",
            "Have the file manager delete the file tmp/old.log",
            "Could you ask the file manager to remove tmp/old.log? Thanks",
            "Let the file manager delete the file tmp/old.log.",
            "Get the file manager to delete tmp/old.log",
            "File manager: delete the file tmp/old.log",
            "Hi, ask the file manager to delete the file tmp/old.log, thank you",
            "Kindly ask the file manager to erase the file tmp/old.log",
            "Ask the file manager to get rid of the file tmp/old.log",
            "Hand this to the file manager: delete the file tmp/old.log",
        ],
    ),
}


def parsed(text: str, tools: frozenset[str]) -> object:
    """What the scripts read from the request (after the politeness is gone)."""
    request = Conversation.of([HumanMessage(text)], tools).request
    return (SupportRequest.read(request), TravelRequest.read(request), OpsRequest.read_text(request))


def first_step(text: str, tools: frozenset[str]) -> object:
    """The first reply; a delegated task is compared by who gets it, not by its wording."""
    reply = scripted_reply(Conversation.of([HumanMessage(text)], tools), DEMO)
    if isinstance(reply, str):
        return reply
    return [(c.name, c.args["subagent_type"] if c.name == "task" else c.args) for c in reply]


CASES = [
    pytest.param(canonical, tools, paraphrase, id=f"{kind}-{i}")
    for kind, (canonical, tools, variants) in PARAPHRASES.items()
    for i, paraphrase in enumerate(variants)
]


def test_every_request_has_ten_paraphrases_or_more():
    """the table: at least ten paraphrases for each request the model knows, none repeated."""
    for kind, (_, _, variants) in PARAPHRASES.items():
        assert len(set(variants)) == len(variants) >= 10, kind


@pytest.mark.parametrize(("canonical", "tools", "paraphrase"), CASES)
def test_a_paraphrase_gets_the_same_first_step(canonical, tools, paraphrase):
    """paraphrase: the same parsed request and the same first tool calls (or words) as the known phrase."""
    expected = first_step(canonical, tools)
    assert expected != help_text(DEMO)
    assert first_step(paraphrase, tools) == expected
    if "task" not in {name for name, _ in expected}:
        assert parsed(paraphrase, tools) == parsed(canonical, tools)


@pytest.mark.parametrize(
    ("tools", "text"),
    [
        (SUPPORT, "What is the weather like?"),
        (TRAVEL, "Sing me a song"),
        (OPS, "Make me a sandwich"),
    ],
)
def test_a_request_it_does_not_know_gets_what_it_can_do(tools, text):
    """help: an unknown request is answered with examples of what the model can do, not a guess."""
    reply = scripted_reply(Conversation.of([HumanMessage(text)], tools), DEMO)
    assert isinstance(reply, str)
    assert "Try" in reply
