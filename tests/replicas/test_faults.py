"""Faults lose nothing: approvals in flight while a replica is SIGKILLed, Redis and PostgreSQL restart.

The replicas run on a PostgreSQL and a Redis of this module's own (`tests.replicas.own_services`),
so restarting them touches no other test. Clients pause refunds and approve them on random
replicas, each approval with an Idempotency-Key, re-sent after a 5xx or a lost connection until
the server answers 200 or "already applied"; a ledger keeps what each was told. Meanwhile the
watcher's leader is SIGKILLed (a new replica takes its place), Redis is killed and restarted
after 1-3 s, then PostgreSQL is crash-stopped and restarted after 1-3 s. Once all is settled:
every 200 has exactly one refund, no refund lacks an accepted decision, no approval is lost or
left in `error` (each is applied, or still answerable and then applied), no interrupt has two
accepted decisions, every trail verifies, and every notice the server recorded reached the
receiver (once, after dedupe by its id). `make chaos` runs it longer, with 3 replicas and faults
every 20-40 s (FAULT_SECONDS, FAULT_REPLICAS, FAULT_CLIENTS), and prints the ledger's totals.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.exc import OperationalError

from server.ledger.storage import decisions, leases, notice_outbox
from server.runtime.replicas import ReplicaSet
from services.registry import Services
from tests.conftest import add_order
from tests.devserver import TEST_USERS, dev_users
from tests.notices import Receiver
from tests.replicas.conftest import approve, http, until
from tests.replicas.own_services import OwnPostgres, OwnRedis

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sqlalchemy import Engine

pytestmark = [pytest.mark.server, pytest.mark.long]
LOAD_SECONDS = float(os.environ.get("FAULT_SECONDS", "25"))
REPLICAS = int(os.environ.get("FAULT_REPLICAS", "2"))
CLIENTS = int(os.environ.get("FAULT_CLIENTS", "4"))
LONG = LOAD_SECONDS > 60
"""A `make chaos` run: faults every 20-40 s instead of one of each."""
SETTLE_SECONDS = 120.0
PATIENCE_SECONDS = 90.0
"""How long a client keeps re-sending one answer before the ledger calls it unanswered."""
CHANCE = random.Random()  # noqa: S311  (which replica, which fault, how long: no secret)
RETRYABLE = ("being applied", "is running", "being started")
"""What a 409 says when the answer only has to wait (its run is on the way)."""


@dataclass
class Approval:
    """One refund asked for and approved, as the client saw it."""

    order_id: str
    thread_id: str = ""
    interrupt_id: str = ""
    told: list[str] = field(default_factory=list)
    """Each answer to the approval, in order: a status, a 409's gist, or the transport error."""
    outcome: str = "not paused"
    """`accepted` (a 200), `already applied` (a 409 saying so), `unanswered`, `refused`, `not paused`."""


@dataclass
class Ledger:
    """The client's record of every approval, and the faults it lived through."""

    approvals: list[Approval] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        """What the ledger adds up to."""
        outcomes = Counter(a.outcome for a in self.approvals)
        told = Counter(t for a in self.approvals for t in a.told)
        return {
            "approvals": len(self.approvals),
            **{f"outcome {k}": v for k, v in sorted(outcomes.items())},
            "answers sent": sum(len(a.told) for a in self.approvals),
            "re-sends": sum(max(len(a.told) - 1, 0) for a in self.approvals),
            **{f"told {k}": v for k, v in sorted(told.items())},
            "faults": len(self.faults),
        }


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    """The notice receiver (dedupes by notice id)."""
    running = Receiver()
    yield running
    running.http.shutdown()
    running.http.server_close()


@pytest.fixture(scope="module")
def own() -> Iterator[tuple[OwnPostgres, OwnRedis]]:
    """This module's own PostgreSQL and Redis, removed afterwards."""
    postgres = OwnPostgres()
    redis = OwnRedis(postgres.workdir)
    try:
        postgres.start()
        redis.start()
        yield postgres, redis
    finally:
        redis.stop()
        postgres.remove()


@pytest.fixture(scope="module")
def replicas(own, receiver, tmp_path_factory) -> Iterator[ReplicaSet]:
    """`REPLICAS` replicas on the module's own PostgreSQL and Redis, a fast watcher, notices on."""
    postgres, redis = own
    env = {
        "HITL_USERS": f"{dev_users()},{TEST_USERS}",
        "HITL_DEV_MODE": "true",
        "MODEL": "scripted",
        "HITL_WATCH_INTERVAL": "0.5",
        "HITL_NOTIFY_URL": receiver.url,
    }
    running = ReplicaSet(
        f"hitl_faults_{uuid.uuid4().hex[:8]}",
        tmp_path_factory.mktemp("faults"),
        postgres=postgres.url,
        redis=redis.url,
        env=env,
    )
    running.create_databases(fresh=True)
    try:
        running.start(REPLICAS)
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def business(replicas) -> Iterator[Services]:
    """The replicas' business database, as the test reads it."""
    services = Services.open(replicas.business_url)
    yield services
    services.engine.dispose()


@pytest.fixture(scope="module")
def layer(replicas) -> Iterator[Engine]:
    """The approval layer's own database (decisions, leases, the notice outbox), as the test reads it."""
    engine = create_engine(replicas.layer_url)
    yield engine
    engine.dispose()


SERVING: set[str] = set()
"""The URLs of the replicas started and not killed."""


def alive(replicas: ReplicaSet) -> list[str]:
    """The URLs of the replicas serving now."""
    if not SERVING:
        SERVING.update(replicas.urls)
    return sorted(SERVING)


def start_replacement(replicas: ReplicaSet) -> None:
    """Start one more replica; it serves clients once ready.

    A replica whose start-up meets Redis or PostgreSQL down exits: it is started again.
    """
    for attempt in range(3):
        try:
            SERVING.update(replicas.start(1))
        except RuntimeError:
            if attempt == 2:
                raise
            time.sleep(2)
        else:
            return


async def patiently(call, seconds: float = 60.0) -> Any:
    """`call()` again after a lost connection to the database (it restarts during the test)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return await asyncio.to_thread(call)
        except OperationalError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


async def pause(replicas: ReplicaSet, approval: Approval) -> None:
    """As requester1, ask for the refund on a random replica until the thread waits for its approval."""
    from agents.offline import phrases  # noqa: PLC0415

    body = {
        "assistant_id": "support",
        "input": {"messages": [{"role": "user", "content": phrases.refund_in_full(approval.order_id)}]},
    }
    deadline, last = time.monotonic() + PATIENCE_SECONDS, "nothing"
    while time.monotonic() < deadline:
        async with http(CHANCE.choice(alive(replicas)), "requester1") as client:
            try:
                if not approval.thread_id:
                    approval.thread_id = (
                        (await client.post("/threads", json={})).raise_for_status().json()["thread_id"]
                    )
                thread = (await client.get(f"/threads/{approval.thread_id}")).raise_for_status().json()
                last = f"thread {thread['status']}"
                if thread["status"] == "interrupted":
                    [interrupt] = [i for batch in thread["interrupts"].values() for i in batch]
                    approval.interrupt_id = interrupt["id"]
                    return
                if thread["status"] == "error":
                    approval.outcome = "pause in error"
                    return
                messages = (thread.get("values") or {}).get("messages")
                if thread["status"] == "idle" and messages and messages[-1].get("tool_calls"):
                    # The run ended on the model's call to the gated tool, its pause not (yet) on the
                    # thread record (once in CI a thread read idle, its last message of empty content
                    # 0.5 s after its run). Read again; one left so for PATIENCE_SECONDS is reported.
                    last = "thread idle on the model's tool call, no pause recorded"
                elif thread["status"] == "idle" and messages:
                    approval.outcome = "not paused"  # the agent answered without asking (nothing to approve)
                    said = messages[-1]
                    approval.told.append(f"{said.get('type')}: {str(said.get('content'))[:160]}")
                    return
                elif thread["status"] == "idle":
                    waited = await client.post(f"/threads/{approval.thread_id}/runs/wait", json=body)
                    last = f"runs/wait {waited.status_code} {waited.text[:120]}"
            except httpx.HTTPError as error:
                last = f"{type(error).__name__} {error}"[:160]
        await asyncio.sleep(0.5)
    if last.startswith("thread idle on the model's tool call") and approval.thread_id:
        last += f"; {await lost_pause_evidence(replicas, approval.thread_id)}"
    approval.outcome = f"pause unanswered (last: {last})"


async def lost_pause_evidence(replicas: ReplicaSet, thread_id: str) -> str:
    """What the engine holds of a thread left idle on the model's call: its runs, next and checkpoints.

    Tells a gate that let the turn end (no task left) from a pause the thread record lost (a task
    with its interrupt, the thread idle). It showed the second: the engine's queue sweep idled a
    thread whose run paused between the sweep's read and its write, fixed in
    `server.runtime.engine_compat` and replayed in `test_engine_compat.py`.
    """
    async with http(alive(replicas)[0], "supervisor1") as client:
        try:
            runs = (await client.get(f"/threads/{thread_id}/runs")).json()
            state = (await client.get(f"/threads/{thread_id}/state")).json()
            history = (await client.post(f"/threads/{thread_id}/history", json={"limit": 6})).json()
            tasks = [
                (t["name"], len(t.get("interrupts") or []), bool(t.get("error"))) for t in state["tasks"]
            ]
            steps = [
                (c["metadata"].get("step"), c["metadata"].get("source"), c["next"], len(c.get("tasks") or []))
                for c in history
            ]
            return (
                f"runs {[r['status'] for r in runs]}, next {state['next']}, tasks (name, interrupts, error) "
                f"{tasks}, checkpoints (step, source, next, tasks) newest first {steps}"
            )
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as error:
            return f"evidence unread: {type(error).__name__} {error}"[:200]


def gist(response: httpx.Response) -> str:
    """A 409's reason in a word or two (what the ledger counts), else the status."""
    if response.status_code != httpx.codes.CONFLICT:
        return str(response.status_code)
    detail = str(response.json().get("detail", ""))
    if detail.startswith("Already applied"):
        return "409 already applied"
    return next((f"409 {reason}" for reason in RETRYABLE if reason in detail), f"409 {detail[:60]}")


async def decide(replicas: ReplicaSet, approval: Approval) -> None:
    """As supervisor1, approve on random replicas, re-sending the same answer until accepted or applied."""
    headers = {"Idempotency-Key": f"ledger-{approval.order_id}"}
    deadline = time.monotonic() + PATIENCE_SECONDS
    while time.monotonic() < deadline:
        url = TARGET[0] if TARGET else CHANCE.choice(alive(replicas))
        async with http(url, "supervisor1") as client:
            IN_FLIGHT[url] += 1
            try:
                response = await client.post(
                    f"/threads/{approval.thread_id}/runs",
                    json=approve(approval.interrupt_id),
                    headers=headers,
                )
            except httpx.HTTPError as error:
                approval.told.append(type(error).__name__)
                await asyncio.sleep(0.3)
                continue
            finally:
                IN_FLIGHT[url] -= 1
        told = gist(response)
        approval.told.append(told)
        if response.status_code == httpx.codes.OK:
            approval.outcome = "accepted"
            return
        if told == "409 already applied":
            approval.outcome = "already applied"
            return
        if response.status_code < httpx.codes.INTERNAL_SERVER_ERROR and not told.endswith(RETRYABLE):
            approval.outcome = "refused"
            return
        await asyncio.sleep(0.5)
    approval.outcome = "unanswered"


async def client(replicas: ReplicaSet, business: Services, ledger: Ledger, until_: float) -> None:
    """Ask for and approve refunds, one after another, until `until_` (monotonic)."""
    while time.monotonic() < until_:
        order_id = await patiently(lambda: add_order(business, CHANCE.choice([300, 450, 600])))
        approval = Approval(order_id)
        ledger.approvals.append(approval)
        await pause(replicas, approval)
        if approval.interrupt_id:
            await decide(replicas, approval)


def leader_index(replicas: ReplicaSet, layer: Engine) -> int | None:
    """The index of the replica that leads the watcher now, if it is one of the running ones.

    A holder is named host-pid-random (`server.coordination.leadership.process_id`); `langhost serve` runs
    its one server process under the PID the replica set started.
    """
    with layer.connect() as conn:
        holder = conn.scalar(select(leases.c.holder).where(leases.c.name == "watcher"))
    pid = int(str(holder).rsplit("-", 2)[1]) if holder else None
    for index, process in enumerate(replicas.processes):
        if process.poll() is None and process.pid == pid:
            return index
    return None


IN_FLIGHT: Counter[str] = Counter()
"""Approvals being sent to each replica URL right now (the leader is killed with some in flight)."""
TARGET: list[str] = []
"""The replica about to be killed: clients send their approvals there meanwhile."""


def kill_leader(replicas: ReplicaSet, layer: Engine, ledger: Ledger) -> None:
    """SIGKILL the watcher's leader (else a random replica), with an approval in flight to it if any.

    Its replacement starts in the background (`replacements`), so the next fault is not held up.
    """
    running = [i for i, p in enumerate(replicas.processes) if p.poll() is None]
    try:
        index = leader_index(replicas, layer)
    except OperationalError:
        index = None
    victim = index if index is not None else CHANCE.choice(running)
    TARGET[:] = [replicas.urls[victim]]
    deadline = time.monotonic() + 10
    while not IN_FLIGHT[replicas.urls[victim]] and time.monotonic() < deadline:
        time.sleep(0.002)
    in_flight = IN_FLIGHT[replicas.urls[victim]]
    time.sleep(CHANCE.uniform(0, 0.05))  # somewhere in the request: before, in or after accepting it
    SERVING.discard(replicas.urls[victim])
    TARGET.clear()
    replicas.stop(victim, signal.SIGKILL)
    leader = " (the leader)" if victim == index else ""
    ledger.faults.append(f"SIGKILL replica {victim + 1}{leader} with {in_flight} approval(s) in flight to it")


def restart_redis(redis: OwnRedis, ledger: Ledger) -> None:
    """Kill Redis, keep it down 1-3 s, start it again (empty)."""
    down = CHANCE.uniform(1, 3)
    redis.restart(down)
    ledger.faults.append(f"Redis down {down:.1f} s")


def restart_postgres(postgres: OwnPostgres, ledger: Ledger) -> None:
    """Crash-stop PostgreSQL, keep it down 1-3 s, start it again."""
    down = CHANCE.uniform(1, 3)
    postgres.restart(down)
    ledger.faults.append(f"PostgreSQL down {down:.1f} s")


async def faults(replicas: ReplicaSet, layer: Engine, own, ledger: Ledger, until_: float) -> None:
    """A replica kill, a Redis and a PostgreSQL restart spread over the load, until `until_`.

    `make chaos`: a random one every 20-40 s. A killed replica's replacement starts meanwhile.
    """
    postgres, redis = own
    kinds = [
        lambda: kill_leader(replicas, layer, ledger),
        lambda: restart_redis(redis, ledger),
        lambda: restart_postgres(postgres, ledger),
    ]
    replacements = []
    start = time.monotonic()
    plan = [LOAD_SECONDS * at for at in (0.15, 0.45, 0.7)]  # one of each, at these points of the load
    number = 0
    while time.monotonic() < until_:
        if LONG:
            await asyncio.sleep(CHANCE.uniform(20, 40) if number else 10)
            kind = number % len(kinds)
        elif number < len(plan):
            await asyncio.sleep(max(start + plan[number] - time.monotonic(), 0))
            kind = number
        else:
            break
        if time.monotonic() >= until_:
            break
        await asyncio.to_thread(kinds[kind])
        if kind == 0:
            replacements.append(asyncio.create_task(asyncio.to_thread(start_replacement, replicas)))
        number += 1
    await asyncio.gather(*replacements)


async def settled(replicas: ReplicaSet, ledger: Ledger, business: Services) -> None:
    """Wait until no ledger thread is running and every approval told 200 or applied has its refund."""
    async with http(alive(replicas)[0], "supervisor1") as supervisor:

        async def quiet() -> bool:
            for approval in ledger.approvals:
                if not approval.thread_id:
                    continue
                thread = (await supervisor.get(f"/threads/{approval.thread_id}")).json()
                if thread["status"] == "busy":
                    return False
                if approval.outcome in {"accepted", "already applied"} and not await patiently(
                    lambda a=approval: business.payments.refunds_for(a.order_id)
                ):
                    return False
            return True

        await until(quiet, seconds=SETTLE_SECONDS, every=1.0)


async def test_faults_lose_nothing(replicas, business, layer, own, receiver):
    """ledger: each 200 one refund, none unapproved, lost, in error or decided twice; every trail verifies."""
    ledger = Ledger()
    start = time.monotonic()
    until_ = start + LOAD_SECONDS
    await asyncio.gather(
        faults(replicas, layer, own, ledger, until_),
        *(client(replicas, business, ledger, until_) for _ in range(CLIENTS)),
    )
    await settled(replicas, ledger, business)
    await answer_the_unanswered(replicas, ledger)
    await settled(replicas, ledger, business)
    problems = await check(replicas, business, layer, ledger, receiver)
    totals = ledger.totals() | await server_totals(replicas, business, layer, receiver)
    print_totals(ledger, totals, time.monotonic() - start)
    assert problems == [], "\n".join(problems)


async def answer_the_unanswered(replicas: ReplicaSet, ledger: Ledger) -> None:
    """Approvals the client gave up on, or never sent, are still answerable: answer them now."""
    for approval in ledger.approvals:
        if approval.interrupt_id and approval.outcome not in {"accepted", "already applied", "refused"}:
            await decide(replicas, approval)


async def check(
    replicas: ReplicaSet, business: Services, layer: Engine, ledger: Ledger, receiver: Receiver
) -> list[str]:
    """What breaks the promise, in words (empty when nothing does)."""
    problems: list[str] = []
    async with http(alive(replicas)[0], "supervisor1") as supervisor:
        for approval in ledger.approvals:
            problems += await check_one(supervisor, business, approval)
    problems += await check_notices(layer, receiver)
    return problems


async def check_one(supervisor: httpx.AsyncClient, business: Services, approval: Approval) -> list[str]:
    """The ledger's promises for one approval."""
    name = f"order {approval.order_id} (thread {approval.thread_id}, told {approval.told})"
    refunds = await patiently(lambda: business.payments.refunds_for(approval.order_id))
    if not approval.thread_id:
        return [f"{name}: refunded without a thread"] if refunds else []
    thread = (await supervisor.get(f"/threads/{approval.thread_id}")).json()
    records = (await supervisor.get(f"/audit/{approval.thread_id}")).json()["records"]
    accepted = [r for r in records if r["outcome"] == "accepted" and r["decision"] == "approve"]
    problems = []
    if thread["status"] == "error":
        problems.append(f"{name}: thread left in error")
    if approval.outcome in {"accepted", "already applied"} and len(refunds) != 1:
        problems.append(f"{name}: told {approval.outcome} but {len(refunds)} refund(s)")
    if approval.outcome not in {"accepted", "already applied", "not paused"}:
        problems.append(f"{name}: not applied in the end ({approval.outcome})")
    if refunds and [r["tool_call_id"] for r in accepted] != [refunds[0]["tool_call_id"]]:
        problems.append(f"{name}: refund {refunds[0]['tool_call_id']} against accepted approvals {accepted}")
    twice = [
        i
        for i, n in Counter(r["interrupt_id"] for r in records if r["outcome"] == "accepted").items()
        if n > 1
    ]
    if twice:
        problems.append(f"{name}: interrupts decided twice: {twice}")
    if approval.interrupt_id and not refunds and thread["status"] != "interrupted":
        problems.append(f"{name}: no refund and no longer answerable ({thread['status']})")
    report = (await supervisor.get(f"/audit/{approval.thread_id}/verification")).json()
    if not report["ok"]:
        problems.append(f"{name}: trail does not verify: {report['trail_problems']} {report['receipts']}")
    return problems


async def check_notices(layer: Engine, receiver: Receiver) -> list[str]:
    """Every notice the server recorded was delivered and received (once, after dedupe)."""

    def recorded() -> dict[str, float | None]:
        with layer.connect() as conn:
            rows = conn.execute(select(notice_outbox.c.notice_id, notice_outbox.c.delivered_at))
            return {str(notice_id): delivered for notice_id, delivered in rows}

    async def all_delivered() -> dict[str, float | None] | None:
        found = await patiently(recorded)
        return found if all(at is not None for at in found.values()) else None

    try:
        outbox = await until(all_delivered, seconds=60, every=1.0)
    except pytest.fail.Exception:
        outbox = await patiently(recorded)
    received = [n["notice_id"] for n in receiver.notices]
    problems = []
    if undelivered := sorted(k for k, at in outbox.items() if at is None):
        problems.append(f"notices recorded but not delivered: {undelivered}")
    if missing := sorted(set(outbox) - set(received)):
        problems.append(f"notices recorded but never received: {missing}")
    if twice := [k for k, n in Counter(received).items() if n > 1]:
        problems.append(f"notices kept twice by the receiver: {twice}")
    if unknown := sorted(set(received) - set(outbox)):
        problems.append(f"notices received that the server never recorded: {unknown}")
    return problems


async def server_totals(
    replicas: ReplicaSet, business: Services, layer: Engine, receiver: Receiver
) -> dict[str, int]:
    """What the server side adds up to: refunds, decisions by state, runs the reconciler started, notices."""

    def counted() -> dict[str, int]:
        with layer.connect() as conn:
            states = Counter(conn.scalars(select(decisions.c.state)))
            attempts = sum(conn.scalars(select(decisions.c.attempts)))
        return {
            "refunds": business.payments.count(),
            **{f"decisions {k}": v for k, v in sorted(states.items())},
            "runs to apply decisions": attempts,
        }

    logs = "".join(p.read_text(errors="replace") for p in replicas.workdir.glob("replica-*.log"))
    return {
        **await patiently(counted),
        "runs the reconciler started": logs.count("started a run to apply it"),
        "runs the engine retried": logs.count("Background run failed, will retry"),
        "notices received": len(receiver.notices),
        "notices delivered again (deduped)": receiver.repeats,
    }


def print_totals(ledger: Ledger, totals: dict[str, int], seconds: float) -> None:
    """The ledger's totals, for `make chaos` and the report."""
    lines = [f"fault test: {seconds:.0f} s, {REPLICAS} replicas, {CLIENTS} clients", *ledger.faults]
    lines += [f"  {name}: {count}" for name, count in totals.items()]
    print("\n".join(lines))


BURST = 12


async def test_answers_accepted_by_a_replica_killed_at_once_are_applied_once(replicas, business, layer):
    """kill after accepting: 12 approvals sent to one replica, SIGKILLed once 4 of them are decided.

    Some were accepted (decision, receipts, audit record) with no run yet: the client's re-sends
    to the survivor get that decision (it becomes their run, or "already applied") or the
    reconciler runs it; each ends with one refund, one accepted record, a verified trail.
    """
    victim, survivor = alive(replicas)[-2:]
    async with http(victim, "requester1") as requester:
        orders = [await patiently(lambda: add_order(business, 450)) for _ in range(BURST)]
        approvals = [Approval(order_id) for order_id in orders]
        await asyncio.gather(*(pause(replicas, a) for a in approvals))
        unpaused = [(a.order_id, a.thread_id, a.outcome, a.told) for a in approvals if not a.interrupt_id]
        # a message of its own: in the diff of a list pytest cuts each item's evidence short
        assert not unpaused, "these refunds never waited for approval:\n" + "\n".join(map(str, unpaused))
        del requester

    def decided() -> int:
        with layer.connect() as conn:
            return len(list(conn.scalars(select(decisions.c.decision_id))))

    before = decided()
    index = replicas.urls.index(victim)

    def kill_once_accepted() -> None:
        deadline = time.monotonic() + 30
        while decided() < before + BURST // 3 and time.monotonic() < deadline:
            time.sleep(0.001)
        SERVING.discard(victim)
        replicas.stop(index, signal.SIGKILL)

    async def first_send(approval: Approval) -> None:
        async with http(victim, "supervisor1") as client:
            headers = {"Idempotency-Key": f"ledger-{approval.order_id}"}
            body, path = approve(approval.interrupt_id), f"/threads/{approval.thread_id}/runs"
            try:
                response = await client.post(path, json=body, headers=headers)
                approval.told.append(gist(response))
            except httpx.HTTPError as error:
                approval.told.append(type(error).__name__)

    await asyncio.gather(asyncio.to_thread(kill_once_accepted), *(first_send(a) for a in approvals))
    lost = [a for a in approvals if a.told[-1] != "200"]
    for approval in lost[::2]:  # half are sent again at once; the rest are left to the reconciler
        await decide(replicas, approval)

    def reconciled() -> bool:
        with layer.connect() as conn:
            states = conn.scalars(
                select(decisions.c.state).where(decisions.c.thread_id.in_([a.thread_id for a in lost]))
            )
            return all(state != "accepted" for state in states)

    await until(lambda: asyncio.to_thread(reconciled), seconds=60, every=0.5)
    for approval in lost[
        1::2
    ]:  # applied by the reconciler ("already applied"), or never accepted (answerable)
        await decide(replicas, approval)
    await settled(replicas, Ledger(approvals), business)
    async with http(survivor, "supervisor1") as supervisor:
        problems = [p for a in approvals for p in await check_one(supervisor, business, a)]
    with layer.connect() as conn:
        rows = list(conn.execute(select(decisions.c.thread_id, decisions.c.attempts)))
    ours = {a.thread_id for a in approvals}
    taken_over = sum(1 for thread_id, attempts in rows if thread_id in ours and attempts > 1)
    logs = "".join(p.read_text(errors="replace") for p in replicas.workdir.glob("replica-*.log"))
    print(
        f"kill after accepting: {BURST} approvals, told {Counter(' > '.join(a.told) for a in approvals)}, "
        f"{taken_over} accepted without a run and applied later, "
        f"{logs.count('started a run to apply it')} run(s) started by the reconciler in this module"
    )
    assert problems == [], "\n".join(problems)
