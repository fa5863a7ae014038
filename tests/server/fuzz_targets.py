"""Pending approvals of the three agents, the payloads fuzzed at them, and the invariants checked.

A `Target` keeps one thread waiting on an approval of its agent (`support`: a batched refund +
e-mail, `travel`: the flight-booking form, `ops`: three per-call interrupts) and runs one
case per payload: send it as a resume, then check the server either refused it (the same
interrupts still wait, nothing ran) or accepted it (no error, the interrupts it answered are
gone, and every gated call acted exactly as its decision says). After an accepted case the
next one gets a fresh pending thread, started ahead of time in the background.

Payloads are drawn with `Slot`s where they need something only the thread knows (an
interrupt id, the order id, a workspace path); `resolve` fills them in just before sending.
"""

from __future__ import annotations

import uuid
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import httpx
import pytest
from hypothesis import strategies as st

from agents.offline import phrases
from server.http.outgoing import tls
from services.orders import Order
from tests.conftest import add_order
from tests.devserver import DEV_TOKENS

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from services.registry import Services
    from tests.devserver import DevServer

REFUSALS = {413, 422}
"""What a refused resume may get: too large, or malformed / invalid / unknown interrupt id."""
AHEAD = 2
"""Pending threads each target keeps starting in the background, for the cases after an accepted one."""
UNANSWERABLE = (KeyError, TypeError, IndexError, AttributeError, ValueError)


# --- payloads ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """A placeholder filled in from the thread a case runs on: an interrupt id, an order id, a path."""

    name: str

    def __repr__(self) -> str:
        """`<name>`, so a falsifying example reads as the payload it sends."""
        return f"<{self.name}>"


def resolve(payload: Any, names: dict[str, Any]) -> Any:
    """`payload` with every `Slot` (key or value, at any depth) replaced by what it names."""
    if isinstance(payload, Slot):
        return names[payload.name]
    if isinstance(payload, dict):
        return {resolve(k, names): resolve(v, names) for k, v in payload.items()}
    if isinstance(payload, list):
        return [resolve(v, names) for v in payload]
    return payload


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
unknown_ids = st.text(alphabet="0123456789abcdef", min_size=32, max_size=32) | st.just(Slot("stale"))
"""Interrupt ids this thread does not have: made up, or one from an earlier thread of the agent."""
typos = st.sampled_from(["aprove", "", "APPROVE", "accept", "cancel", None, 1])
messages = st.none() | st.text(max_size=20) | st.sampled_from([5, [], {"text": "x"}])
"""A decision's `message`: absent (None), text, or not text."""
plain_text = st.text(alphabet="abcdefghij XYZ,.;0123456789-éß€", max_size=20)


@dataclass(frozen=True)
class Tool:
    """A gated tool as the fuzzer sees it: its decisions, and the args an edit may send it."""

    name: str
    allowed: tuple[str, ...]
    fields: dict[str, st.SearchStrategy[Any]]


@st.composite
def edit_args(draw: st.DrawFn, tool: Tool) -> Any:
    """Every field (each value right or wrong), now and then one missing, one extra, or junk."""
    args = draw(st.fixed_dictionaries(tool.fields))
    change = draw(st.sampled_from(["none", "none", "drop", "extra", "junk"]))
    if change == "drop":
        args.pop(draw(st.sampled_from(sorted(args))))
    elif change == "extra":
        args[draw(st.sampled_from(["tool_call_id", "note", ""]))] = draw(json_values)
    elif change == "junk":
        return draw(json_values)
    return args


@st.composite
def decision(draw: st.DrawFn, tool: Tool) -> Any:
    """One decision for `tool`: allowed or not, well-formed or not."""
    kind = draw(st.sampled_from(["approve", "reject", "respond", "edit", "edit", "typo", "broken"]))
    if kind in {"reject", "respond"}:
        message = draw(messages)
        return {"type": kind} if message is None else {"type": kind, "message": message}
    if kind == "edit":
        name = draw(st.sampled_from([tool.name, tool.name, tool.name, "send_email", "delete_file"]))
        return {"type": "edit", "edited_action": {"name": name, "args": draw(edit_args(tool))}}
    if kind == "typo":
        return {"type": draw(typos)}
    if kind == "broken":
        return draw(
            st.sampled_from([{"type": "edit"}, {"type": "approve", "note": "fine"}, {"approve": True}])
            | st.fixed_dictionaries({"type": st.just("edit"), "edited_action": json_values})
            | json_values
        )
    return {"type": "approve"}


def by_id(answers: dict[Any, Any], draw: st.DrawFn) -> Any:
    """Per-call answers `{Slot(id): answer}`, now and then with an unknown id, or not by id at all."""
    change = draw(st.sampled_from(["none", "none", "none", "add unknown", "replace by unknown", "unwrap"]))
    if change == "add unknown":
        answers[draw(unknown_ids)] = draw(st.sampled_from([{"type": "approve"}, {"decision": "approve"}]))
    elif change == "replace by unknown":
        first = next(iter(answers))
        answers[draw(unknown_ids)] = answers.pop(first)
    elif change == "unwrap":
        return next(iter(answers.values()))
    return answers


# --- the thread a case runs on ------------------------------------------------------------------


@dataclass
class Waiting:
    """A thread waiting on its agent's approval(s), as `threads.get_state` showed them when it paused."""

    thread_id: str
    interrupts: dict[str, dict[str, Any]]
    names: dict[str, Any]
    pending: set[str] = field(init=False)

    def __post_init__(self) -> None:
        """Everything it paused on is pending."""
        self.pending = set(self.interrupts)

    def by_tool(self, tool: str) -> dict[str, Any]:
        """The per-call interrupt of `tool`."""
        [found] = [i for i in self.interrupts.values() if i["value"].get("name") == tool]
        return found


READER = "reviewer1"
"""Who reads the fuzzed threads' status and state (staff read every thread)."""


def headers(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {DEV_TOKENS[user]}"}


def waiting_on(http: httpx.Client, thread_id: str) -> dict[str, dict[str, Any]]:
    """The interrupts a thread really waits on, from its state (its record can lag for per-call ones)."""
    state = http.get(f"/threads/{thread_id}/state", headers=headers(READER))
    state.raise_for_status()
    return {i["id"]: i for task in state.json()["tasks"] for i in task["interrupts"]}


def answered(payload: Any, pending: set[str]) -> dict[str, Any]:
    """Which pending interrupts an accepted `payload` answers, and with what: by id, or the only one."""
    if isinstance(payload, dict) and payload and set(payload) <= pending:
        return dict(payload)
    if len(pending) == 1:
        return {next(iter(pending)): payload}
    msg = f"{payload!r} answers none of {sorted(pending)}"
    raise ValueError(msg)


def rows(services: Services, table: str, tool_call_id: str) -> list[dict[str, Any]]:
    """What one tool call wrote to a business table."""
    return services.records.read(table, [{"column": "tool_call_id", "op": "=", "value": tool_call_id}])


def edited_args(edit: dict[str, Any], **types: type) -> dict[str, Any]:
    """The args of an accepted edit; each named one must have its type, or the server should have refused."""
    args = edit["edited_action"]["args"]
    wrong = {
        name: args.get(name)
        for name, kind in types.items()
        if not isinstance(args.get(name), int | float if kind is float else kind)
        or isinstance(args.get(name), bool)
    }
    if wrong:
        pytest.fail(f"accepted an edit whose args do not fit the tool's schema, so it cannot run: {wrong}")
    return args


class Target:
    """One agent's pending approvals under fuzzing: starts threads, runs cases, checks invariants.

    Not a dataclass: Hypothesis prints a test's arguments field by field, and these grow.
    """

    agent: ClassVar[str]
    answerer: ClassVar[str]
    """The dev user who answers this agent's approvals."""
    owner: ClassVar[str] = "requester1"
    """The dev user who starts (owns) the fuzzed threads."""

    def __init__(
        self, server: DevServer, services: Services, http: httpx.Client, pool: ThreadPoolExecutor
    ) -> None:
        """Fuzz `server`'s agent, checking side effects in `services`, starting spares on `pool`."""
        self.server, self.services, self.http, self.pool = server, services, http, pool
        self.cases = self.refused = self.accepted = 0
        self.current: Waiting | None = None
        self.left_pending: list[Waiting] = []
        """Threads an accepted partial answer left waiting; the closing test answers them."""
        self.stale = "f" * 32
        """An interrupt id of an earlier thread, for `Slot("stale")`."""
        self.spares: deque[Future[Waiting]] = deque()

    def __repr__(self) -> str:
        """Short, for Hypothesis' report of a failing case."""
        return f"<{self.agent}: {self.cases} cases>"

    # what each agent defines

    def start(self, http: httpx.Client) -> Waiting:
        """Start a thread that waits on this agent's approval(s)."""
        raise NotImplementedError

    def effects(self, thread: Waiting) -> dict[str, Any]:
        """What the thread's gated calls have done so far, observed in the database and workspace."""
        raise NotImplementedError

    def expect(self, thread: Waiting, answers: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
        """`effects` after the server accepted `answers` (interrupt id → answer), given `before`."""
        raise NotImplementedError

    def correct(self, thread: Waiting) -> Any:
        """A right answer to everything the thread waits on."""
        raise NotImplementedError

    # shared

    def open(self, http: httpx.Client, text: str, names: dict[str, Any]) -> Waiting:
        """A new thread of this agent, owned by `self.owner`, after `text` made it pause."""
        owner = headers(self.owner)
        thread_id = http.post("/threads", json={}, headers=owner).json()["thread_id"]
        http.post(
            f"/threads/{thread_id}/runs/wait",
            json={"assistant_id": self.agent, "input": {"messages": [{"role": "user", "content": text}]}},
            headers=owner,
        ).raise_for_status()
        return Waiting(thread_id, waiting_on(http, thread_id), names)

    def _start_spare(self) -> Waiting:
        return self.start(self.http)  # the shared client: making one costs ~20 ms of CPU (its TLS context)

    def take(self) -> Waiting:
        """A fresh pending thread: the oldest one started ahead, topping the spares up again."""
        while len(self.spares) < AHEAD + 1:
            self.spares.append(self.pool.submit(self._start_spare))
        return self.spares.popleft().result()

    def case(self, plan: Any) -> None:
        """One fuzzed resume on the current pending thread; the next case gets a fresh one if accepted.

        A thread stays current only after a clean refusal, so a failing case replays (and
        shrinks) on a fresh thread, as it first ran.
        """
        thread = self.current or self.take()
        self.current = None
        self.cases += 1
        if not self.run(thread, resolve(plan, {**thread.names, "stale": self.stale})):
            self.refused += 1
            self.current = thread
            return
        self.accepted += 1
        self.stale = next(iter(thread.interrupts))
        if thread.pending:
            self.left_pending.append(thread)

    def run(self, thread: Waiting, payload: Any) -> bool:
        """Send `payload` as the resume and check the invariants; whether the server accepted it."""
        before = self.effects(thread)
        reply = self.http.post(
            f"/threads/{thread.thread_id}/runs/wait",
            json={"assistant_id": self.agent, "command": {"resume": payload}},
            headers=headers(self.answerer),
        )
        status = self.http.get(f"/threads/{thread.thread_id}", headers=headers(READER)).json()["status"]
        still = set(waiting_on(self.http, thread.thread_id))
        said = f"{self.agent} resume {payload!r} → {reply.status_code} {reply.text[:500]}"
        if reply.status_code >= 400:
            assert reply.status_code in REFUSALS, said
            assert reply.json().get("detail"), said
            assert status == "interrupted", (said, status)
            assert still == thread.pending, (said, still)
            assert self.effects(thread) == before, said
            return False
        assert status != "error", (said, status)
        try:
            answers = answered(payload, thread.pending)
            expected = self.expect(thread, answers, before)
        except UNANSWERABLE as error:
            pytest.fail(f"accepted, yet it answers nothing we can read ({error!r}): {said}")
        thread.pending -= set(answers)
        assert still == thread.pending, (said, still)
        assert status == ("interrupted" if thread.pending else "idle"), (said, status)
        assert self.effects(thread) == expected, said
        return True


# --- support: a batched refund + e-mail, answered by a supervisor ----------------------------


REFUND = Tool(
    "issue_refund",
    ("approve", "edit", "reject"),
    {
        "order_id": st.sampled_from([Slot("order"), Slot("order"), "A0000", 7]),
        "amount": st.sampled_from([240, 12.5, 12.5, 0, -5, 1000, "ten", None, True]),
        "reason": st.sampled_from(["Fuzzed", "", 3]),
    },
)
EMAIL = Tool(
    "send_email",
    ("approve", "reject"),
    {"to": st.just("someone@example.com"), "subject": plain_text, "body": plain_text},
)


@st.composite
def support_answers(draw: st.DrawFn) -> Any:
    """A valid `{"decisions": [refund, e-mail]}` with a decision, the list or the wrapping fuzzed."""
    plain = st.sampled_from([{"type": "approve"}, {"type": "reject"}])
    answer = {"decisions": [draw(plain), draw(plain)]}
    fuzzed = draw(st.sampled_from(["refund", "e-mail", "both", "list", "wrapping"]))
    if fuzzed in {"refund", "both"}:
        answer["decisions"][0] = draw(decision(REFUND))
    if fuzzed in {"e-mail", "both"}:
        answer["decisions"][1] = draw(decision(EMAIL))
    if fuzzed == "list":
        return changed_list(answer, draw)
    return by_id({Slot("batch"): answer}, draw) if fuzzed == "wrapping" else answer


def changed_list(answer: dict[str, Any], draw: st.DrawFn) -> Any:
    """The batched answer with a decision dropped, one too many, the two swapped, or no list at all."""
    decisions = answer["decisions"]
    change = draw(st.sampled_from(["drop", "add", "swap", "junk", "bare list"]))
    if change == "drop":
        decisions.pop(draw(st.integers(0, 1)))
    elif change == "add":
        decisions.append(draw(decision(EMAIL)))
    elif change == "swap":
        decisions.reverse()
    elif change == "junk":
        answer["decisions"] = draw(json_values)
    return decisions if change == "bare list" else answer


class SupportTarget(Target):
    """`support`: one batched interrupt for a refund of 240 and an e-mail to the customer."""

    agent = "support"
    answerer = "supervisor1"

    def start(self, http: httpx.Client) -> Waiting:
        order_id = add_order(self.services, 240)
        thread = self.open(http, phrases.refund_and_email(order_id), {"order": order_id})
        [batch] = thread.interrupts
        calls = thread.interrupts[batch]["value"]["action_requests"]
        assert [c["name"] for c in calls] == ["issue_refund", "send_email"], calls
        thread.names.update(batch=batch, refund=calls[0]["tool_call_id"], email=calls[1]["tool_call_id"])
        return thread

    def effects(self, thread: Waiting) -> dict[str, Any]:
        return {
            "refunds": [r["amount"] for r in rows(self.services, "refunds", thread.names["refund"])],
            "emails": len(rows(self.services, "outbox", thread.names["email"])),
            "order refunds": len(self.services.payments.refunds_for(thread.names["order"])),
            "customer emails": len(
                self.services.outbox.sent_to(f"{thread.names['order'].lower()}@example.com")
            ),
        }

    def expect(self, thread: Waiting, answers: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
        [answer] = answers.values()
        refund, email = answer["decisions"]
        amount = refund_amount(refund, thread.names["order"])
        return {
            **before,
            "refunds": [amount] if amount else [],
            "emails": int(email["type"] == "approve"),
            "order refunds": int(bool(amount)),
            "customer emails": int(email["type"] == "approve"),
        }

    def correct(self, thread: Waiting) -> Any:
        answer = {"decisions": [{"type": "approve"}, {"type": "reject", "message": "Not yet"}]}
        return {thread.names["batch"]: answer}


def refund_amount(refund: dict[str, Any], order_id: str) -> float:
    """What an accepted refund decision pays out on the order of 240: 0 for none."""
    if refund["type"] == "approve":
        return 240.0
    if refund["type"] != "edit":
        return 0.0
    args = edited_args(refund, order_id=str, amount=float, reason=str)
    if args["order_id"] == order_id and 0 < args["amount"] <= 240:
        return float(args["amount"])
    return 0.0  # another order, or more than was paid: the payment service refuses it


# --- travel: the flight-booking form, answered by the thread's owner ---------------------------


SEATS = ["economy", "premium", "business"]
form_answers = st.fixed_dictionaries(
    {"decision": st.sampled_from(["approve", "cancel"])},
    optional={"seat_class": st.sampled_from(SEATS), "insurance": st.booleans()},
)


@st.composite
def travel_answers(draw: st.DrawFn) -> Any:
    """A form answer, mutated (seat class, missing field, types, decision, extras), bare or by id."""
    answer = draw(form_answers)
    change = draw(
        st.sampled_from(["none", "none", "seat", "missing", "type", "decision", "extra", "tool approval"])
    )
    if change == "seat":
        answer["seat_class"] = draw(st.sampled_from(["first", "Economy", "", None, 3, ["economy"]]))
    elif change == "missing":
        answer.pop(draw(st.sampled_from(sorted(answer))))
    elif change == "type":
        key = draw(st.sampled_from(["insurance", "decision"]))
        answer[key] = draw(st.sampled_from(["yes", 1, 0, None, "true", True, [True]]))
    elif change == "decision":
        answer["decision"] = draw(st.sampled_from(["reject", "edit", "APPROVE", "approved", "", "respond"]))
    elif change == "extra":
        answer[draw(st.sampled_from(["price", "flight_id", "type", "note"]))] = draw(json_values)
    elif change == "tool approval":
        answer = draw(st.sampled_from([{"type": "approve"}, {"decisions": [{"type": "approve"}]}]))
    return by_id({Slot("form"): answer}, draw) if draw(st.booleans()) else answer


class TravelTarget(Target):
    """`travel`: booking_agent's flight-booking form for the cheapest Berlin-Lisbon flight."""

    agent = "travel"
    answerer = "requester1"

    def start(self, http: httpx.Client) -> Waiting:
        thread = self.open(http, phrases.FIND_AND_BOOK_CHEAPEST, {})
        [(form, interrupt)] = thread.interrupts.items()
        assert interrupt["value"]["form"] == "flight-booking", interrupt
        value = interrupt["value"]
        thread.names.update(form=form, call=value["tool_call_id"], flight=value["context"]["flight_id"])
        return thread

    def effects(self, thread: Waiting) -> dict[str, Any]:
        booked = rows(self.services, "bookings", thread.names["call"])
        return {
            "bookings": [(b["flight_id"], b["seat_class"], b["insurance"]) for b in booked],
            "flight bookings": len(self.services.bookings.for_flight(thread.names["flight"])),
        }

    def expect(self, thread: Waiting, answers: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
        [answer] = answers.values()
        if answer["decision"] == "cancel":
            return before
        assert answer["decision"] == "approve", answer
        booking = (
            thread.names["flight"],
            answer.get("seat_class", "economy"),
            answer.get("insurance", False),
        )
        return {"bookings": [booking], "flight bookings": before["flight bookings"] + 1}

    def correct(self, thread: Waiting) -> Any:
        return {thread.names["form"]: {"decision": "approve", "seat_class": "business", "insurance": True}}


# --- ops: write_file, execute_sql and delete_file wait at once, answered by a reviewer --------


WRITE = Tool(
    "write_file",
    ("approve", "edit", "reject", "respond"),
    {
        "file_path": st.sampled_from([Slot("archive"), Slot("alt"), Slot("alt"), Slot("escape"), 5, None]),
        "content": plain_text | st.sampled_from([7, None]),
    },
)
SQL = Tool(
    "execute_sql",
    ("approve", "reject"),
    {
        "query": st.sampled_from(
            ["DELETE FROM orders WHERE 1 = 0", "UPDATE orders SET item = item WHERE 1 = 0", 5]
        )
    },
)
DELETE = Tool(
    "delete_file",
    ("approve", "edit", "reject"),
    {"path": st.sampled_from([Slot("log"), Slot("log_abs"), Slot("missing"), Slot("decoy"), 3, None])},
)
OPS_TOOLS = (WRITE, SQL, DELETE)


@st.composite
def ops_answers(draw: st.DrawFn) -> Any:
    """`{interrupt_id: decision}` for one to three of the calls, each decision fuzzed, ids mutated."""
    tools = draw(st.lists(st.sampled_from(OPS_TOOLS), min_size=1, max_size=3, unique_by=lambda t: t.name))
    answers = {Slot(tool.name): draw(decision(tool)) for tool in tools}
    if draw(st.integers(0, 7)) == 0:
        return {"decisions": list(answers.values())}  # the batched shape, on per-call interrupts
    return by_id(answers, draw)


class OpsTarget(Target):
    """`ops`: an archive that also deletes a log, so three per-call interrupts wait at once."""

    agent = "ops"
    answerer = "reviewer1"
    owner = "supervisor1"  # ops is for staff

    @property
    def workspace(self) -> Path:
        return self.server.log.parent / "workspace"

    def start(self, http: httpx.Client) -> Waiting:
        name = uuid.uuid4().hex[:8]
        (self.workspace / "tmp").mkdir(parents=True, exist_ok=True)
        (self.workspace / "tmp" / f"{name}.log").write_text("old\n")
        (self.workspace.parent / f"decoy-{name}.log").write_text("outside\n")
        self.services.orders.add(
            Order(
                order_id=f"O{name}",
                customer_name="Old Customer",
                customer_email=f"o{name}@example.com",
                item="Old item",
                amount=10.0,
                status="delivered",
                delivered_on="2019-05-01",
            )
        )
        names = {
            "alt": f"/fuzz/alt-{name}.csv",
            "escape": f"/../escape-{name}.csv",
            "log": f"tmp/{name}.log",
            "log_abs": f"/tmp/{name}.log",  # noqa: S108  (a workspace path, not the machine's /tmp)
            "missing": f"tmp/missing-{name}.log",
            "decoy": f"/../decoy-{name}.log",
        }
        text = phrases.archive_orders(2025, f"archive-{name}.csv", then_delete=names["log"])
        thread = self.open(http, text, names)
        for tool in OPS_TOOLS:
            interrupt = thread.by_tool(tool.name)
            thread.names[tool.name] = interrupt["id"]
            thread.names[f"{tool.name} call"] = interrupt["value"]["tool_call_id"]
        thread.names["archive"] = thread.by_tool("write_file")["value"]["args"]["file_path"]
        return thread

    def effects(self, thread: Waiting) -> dict[str, Any]:
        names, root = thread.names, self.workspace

        def content(path: Path) -> str | None:
            return path.read_bytes().decode() if path.exists() else None

        return {
            "archive": content(root / names["archive"].lstrip("/")),
            "alt": content(root / names["alt"].lstrip("/")),
            "escaped": (root.parent / names["escape"].removeprefix("/../")).exists(),
            "sql runs": len(rows(self.services, "sql_runs", names["execute_sql call"])),
            "deletions": len(rows(self.services, "file_deletions", names["delete_file call"])),
            "all sql runs": self.services.sql.writes(),
            "all deletions": self.services.file_deletions.count(),
            "log": (root / names["log"]).exists(),
            "decoy": (root.parent / names["decoy"].removeprefix("/../")).exists(),
        }

    def expect(self, thread: Waiting, answers: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
        names, expected = thread.names, dict(before)
        for interrupt_id, answer in answers.items():
            value = thread.interrupts[interrupt_id]["value"]
            if answer["type"] not in {"approve", "edit"}:
                continue
            args = value["args"]
            if answer["type"] == "edit":
                shape = {"write_file": {"file_path": str, "content": str}, "delete_file": {"path": str}}
                args = edited_args(answer, **shape[value["name"]])
            if value["name"] == "write_file":
                where = {names["archive"]: "archive", names["alt"]: "alt"}.get(args["file_path"])
                if where:  # anything else leaves the workspace: refused by the backend
                    expected[where] = args["content"]
            elif value["name"] == "execute_sql":
                expected["sql runs"] = 1
            elif args["path"] in {names["log"], names["log_abs"]}:  # else: missing or outside
                expected.update(deletions=1, log=False)
        for own, every in (("sql runs", "all sql runs"), ("deletions", "all deletions")):
            expected[every] += expected[own] - before[own]  # and nothing anywhere else
        return expected

    def correct(self, thread: Waiting) -> Any:
        return {interrupt_id: {"type": "approve"} for interrupt_id in thread.pending}


TARGETS: tuple[type[Target], ...] = (SupportTarget, TravelTarget, OpsTarget)
PAYLOADS = {
    "support": json_values | support_answers(),
    "travel": json_values | travel_answers(),
    "ops": json_values | ops_answers() | ops_answers(),
}
"""What each agent is fuzzed with: random JSON, or a mutated valid answer."""


@contextmanager
def open_targets(server: DevServer) -> Iterator[dict[str, Target]]:
    """One target per agent on `server`, sharing a client and the pool that starts spare threads."""
    services = server.services
    with (
        httpx.Client(base_url=server.url, timeout=60, verify=tls()) as http,
        ThreadPoolExecutor(max_workers=AHEAD + 1, thread_name_prefix="spare") as pool,
    ):
        targets = {
            kind.agent: kind(server=server, services=services, http=http, pool=pool) for kind in TARGETS
        }
        try:
            yield targets
        finally:
            for target in targets.values():
                for spare in target.spares:
                    spare.cancel()
