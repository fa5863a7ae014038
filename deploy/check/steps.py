"""What `make deploy-check` asserts of the running stack, one named step each, through the published ports.

SQL is read inside the PostgreSQL container (psql), the only way in besides the replicas' ports.
`Ledger` keeps what each step asked and approved, so the last step can say every decision was
made once. The upgrade and the refused configurations have modules of their own (`upgrade`,
`bad_configuration`). Not for starting or removing the stack (`deploy.check.stack`).
"""

from __future__ import annotations

import os
import secrets
import signal
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import httpx

from deploy.check.approvals import Replica, expect, until
from deploy.check.podman import say
from deploy.check.stack import SERVICES

if TYPE_CHECKING:
    from deploy.check.stack import Stack

REVIEWER = "reviewer1"
SEEDED_ORDER = ("A3072", "requester2")
"""A demo order (300: a reviewer decides) the first refund asks for; its asking creates the tables."""
START_SECONDS = 300.0
SERVER_ERROR = 500


@dataclass
class Ledger:
    """What the check asked for and approved: order -> thread, and the orders approved."""

    threads: dict[str, str] = field(default_factory=dict)
    approved: set[str] = field(default_factory=set)


def replicas(stack: Stack, user: str) -> tuple[Replica, Replica]:
    """Clients of replica-1 and replica-2 as `user`."""
    token = stack.tokens[user]
    return Replica(stack.urls[0], token), Replica(stack.urls[1], token)


def refunds_of(stack: Stack, order_id: str) -> int:
    """How many refunds the business database holds for `order_id`."""
    query = f"SELECT count(*) FROM refunds WHERE order_id = '{order_id}'"  # noqa: S608  (an id the check made)
    [[count]] = stack.sql("business", query)
    return int(count)


def add_orders(stack: Stack, count: int) -> list[str]:
    """Insert `count` orders of 300 for requester1, delivered today (SQL as the business database's owner)."""
    ids = [f"B{secrets.randbelow(10**9):09d}" for _ in range(count)]
    rows = ", ".join(
        f"('{order_id}', 'Deploy Check', 'check@example.com', 'Grinder', 300, 'delivered', "
        "to_char(current_date, 'YYYY-MM-DD'), 'requester1')"
        for order_id in ids
    )
    columns = "order_id, customer_name, customer_email, item, amount, status, delivered_on, owner"
    stack.sql("business", f"SET ROLE business; INSERT INTO orders ({columns}) VALUES {rows}")  # noqa: S608
    return ids


def every_service_healthy(stack: Stack) -> None:
    """Each service's own health check passes (run by podman), and /ok answers on both published ports."""
    for service in SERVICES:
        until(partial(stack.podman.healthy, stack.container(service)), f"{service} healthy", START_SECONDS, 2)
        say(f"  {service}: healthy")
    for url in stack.urls:
        until(Replica(url, "").ok, f"{url}/ok", 60)
        say(f"  {url}/ok: ok")
    if (stack.copy / "web" / "dist" / "index.html").is_file():
        for url in stack.urls:
            page = httpx.get(f"{url}/app/", timeout=30)
            expect(
                page.status_code == httpx.codes.OK and "HITL reviewer" in page.text,
                f"{url}/app/: {page.status_code}",
            )
            say(f"  {url}/app/: the web app")


def databases_kept_apart(stack: Stack) -> None:
    """The business role cannot connect to the approval layer's database `hitl`; the hitl role can."""
    code, output = stack.connect_as("business", "hitl")
    expect(code != 0 and "permission denied" in output, f"the business role connected to hitl: {output}")
    code, output = stack.connect_as("hitl", "hitl")
    expect(code == 0 and output == "hitl", f"the hitl role could not connect to its database: {output}")
    say("  role business: refused by database hitl; role hitl: connects")


def layer_tables(stack: Stack, database: str) -> list[str]:
    """The approval layer's tables (hitl_*) in `database`."""
    rows = stack.sql(database, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'hitl\\_%' ORDER BY 1")
    return [name for [name] in rows]


def approval_across_replicas(stack: Stack, ledger: Ledger) -> None:
    """A refund asked through replica-1 pauses, shows in replica-2's inbox, is approved there, made once."""
    order_id, requester = SEEDED_ORDER
    asking, _ = replicas(stack, requester)
    _, reviewing = replicas(stack, REVIEWER)
    thread_id, interrupt_id = asking.ask_refund(order_id)
    ledger.threads[order_id] = thread_id
    say(f"  {order_id}: paused on replica-1 (thread {thread_id})")
    until(lambda: thread_id in reviewing.inbox(), "the paused refund in replica-2's inbox", 30)
    expect(refunds_of(stack, order_id) == 0, f"{order_id} was refunded before anyone approved it")
    reviewing.approve(thread_id, interrupt_id).raise_for_status()
    ledger.approved.add(order_id)
    until(lambda: reviewing.thread(thread_id)["status"] == "idle", "the approved thread idle", 60)
    again = reviewing.approve(thread_id, interrupt_id)
    expect(
        again.status_code < SERVER_ERROR,
        f"the same approval sent again: {again.status_code} {again.text[:300]}",
    )
    expect(refunds_of(stack, order_id) == 1, f"{order_id}: {refunds_of(stack, order_id)} refunds, not 1")
    say(f"  {order_id}: approved on replica-2 by {REVIEWER}, refunded once (sent twice: {again.status_code})")


MCP_INVOICE = ("INV-3072", "requester2")
"""A demo invoice (billing's, served by the stack's `billing` service) the MCP step voids."""


def invoice_status(stack: Stack, invoice_id: str) -> str:
    """The status billing keeps for `invoice_id` in the business database."""
    query = f"SELECT status FROM invoices WHERE invoice_id = '{invoice_id}'"  # noqa: S608  (a demo invoice id)
    return stack.sql("business", query)[0][0]


def mcp_approval_across_replicas(stack: Stack) -> None:
    """A void of a billing invoice (an MCP server's destructive tool): paused on replica-1, approved on 2."""
    invoice_id, requester = MCP_INVOICE
    asking, _ = replicas(stack, requester)
    _, reviewing = replicas(stack, REVIEWER)
    thread_id, interrupt_id = asking.ask(f"Void invoice {invoice_id}")
    value = asking.thread(thread_id)["interrupts"]
    say(f"  {invoice_id}: paused on replica-1 (thread {thread_id}, {list(value)[:1]})")
    expect(invoice_status(stack, invoice_id) == "open", f"{invoice_id} was voided before anyone approved it")
    until(lambda: thread_id in reviewing.inbox(), "the paused void in replica-2's inbox", 30)
    reviewing.approve(thread_id, interrupt_id).raise_for_status()
    until(lambda: reviewing.thread(thread_id)["status"] == "idle", "the approved thread idle", 60)
    expect(invoice_status(stack, invoice_id) == "void", f"{invoice_id} is not void after its approval")
    report = reviewing.verified(thread_id)
    expect(report.get("ok") is True, f"the MCP approval's trail does not verify: {report}")
    say(f"  {invoice_id}: voided through billing once, approved on replica-2, its receipt verified")


def pause_refunds(stack: Stack, ledger: Ledger, count: int, through: int) -> dict[str, tuple[str, str]]:
    """`count` new orders' refunds asked through replica `through` (0 or 1); order -> (thread, interrupt)."""
    asking = replicas(stack, "requester1")[through]
    paused = {}
    for order_id in add_orders(stack, count):
        paused[order_id] = asking.ask_refund(order_id)
        ledger.threads[order_id] = paused[order_id][0]
    return paused


def kill_and_restart(stack: Stack, ledger: Ledger) -> None:
    """SIGKILL (kill -9) of replica-1's main process: restarted, its pending approvals answered once each."""
    paused = pause_refunds(stack, ledger, 2, through=1)
    on_1, on_2 = replicas(stack, REVIEWER)
    until(lambda: {t for t, _ in paused.values()} <= on_1.inbox(), "the pending refunds in replica-1's inbox")
    container = stack.container("replica-1")
    before = stack.podman.inspect(container)
    pid = int(before["State"]["Pid"])
    say(f"  kill -9 {pid} (replica-1's main process, langhost serve)")
    os.kill(pid, signal.SIGKILL)
    until(
        lambda: stack.podman.inspect(container)["RestartCount"] > before["RestartCount"],
        "replica-1 restarted by its restart policy",
        60,
    )
    until(lambda: stack.podman.healthy(container), "replica-1 healthy again", START_SECONDS, 2)
    after = stack.podman.inspect(container)
    say(f"  replica-1 back: pid {after['State']['Pid']}, restart count {after['RestartCount']}")
    expect(
        {t for t, _ in paused.values()} <= on_1.inbox(), "the pending refunds left replica-1's inbox with it"
    )
    (first, (thread_1, interrupt_1)), (second, (thread_2, interrupt_2)) = paused.items()
    on_1.approve(thread_1, interrupt_1).raise_for_status()
    on_2.approve(thread_2, interrupt_2).raise_for_status()
    ledger.approved |= {first, second}
    for thread_id, interrupt_id, other in ((thread_1, interrupt_1, on_2), (thread_2, interrupt_2, on_1)):
        again = other.approve(thread_id, interrupt_id)
        expect(
            again.status_code < SERVER_ERROR, f"a second approval on the other replica: {again.status_code}"
        )
    for order_id in (first, second):
        expect(refunds_of(stack, order_id) == 1, f"{order_id}: {refunds_of(stack, order_id)} refunds, not 1")
    say(f"  {first} approved on restarted replica-1, {second} on replica-2; each refunded once")


def every_decision_once(stack: Stack, ledger: Ledger) -> None:
    """Each approved order refunded once, nothing else; every trail verified; the layer's tables apart."""
    rows = stack.sql("business", "SELECT order_id, count(*) FROM refunds GROUP BY order_id")
    counts = {order_id: int(count) for order_id, count in rows}
    expect(
        counts == dict.fromkeys(ledger.approved, 1), f"refunds by order {counts}, approved {ledger.approved}"
    )
    for order_id, thread_id in ledger.threads.items():
        for reader in replicas(stack, "supervisor1"):
            report = until(partial(reader.verified, thread_id), f"verification of {thread_id}", 30)
            expect(report["ok"], f"{order_id}'s trail does not verify on {reader.url}: {report}")
    say(f"  {len(counts)} refunds, one per approved order; {len(ledger.threads)} trails verified on each")
    expect(layer_tables(stack, "hitl"), "the approval layer's database hitl holds no hitl_* table")
    in_business = layer_tables(stack, "business")
    expect(not in_business, f"the business database holds the approval layer's tables: {in_business}")
    say(f"  the layer's tables in database hitl ({len(layer_tables(stack, 'hitl'))}), none in business")
