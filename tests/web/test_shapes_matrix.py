"""Every interrupt shape the server emits, in every client: web app, `hitl show`, Slack, e-mail, LangChain.

Each row of `tests/web/shapes.py` is made by real runs of the demo agents on two servers of this
module's own, their people in teams (finance, finance-leads, sre), the demo's billing MCP server
beside each: one with the usual deadlines, whose billing questions go to finance, one whose refunds
escalate to finance-leads after 3 s, whose billing questions go to the thread's owner. Then, for each
shape: every person's Chromium tab offers its buttons exactly to those who may press them and tells
everyone else who decides; `hitl show` prints it with who decides (and a question's fields); the
Slack post and the e-mail describe it; LangChain's own request types read the gated calls, and its
answer types answer an MCP server's question. Last, pressing what the browser offers does what the
server says (one effect in the business database), and whoever the browser offers nothing is refused
by the server too (403, nothing written). A shape a client cannot show fails naming the shape and
the client.
The tests run in this order on one set of threads; only the last one decides them.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
import jsonschema_rs
import pytest
from langchain.agents.middleware.human_in_the_loop import HITLRequest
from langchain.agents.middleware.human_in_the_loop import ToolApprovalRequest as LangChainToolApproval
from mcp.types import ElicitResult
from pydantic import TypeAdapter
from typer.testing import CliRunner

from hitl.cli.main import app as hitl_cli
from hitl.contracts.asks import read
from hitl.policy.groups import who
from tests.devserver import (
    TEAM_TOKENS,
    TEAM_USERS,
    TEAMS,
    TEST_USERS,
    dev_users,
    sdk_client,
    start_dev_server,
    stop,
)
from tests.fake_slack import FakeSlack
from tests.mcp_lab.beside import mcp_beside
from tests.smtp_sink import SmtpSink
from tests.web.conftest import TOKENS, WAIT_MS, save_pages
from tests.web.reviewer_app import ReviewerApp
from tests.web.shapes import PEOPLE, SHAPES, STAFF, Ask, Made, Shape, Where, until, viewers

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from langgraph_sdk.client import LangGraphClient

    from tests.devserver import DevServer
    from tests.web.reviewer_app import Tab

pytestmark = [pytest.mark.server, pytest.mark.long]

PEOPLE_TOKENS = {**TOKENS, **TEAM_TOKENS}
EMAILS = {person: f"{person}@example.com" for person in PEOPLE}
SERVERS = ("teams", "escalating")
TABS_AT_ONCE = 3
"""Tabs loading threads side by side: more only queue behind the two cores (and the servers' own work)."""
VIEW = """() => ({
  thread: document.querySelector('[data-testid="thread-page"]')?.dataset.threadId ?? null,
  withdrawn: document.querySelectorAll('[data-testid="receipt-card"][data-decision="withdrawn"]').length,
  units: [...document.querySelectorAll('[data-testid="interrupt-card"]')].flatMap((card) =>
    (card.dataset.kind === "batched" ? [...card.querySelectorAll('[data-testid="action-card"]')] : [card])
    .map(
      (unit) => ({
        kind: card.dataset.kind,
        interrupt: card.dataset.interruptId,
        subject: unit.dataset.tool ?? card.dataset.subject,
        note: unit.querySelector('[data-testid="decider-note"]')?.textContent ?? null,
        buttons: unit.querySelectorAll("button").length,
        text: card.textContent,
      }),
    ),
  ),
})"""
"""What a tab shows of the thread it has open: each card (each action of a batch), its buttons, its note."""


def environments(slack: FakeSlack, mail: SmtpSink) -> dict[str, dict[str, str]]:
    """The two servers: teams with the usual deadlines; teams whose refunds escalate (ops by reviewers).

    The first gives billing's questions to finance; the second leaves them to the thread's owner.
    """
    shared = {
        "HITL_USERS": f"{dev_users()},{TEST_USERS},{TEAM_USERS}",
        "HITL_WATCH_INTERVAL": "0.5",
        "HITL_SLACK_WEBHOOK_URL": slack.webhook_url,
        "HITL_SMTP_HOST": "127.0.0.1",
        "HITL_SMTP_PORT": str(mail.port),
        "HITL_SMTP_STARTTLS": "false",
        "HITL_USER_EMAILS": ",".join(f"{person}:{address}" for person, address in EMAILS.items()),
        "HITL_PUBLIC_URL": "https://hitl.example.com",
        "REFUND_DECIDER_GROUP": TEAMS["REFUND_DECIDER_GROUP"],
        "REFUND_LEAD_GROUP": TEAMS["REFUND_LEAD_GROUP"],
    }
    quick = {"REFUND_DEADLINE_SECONDS": "3", "ESCALATION_DEADLINE_SECONDS": "600"}
    teams = {**TEAMS, "BILLING_ANSWERED_BY": TEAMS["REFUND_DECIDER_GROUP"]}
    return {"teams": {**shared, **teams}, "escalating": {**shared, **quick}}


@pytest.fixture(scope="module")
def channels() -> Iterator[tuple[FakeSlack, SmtpSink]]:
    """A fake Slack (its incoming webhook) and an SMTP sink, shared by both servers."""
    slack, mail = FakeSlack(), SmtpSink()
    yield slack, mail
    slack.close()
    mail.close()


@pytest.fixture(scope="module")
def servers(tmp_path_factory, channels) -> Iterator[dict[str, DevServer]]:
    """Both servers, started side by side, each with billing beside it; each stopped by its PID after."""
    started: dict[str, DevServer] = {}
    with ExitStack() as billing:
        workdirs = {name: tmp_path_factory.mktemp(f"matrix-{name}") for name in SERVERS}
        beside = {name: billing.enter_context(mcp_beside(workdirs[name], lab=False)) for name in SERVERS}
        with ThreadPoolExecutor(len(SERVERS)) as pool:
            futures = {
                name: pool.submit(
                    start_dev_server, workdirs[name], {**beside[name].env, **env}, beside[name].config
                )
                for name, env in environments(*channels).items()
            }
            failure: BaseException | None = None
            for name, future in futures.items():
                try:
                    started[name] = future.result()
                except BaseException as error:  # noqa: BLE001  (pytest.fail's too: stop the other, then fail)
                    failure = error
        try:
            if failure is not None:
                raise failure
            yield started
        finally:
            for running in started.values():
                stop(running.process)


@dataclass
class Matrix:
    """Every shape made, where, and each person's signed-in tab on each server."""

    made: list[tuple[Shape, Made, Where]]
    tabs: dict[tuple[str, str], Tab]


@pytest.fixture(scope="module")
async def matrix(request, chromium, servers) -> AsyncIterator[Matrix]:
    """Every shape of `SHAPES` made once (concurrently), and every person signed in on both servers.

    If a test of the module failed, every tab is saved as a screenshot under test-artifacts/web/.
    """
    failed_before = request.session.testsfailed
    clients: dict[tuple[str, str], LangGraphClient] = {}
    contexts: list[Any] = []
    wheres: dict[str, Where] = {}
    for name, server in servers.items():

        def client_as(person: str, url: str = server.url) -> LangGraphClient:
            if (url, person) not in clients:
                token = PEOPLE_TOKENS[person]
                clients[url, person] = sdk_client(url=url, headers={"Authorization": f"Bearer {token}"})
            return clients[url, person]

        app = ReviewerApp(chromium, f"{server.url}/app/", PEOPLE_TOKENS, contexts, WAIT_MS)
        wheres[name] = Where(server, client_as, app)
    try:
        made = await asyncio.gather(*(shape.make(wheres[shape.server]) for shape in SHAPES))
        for shape, one in zip(SHAPES, made, strict=True):
            thread = await wheres[shape.server].client_as("supervisor1").threads.get(one.thread_id)
            one.refs["pending"] = {
                i["id"] for batch in (thread.get("interrupts") or {}).values() for i in batch
            }
        people = [(s, p) for s in SERVERS for p in PEOPLE if any(p in looking(shape, s) for shape in SHAPES)]
        signed = await asyncio.gather(*(wheres[s].app.signed_in(p) for s, p in people))
        tabs = dict(zip(people, signed, strict=True))
        yield Matrix([(s, m, wheres[s.server]) for s, m in zip(SHAPES, made, strict=True)], tabs)
    finally:
        if request.session.testsfailed > failed_before:
            for where in wheres.values():
                await save_pages("test_shapes_matrix", where.app)
        for context in contexts:
            await context.close()
        for client in clients.values():
            await client.aclose()


def disagreements(shape: Shape, made: Made, person: str, seen: dict[str, Any]) -> Iterator[str]:
    """What `person`'s tab shows that the server does not allow, or misses; nothing when the two agree."""
    units = {unit["subject"]: unit for unit in seen["units"]}
    if person not in STAFF and person != made.owner:  # not theirs to read: the server sends them nothing
        if units:
            yield f"{sorted(units)} shown on a thread that is not theirs"
        return
    if seen["thread"] != made.thread_id:
        yield "the thread is not open yet"
    if set(units) != {ask.subject for ask in shape.asks}:
        yield f"cards for {sorted(units)}, not {sorted(ask.subject for ask in shape.asks)}"
        return
    if shape.kind is None and not seen["withdrawn"]:
        yield "no withdrawn receipt"
    for ask in shape.asks:
        yield from card_disagreements(shape, made, person, ask, units[ask.subject])


def card_disagreements(
    shape: Shape, made: Made, person: str, ask: Ask, unit: dict[str, Any]
) -> Iterator[str]:
    """What one card (or action) shows `person` that the server does not say of `ask`."""
    if unit["kind"] != shape.kind or unit["interrupt"] not in made.refs["pending"]:
        yield f"{ask.subject}: a {unit['kind']} card of {unit['interrupt']}, not this thread's {shape.kind}"
    if shape.says and shape.says not in unit["text"]:
        yield f"{ask.subject}: the card does not say {shape.says!r}"
    if person in ask.people and (unit["note"] is not None or not unit["buttons"]):
        yield f"{ask.subject}: no buttons ({unit['note']!r}), though the server lets {person} decide"
    if person not in ask.people and (unit["buttons"] or ask.words not in (unit["note"] or "")):
        yield f"{ask.subject}: {unit['buttons']} buttons, {unit['note']!r}; not none and {ask.words!r}"


def looking(shape: Shape, server: str) -> tuple[str, ...]:
    """Who opens `shape` on `server` (nobody on the other server)."""
    return viewers(shape) if shape.server == server else ()


async def views_of(matrix: Matrix, server: str, person: str, tabs_at_once: asyncio.Semaphore) -> list[str]:
    """Each shape on `server` as `person` sees it; a line for each that disagrees with the server."""
    if (server, person) not in matrix.tabs:
        return []
    async with tabs_at_once:
        return await _views_of(matrix, server, person)


async def _views_of(matrix: Matrix, server: str, person: str) -> list[str]:
    tab = matrix.tabs[server, person]
    failures = []
    for shape, made, _ in matrix.made:
        if person not in looking(shape, server):
            continue
        await tab.open(made.thread_id, made.agent)
        deadline = time.monotonic() + WAIT_MS / 2000
        while (  # noqa: ASYNC110  (polls what the page shows: it signals nothing when it settles)
            wrong := next(disagreements(shape, made, person, await tab.page.evaluate(VIEW)), None)
        ) and time.monotonic() < deadline:
            await asyncio.sleep(0.25)
        if wrong:
            failures.append(f"web app · {shape.name} · as {person}: {wrong}")
    return failures


async def test_each_person_sees_buttons_exactly_where_the_server_allows(matrix):
    """web: every shape, every person (each role, each team): buttons exactly for those who may decide.

    Everyone else reads who decides ("Someone in finance decides this"); each card says its tier,
    its quorum's progress or where it escalated; a withdrawn call shows its receipt and no card.
    """
    at_once = asyncio.Semaphore(TABS_AT_ONCE)
    found = await asyncio.gather(*(views_of(matrix, s, p, at_once) for s in SERVERS for p in PEOPLE))
    failures = [line for lines in found for line in lines]
    assert not failures, "\n".join(failures)


def shown_by_hitl(url: str, thread_id: str) -> str:
    """`hitl show THREAD` as supervisor1 (staff read every thread): the command's output.

    The `hitl` command itself, run in this process (a dozen interpreters starting cost more than the
    matrix's whole browser work on a busy machine); `tests/server/test_cli.py` runs it as a process.
    """
    env = {"HITL_URL": url, "HITL_TOKEN": PEOPLE_TOKENS["supervisor1"]}
    done = CliRunner().invoke(hitl_cli, ["show", thread_id], env=env)
    assert done.exit_code == 0, done.output
    return done.output


async def test_hitl_show_prints_every_shape_with_who_decides(matrix):
    """CLI: `hitl show` names each thing asked, its kind, who decides it now (an escalation's group).

    A withdrawn call shows as decided: withdrawn by its owner; an MCP server's question, its fields.
    """
    failures = []
    for shape, made, where in matrix.made:
        shown = await asyncio.to_thread(shown_by_hitl, where.server.url, made.thread_id)
        if shape.kind is None and "withdrawn by requester1" not in shown:
            failures.append(f"hitl show · {shape.name}: no withdrawn receipt in\n{shown}")
        said: list[tuple[str, ...]] = [
            (f"wants {a.subject}", f"{shape.kind}:", f"decided by: {who(a.decider)}") for a in shape.asks
        ]
        said.append(shape.printed)
        failures += [
            f"hitl show · {shape.name}: {line!r} missing in\n{shown}"
            for lines in said
            for line in lines
            if line not in shown
        ]
    assert not failures, "\n".join(failures)


async def test_slack_and_email_notices_describe_every_shape(matrix, channels):
    """Slack, e-mail: each waiting shape is posted and mailed, naming what is asked and who decides.

    The mail goes to someone who may decide it, never to the person who asked (they may not approve it).
    """
    slack, mail = channels
    failures = []
    for shape, made, _ in matrix.made:
        if shape.kind is None:
            continue
        posts = await until(
            lambda made=made: slack.messages_for(made.thread_id), f"a Slack post of {shape.name}"
        )
        mails = await until(
            lambda made=made: [m for _, m in mail.messages if made.thread_id in m.get_content()],
            f"a mail of {shape.name}",
        )
        posted = str(posts)
        mailed = "\n".join(m.get_content() for m in mails)
        to = {address for m in mails for address in str(m["To"]).split(",")}
        for ask in shape.asks:
            failures += [
                f"{client} · {shape.name}: {said!r} missing"
                for client, text in (("slack", posted), ("email", mailed))
                for said in (ask.subject, who(ask.decider))
                if said not in text
            ]
            if not {EMAILS[p] for p in ask.people} & to:
                failures.append(f"email · {shape.name}: none of {sorted(ask.people)} told, only {sorted(to)}")
        if made.owner not in {p for ask in shape.asks for p in ask.people} and EMAILS[made.owner] in to:
            failures.append(f"email · {shape.name}: {made.owner}, who asked, was told to decide it")
    assert not failures, "\n".join(failures)


LANGCHAIN = {"batched": TypeAdapter(HITLRequest), "tool_approval": TypeAdapter(LangChainToolApproval)}
"""LangChain's own request types (its HITL middleware), for the kinds that are LangChain's shapes."""


def mcp_answers(value: dict[str, Any]) -> list[dict[str, Any]]:
    """Each answer MCP allows to the question `value`: accept (each field filled in), decline, cancel.

    Built with MCP's own `ElicitResult`, which `langchain.mcp`'s `MCPElicitationResponse` mirrors field
    for field (that module needs `fastmcp`, which the layer does not install).
    """
    content: dict[str, Any] = {}
    for name, field in value["requested_schema"]["properties"].items():
        choices = field.get("enum") or [option["const"] for option in field.get("oneOf", [])]
        content[name] = {
            "string": choices[0] if choices else "x" * max(field.get("minLength", 1), 1),
            "boolean": True,
            "integer": field.get("minimum", 1),
            "number": field.get("minimum", 1),
        }[field["type"]]
    answers = [
        ElicitResult(action="accept", content=content),
        *(ElicitResult(action=a) for a in ("decline", "cancel")),
    ]
    return [answer.model_dump(exclude_none=True, by_alias=True) for answer in answers]


async def test_langchains_own_types_read_every_gated_call(matrix):
    """LangChain: every gated call the server asks about is LangChain's `HITLRequest` or per-call request.

    An MCP server's question is the layer's own request (it names the agent, the call and who answers,
    which `langchain.mcp`'s payload does not); each answer MCP's types allow (accept with the fields,
    decline, cancel: `langchain.mcp`'s `MCPElicitationResponse`) fits the answer schema the server
    checks it with, and goes in LangGraph's `Command(resume={interrupt_id: answer})`. (A form
    and a sign-off are the layer's own shapes; LangChain's `Command(resume=...)` answers them by
    interrupt id, as the browser does below. The quorum's first approval was LangChain's resume.)
    """
    checked, failures = set(), []
    for shape, made, where in matrix.made:
        if shape.kind not in {*LANGCHAIN, "mcp_elicitation"}:
            continue
        client = where.client_as("supervisor1")
        thread = await client.threads.get(made.thread_id)
        schemas = (await client.http.get(f"/threads/{made.thread_id}/answer-schemas"))["schemas"]
        for interrupt in [i for batch in thread["interrupts"].values() for i in batch]:
            kind = read(interrupt["value"]).kind  # type: ignore[union-attr]
            if kind in LANGCHAIN:
                LANGCHAIN[kind].validate_python(interrupt["value"])
            else:
                fits = jsonschema_rs.validator_for(schemas[interrupt["id"]])
                failures += [
                    f"langchain · {shape.name}: the server would refuse {answer}"
                    for answer in mcp_answers(interrupt["value"])
                    if not fits.is_valid(answer)
                ]
            checked.add(kind)
    assert not failures, "\n".join(failures)
    assert checked == {*LANGCHAIN, "mcp_elicitation"}


def answer_as_anyone(value: dict[str, Any]) -> Any:
    """A well-formed answer to `value` for a refusal to judge (LangChain's decisions for a gated call)."""
    asked = read(value)
    assert asked is not None, value
    first = [
        {"type": "approve"} if "approve" in ask.decisions else {"type": "respond", "message": "no"}
        for ask in asked.asks
    ]
    return {
        "batched": {"decisions": first},
        "tool_approval": first[0],
        "approval_request": {"approved": True, "reason": ""},
        "form": {"decision": "cancel"},
        "mcp_elicitation": {"action": "decline"},
    }[asked.kind]


async def refusals(shape: Shape, made: Made, where: Where) -> list[str]:
    """Everyone the browser offers no button to, answering anyway through the API: 403 each time."""
    thread = await where.client_as("supervisor1").threads.get(made.thread_id)
    failures = []
    for interrupt in [i for batch in (thread.get("interrupts") or {}).values() for i in batch]:
        asked = read(interrupt["value"])
        subjects = {ask.subject for ask in asked.asks} if asked else set()
        allowed = {p for ask in shape.asks if ask.subject in subjects for p in ask.people}
        command = {"resume": {interrupt["id"]: answer_as_anyone(interrupt["value"])}}
        for person in (p for p in PEOPLE if p not in allowed):
            try:
                await where.client_as(person).runs.wait(made.thread_id, made.agent, command=command)
            except httpx.HTTPStatusError as refused:
                if refused.response.status_code != 403:
                    failures.append(
                        f"server · {shape.name} · {person}: {refused.response.status_code}, not 403"
                    )
                continue
            failures.append(
                f"server · {shape.name} · {person}: accepted what the browser offers them no button for"
            )
    return failures


async def test_what_the_browser_offers_does_what_the_server_says(matrix):
    """Pressing in Chromium: each shape's decider gets one effect in the business database; nobody else any.

    First everyone the browser offers no button is refused by the server (403, nothing written); then
    the decider presses (finance1 from the inbox row: an edit above finance's tier is refused on the
    card in the server's words, the approve refunds once); each effect is there once the thread rests.
    """
    failures = []
    for shape, made, where in matrix.made:
        failures += await refusals(shape, made, where)
        if shape.kind is not None and await shape.effect(where, made):
            failures.append(f"server · {shape.name}: decided before anyone in the browser did")
        tab = matrix.tabs.get((shape.server, shape.by)) or await where.app.signed_in(shape.by)
        await tab.open(made.thread_id, made.agent)
        await shape.decide(tab, made, where)
        await until(
            lambda shape=shape, made=made, where=where: shape.effect(where, made), f"{shape.name}'s effect"
        )
    for shape, made, where in matrix.made:
        client = where.client_as("supervisor1")
        await until(lambda made=made, client=client: rests(client, made), f"{shape.name}'s thread to rest")
        if not await shape.effect(where, made):
            failures.append(f"business database · {shape.name}: the effect is not there once")
    assert not failures, "\n".join(failures)


async def rests(client: LangGraphClient, made: Made) -> bool:
    """Whether the thread runs nothing (its decision applied, its agent answered)."""
    return (await client.threads.get(made.thread_id))["status"] in {"idle", "interrupted"}
