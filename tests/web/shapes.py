"""Every interrupt shape the server emits, one entry each: how a run makes it, who decides, what that does.

`SHAPES` is the matrix's rows (tests/web/test_shapes_matrix.py tries each on every client): a shape
the layer adds is one more entry here. Each is made by real runs of the demo agents on the matrix's
servers, its people in teams (`TEAM_USERS`), the demo's billing MCP server beside each; `asks` says,
per card (or action of a batch), who may press its buttons and what everyone else reads; `decide`
presses them in Chromium as one of those people, and `effect` asserts what that did to the business
database, once.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from playwright.async_api import expect

from agents.offline import phrases
from hitl.policy.groups import who
from tests.conftest import add_order
from tests.server.helpers import APPROVE, decisions, only_pending, start
from tests.server.mcp_helpers import new_invoice

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from langgraph_sdk.client import LangGraphClient

    from tests.devserver import DevServer
    from tests.web.reviewer_app import ReviewerApp, Tab

PEOPLE = ("requester1", "reviewer1", "supervisor1", "finance1", "lead1", "lead2", "sre1")
"""Who looks at every shape: each role, and a member of each team (lead1 is in finance and its leads)."""
STAFF = frozenset(PEOPLE) - {"requester1"}
FINANCE = frozenset({"finance1", "lead1"})
LEADS = frozenset({"lead1", "lead2"})
WAIT_S = 60


@dataclass(frozen=True)
class Where:
    """A matrix server, its people's API clients and the reviewer app it serves."""

    server: DevServer
    client_as: Callable[[str], LangGraphClient]
    app: ReviewerApp


@dataclass
class Made:
    """One shape made on its server: its thread and what its decision will act on."""

    thread_id: str
    agent: str
    refs: dict[str, Any] = field(default_factory=dict)
    owner: str = "requester1"
    """Who started the thread: with the staff, the only one who may read it."""


@dataclass(frozen=True)
class Ask:
    """One card (or one action of a batch) of a shape: who decides it, and who may press its buttons now."""

    subject: str
    decider: str
    """The group that decides it now (an escalation's), or `owner`."""
    people: frozenset[str]
    """Of `PEOPLE`, who may press its buttons: in `decider`, not its asker, not an approver of its quorum."""

    @property
    def words(self) -> str:
        """What everyone else reads on its card (the web app's words)."""
        if self.decider == "owner":
            return "requester1, whose thread this is, answers this"
        said = who(self.decider)
        return f"{said[0].upper()}{said[1:]} decides this"


@dataclass(frozen=True)
class Shape:
    """A row of the matrix: a shape of interrupt, made by real runs, and how a decider answers it."""

    name: str
    by: str
    """Who presses its buttons in Chromium (one of its asks' `people`)."""
    server: str
    """`teams` (long deadlines) or `escalating` (refunds escalate to finance-leads after 3 s)."""
    kind: str | None
    """The interrupt's kind (`hitl.contracts.asks`), or None when nothing waits (a withdrawn call)."""
    make: Callable[[Where], Awaitable[Made]]
    asks: tuple[Ask, ...]
    decide: Callable[[Tab, Made, Where], Awaitable[None]]
    effect: Callable[[Where, Made], Awaitable[bool]]
    """Polled until true after `decide`: the business database (or, for an answer that writes none, the
    layer's trail) shows the decision's effect, once."""
    says: str = ""
    """What its card says to everyone: the tier that applies, a quorum's progress, where it escalates."""
    looked_at_by: tuple[str, ...] = ()
    """Who else opens it beyond `viewers`' defaults (a quorum's first approver, say)."""
    printed: tuple[str, ...] = ()
    """What `hitl show` prints of it beyond what is asked and who decides (an MCP question's fields)."""


ROLES = ("requester1", "reviewer1", "supervisor1")
TEAM_PEOPLE = ("finance1", "lead1", "lead2", "sre1")


def viewers(shape: Shape) -> tuple[str, ...]:
    """Who opens `shape` in Chromium: each role, a person who may decide each ask, a team member who may not.

    And whoever `looked_at_by` adds. Every other person's view would repeat one of these.
    """
    chosen = set(ROLES) | set(shape.looked_at_by)
    for ask in shape.asks:
        chosen |= set(sorted(ask.people)[:1])
        chosen |= {next((p for p in TEAM_PEOPLE if p not in ask.people), "sre1")}
    return tuple(p for p in PEOPLE if p in chosen)


async def until(check: Callable[[], Any], what: str) -> Any:
    """Poll `check` (a function, or a coroutine function) until it is truthy, or fail naming `what`."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = check()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found
        await asyncio.sleep(0.2)
    msg = f"waited {WAIT_S} s for {what}"
    raise AssertionError(msg)


def unit(tab: Tab, subject: str):
    """The card of `subject`, or its action's card inside a batch."""
    return tab.page.locator(
        f'[data-testid="action-card"][data-tool="{subject}"], '
        f'[data-testid="interrupt-card"][data-subject="{subject}"]:not([data-kind="batched"])'
    )


async def approve(tab: Tab, subject: str) -> None:
    await unit(tab, subject).get_by_test_id("decision-approve").click()


async def respond(tab: Tab, subject: str, text: str) -> None:
    card = unit(tab, subject)
    await card.get_by_test_id("decision-respond").click()
    await card.get_by_test_id("respond-message").fill(text)
    await card.get_by_test_id("respond-confirm").click()


def refunded(server: DevServer, made: Made) -> list[float]:
    return [r["amount"] for r in server.services.payments.refunds_for(made.refs["order_id"])]


def refund_maker(
    amount: float, *, paid: float | None = None, text: Callable[[str], str] = phrases.refund_in_full
) -> Callable[[Where], Awaitable[Made]]:
    """requester1 asks for a refund of `amount` on a fresh order (paid `amount` unless `paid`) by `text`."""

    async def make(where: Where) -> Made:
        order_id = add_order(where.server.services, paid or amount)
        thread_id, _ = await start(where.client_as("requester1"), text(order_id))
        return Made(thread_id, "support", {"order_id": order_id, "amount": amount})

    return make


async def refunded_once(where: Where, made: Made) -> bool:
    return refunded(where.server, made) == [made.refs["amount"]]


async def finance_edits_above_its_tier_then_approves(tab: Tab, made: Made, where: Where) -> None:
    """From the inbox row: an edit to 600 is refused in the server's words on the card; approve pays 300."""
    await tab.open_inbox()
    await tab.inbox_rows(made.thread_id).click()
    refund = unit(tab, "issue_refund")
    await refund.get_by_test_id("decision-edit").click()
    await refund.get_by_label("Amount").fill("600")
    await refund.get_by_test_id("edit-save").click()
    card = tab.page.get_by_test_id("interrupt-card")
    await expect(card.get_by_test_id("card-error")).to_contain_text("needs someone in finance-leads")
    assert refunded(where.server, made) == [], "a refused edit refunded something"
    await approve(tab, "issue_refund")


async def quorum_half_done(where: Where) -> Made:
    """A 2,400 refund lead1 approved with LangChain's own resume (1 of 2): it waits for another lead."""
    made = await refund_maker(2400)(where)
    await where.client_as("lead1").runs.wait(made.thread_id, "support", command=decisions(APPROVE))
    assert refunded(where.server, made) == [], "one approval of two refunded"
    return made


async def withdrawn(where: Where) -> Made:
    """A 300 refund its owner took back (`POST /threads/{id}/withdraw`): nothing waits or is refunded."""
    made = await refund_maker(300)(where)
    answer = await where.client_as("requester1").http.post(
        f"/threads/{made.thread_id}/withdraw", json={"reason": "not needed"}
    )
    assert [r["decision"] for r in answer["withdrawn"]] == ["withdrawn"], answer
    return made


async def escalated(where: Where) -> Made:
    """A 300 refund finance left waiting past its 3 s: the watcher sends it to the finance leads."""
    made = await refund_maker(300)(where)

    async def row() -> list[dict[str, Any]]:
        page = await where.client_as("lead1").http.get("/inbox", params={"limit": 500})
        return [r for r in page["items"] if r["thread_id"] == made.thread_id and r["escalated"]]

    deadline = time.monotonic() + WAIT_S
    while not await row():
        assert time.monotonic() < deadline, "the refund was not escalated"
        await asyncio.sleep(0.3)
    return made


async def ops_write(where: Where) -> Made:
    """supervisor1 has the ops agent write a workspace file (per-call mode)."""
    name = f"notes/{uuid.uuid4().hex[:8]}.txt"
    said = phrases.write_file("Release 1.4 is live", name)
    thread_id, _ = await start(where.client_as("supervisor1"), said, "ops")
    return Made(thread_id, "ops", {"path": where.server.log.parent / "workspace" / name}, "supervisor1")


async def written_once(_where: Where, made: Made) -> bool:
    path = made.refs["path"]
    return path.exists() and path.read_text() == "Release 1.4 is live\n"


async def email_customer(where: Where) -> Made:
    order_id = add_order(where.server.services, 120)
    thread_id, _ = await start(where.client_as("requester1"), phrases.email_customer(order_id))
    return Made(thread_id, "support", {"to": f"{order_id.lower()}@example.com"})


async def mailed_once(where: Where, made: Made) -> bool:
    return len(where.server.services.outbox.sent_to(made.refs["to"])) == 1


async def question(where: Where) -> Made:
    thread_id, _ = await start(where.client_as("requester1"), phrases.REFUND_WITHOUT_ORDER)
    return Made(thread_id, "support")


async def flight_form(where: Where) -> Made:
    thread_id, thread = await start(where.client_as("requester1"), phrases.FIND_AND_BOOK_CHEAPEST, "travel")
    return Made(thread_id, "travel", {"call": only_pending(thread)["value"]["tool_call_id"]})


async def sign_off(where: Where) -> Made:
    thread_id, _ = await start(where.client_as("supervisor1"), phrases.deploy("1.4"), "ops")
    return Made(thread_id, "ops", owner="supervisor1")


async def book_it(tab: Tab, _made: Made, _where: Where) -> None:
    form = unit(tab, "flight-booking")
    await form.get_by_role("radio", name="Book it").check()
    await form.get_by_test_id("form-submit").click()


async def booked_once(where: Where, made: Made) -> bool:
    booked = where.server.services.bookings.for_flight("FR8364")
    return [b["tool_call_id"] for b in booked].count(made.refs["call"]) == 1


async def answer_then_refund(tab: Tab, made: Made, where: Where) -> None:
    """The owner answers the question in their tab, finance1 approves the refund in theirs: one resume."""
    await respond(tab, "ask_user", "Refund it, please")
    finance = await where.app.sign_in("finance1")
    await finance.open(made.thread_id, made.agent)
    await approve(finance, "issue_refund")


def trail_says(decision: str, by: str) -> Callable[[Where, Made], Awaitable[bool]]:
    """Exactly one accepted `decision` by `by` on the layer's trail (an answer with no business row)."""

    async def check(where: Where, made: Made) -> bool:
        trail = (await where.client_as("supervisor1").http.get(f"/audit/{made.thread_id}"))["records"]
        accepted = [r["reviewer"] for r in trail if r["outcome"] == "accepted" and r["decision"] == decision]
        return accepted == [by]

    return check


def pressing(*steps: Callable[[Tab], Awaitable[None]]) -> Callable[[Tab, Made, Where], Awaitable[None]]:
    """A decision that is only clicks on the decider's own tab."""

    async def decide(tab: Tab, _made: Made, _where: Where) -> None:
        for step in steps:
            await step(tab)

    return decide


CREDIT_NOTE = "billing.issue_credit_note"
"""Billing's tool that asks mid-call (`services/billing_mcp.py`): why, then to confirm the amount."""
CREDIT, INVOICED, REASON = 30, 200, "Arrived a week late"


async def billing_asks_why(where: Where) -> Made:
    """requester1 asks for a credit note of 30 on a new invoice; reviewer1 approves it; billing asks why.

    The question is an `mcp_elicitation` from the billing MCP server beside the matrix's server, to
    whoever its declaration names (`BILLING_ANSWERED_BY`: the thread's owner, or a group).
    """
    invoice = new_invoice(where.server.services, INVOICED)
    thread_id, _ = await start(where.client_as("requester1"), phrases.credit_invoice(CREDIT, invoice))
    await where.client_as("reviewer1").runs.wait(thread_id, "support", command=decisions(APPROVE))
    return Made(thread_id, "support", {"invoice": invoice})


async def answer_why_then_confirm(tab: Tab, made: Made, _where: Where) -> None:
    """Billing's two questions on the card, one after the other: the reason, then the amount confirmed.

    The second is answered as soon as its card shows, from the stream, before the run that asked has
    ended: the web app sends it again while the engine does not hold it yet (`isUnsettledInterrupt`).
    """
    why = unit(tab, CREDIT_NOTE)
    await why.get_by_label("Reason").fill(REASON)
    await why.get_by_test_id("mcp-accept").click()
    confirm = unit(tab, CREDIT_NOTE)
    asked = f"Credit {CREDIT} on {made.refs['invoice']} (invoice {INVOICED})?"
    await expect(confirm.get_by_test_id("mcp-question")).to_have_text(asked)
    await confirm.get_by_label("Confirm the amount").check()
    await confirm.get_by_test_id("mcp-accept").click()


async def credited_once(where: Where, made: Made) -> bool:
    notes = where.server.services.invoices.credit_notes(made.refs["invoice"])
    return [(n["amount"], n["reason"]) for n in notes] == [(CREDIT, REASON)]


BILLINGS_FIELDS = ("reason  text, required, 3 to 500 characters",)
"""What `hitl show` prints of billing's first question: its one field, as billing's schema asks it."""


async def nothing_to_press(_tab: Tab, _made: Made, _where: Where) -> None:
    return


async def nothing_refunded(where: Where, made: Made) -> bool:
    return refunded(where.server, made) == []


SHAPES: tuple[Shape, ...] = (
    Shape(
        "batched, decided by a group (finance)",
        "finance1",
        "teams",
        "batched",
        refund_maker(300, paid=900, text=lambda order_id: phrases.refund_amount(300, order_id)),
        (Ask("issue_refund", "finance", FINANCE),),
        finance_edits_above_its_tier_then_approves,
        refunded_once,
        says="then it goes to someone in finance-leads",
    ),
    Shape(
        "batched, the tier above 500 (finance-leads)",
        "lead2",
        "teams",
        "batched",
        refund_maker(600),
        (Ask("issue_refund", "finance-leads", LEADS),),
        pressing(lambda tab: approve(tab, "issue_refund")),
        refunded_once,
        says="needs finance-leads",
    ),
    Shape(
        "batched, a quorum half done (1 of 2 finance leads)",
        "lead2",
        "teams",
        "batched",
        quorum_half_done,
        (Ask("issue_refund", "finance-leads", frozenset({"lead2"})),),
        pressing(lambda tab: approve(tab, "issue_refund")),
        refunded_once,
        says="1 of 2 approvals · approved by lead1",
        looked_at_by=("lead1",),
    ),
    Shape(
        "batched, decided by a role (reviewer)",
        "reviewer1",
        "teams",
        "batched",
        email_customer,
        (Ask("send_email", "reviewer", STAFF),),
        pressing(lambda tab: approve(tab, "send_email")),
        mailed_once,
    ),
    Shape(
        "a question (respond only), answered by the thread's owner",
        "requester1",
        "teams",
        "batched",
        question,
        (Ask("ask_user", "owner", frozenset({"requester1"})),),
        pressing(lambda tab: respond(tab, "ask_user", "I do not have the order id at hand")),
        trail_says("respond", "requester1"),
    ),
    Shape(
        "several deciders on one thread (finance's refund, the owner's question)",
        "requester1",
        "teams",
        "tool_approval",
        refund_maker(300, text=phrases.refund_and_ask),
        (Ask("issue_refund", "finance", FINANCE), Ask("ask_user", "owner", frozenset({"requester1"}))),
        answer_then_refund,
        refunded_once,
    ),
    Shape(
        "per call, decided by a group (sre)",
        "sre1",
        "teams",
        "tool_approval",
        ops_write,
        (Ask("write_file", "sre", frozenset({"sre1"})),),
        pressing(lambda tab: approve(tab, "write_file")),
        written_once,
    ),
    Shape(
        "a form, answered by the thread's owner",
        "requester1",
        "teams",
        "form",
        flight_form,
        (Ask("flight-booking", "owner", frozenset({"requester1"})),),
        book_it,
        booked_once,
    ),
    Shape(
        "a sign-off, decided by a reviewer (not its asker)",
        "reviewer1",
        "teams",
        "approval_request",
        sign_off,
        (Ask("Deploy version 1.4 to production", "reviewer", STAFF - {"supervisor1"}),),
        pressing(lambda tab: tab.page.get_by_test_id("approval-approve").click()),
        trail_says("approve", "reviewer1"),
    ),
    Shape(
        "a withdrawn call (nothing waits)",
        "requester1",
        "teams",
        None,
        withdrawn,
        (),
        nothing_to_press,
        nothing_refunded,
    ),
    Shape(
        "escalated to a group (finance-leads)",
        "lead1",
        "escalating",
        "batched",
        escalated,
        (Ask("issue_refund", "finance-leads", LEADS),),
        pressing(lambda tab: approve(tab, "issue_refund")),
        refunded_once,
        says="escalated to someone in finance-leads",
    ),
    Shape(
        "per call, decided by a role (reviewer)",
        "reviewer1",
        "escalating",
        "tool_approval",
        ops_write,
        (Ask("write_file", "reviewer", STAFF - {"supervisor1"}),),
        pressing(lambda tab: approve(tab, "write_file")),
        written_once,
    ),
    Shape(
        "an MCP server's question, answered by the thread's owner",
        "requester1",
        "escalating",
        "mcp_elicitation",
        billing_asks_why,
        (Ask(CREDIT_NOTE, "owner", frozenset({"requester1"})),),
        answer_why_then_confirm,
        credited_once,
        printed=BILLINGS_FIELDS,
    ),
    Shape(
        "an MCP server's question given to a group (finance)",
        "finance1",
        "teams",
        "mcp_elicitation",
        billing_asks_why,
        (Ask(CREDIT_NOTE, "finance", FINANCE),),
        answer_why_then_confirm,
        credited_once,
        printed=BILLINGS_FIELDS,
    ),
)
"""The matrix's rows; the `teams` server gives billing's questions to finance (`BILLING_ANSWERED_BY`)."""
