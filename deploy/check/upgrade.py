"""The rolling upgrade: each replica recreated from a newer commit while the other one serves.

The commit is made in the check's copy of the checkout; compose rebuilds the image and recreates
one replica at a time, as deploy/README.md ("Upgrade one replica at a time") tells users. Not for
what the approvals must show afterwards beyond the upgrade's own (`deploy.check.steps`).
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import TYPE_CHECKING

from deploy.check.approvals import Replica, expect, until
from deploy.check.podman import say
from deploy.check.stack import commit
from deploy.check.steps import REVIEWER, START_SECONDS, pause_refunds, refunds_of, replicas

if TYPE_CHECKING:
    from deploy.check.stack import Stack
    from deploy.check.steps import Ledger


class Watch(threading.Thread):
    """Polls a replica's /ok and inbox while another is upgraded; counts what failed."""

    def __init__(self, replica: Replica) -> None:
        """Watch `replica` until `stop`."""
        super().__init__(daemon=True)
        self.replica = replica
        self.calls = 0
        self.failures: list[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        """Poll every half second."""
        while not self.done.is_set():
            self.calls += 1
            try:
                if not self.replica.ok():
                    self.failures.append("/ok said no")
                self.replica.inbox()
            except Exception as error:  # noqa: BLE001  (every failure is counted and reported)
                self.failures.append(repr(error))
            time.sleep(0.5)

    def stop(self) -> None:
        """Stop polling."""
        self.done.set()
        self.join()


def upgrade_one(stack: Stack, service: str, serving: Replica) -> None:
    """Recreate `service` from the newest image while `serving` (the other replica) answers throughout."""
    old = stack.podman.inspect(stack.container(service))["Image"]
    other = "replica-2" if service == "replica-1" else "replica-1"
    other_id = stack.podman.inspect(stack.container(other))["Id"]
    watch = Watch(serving)
    watch.start()
    try:
        stack.compose_run("up", "-d", "--no-deps", "--force-recreate", service)
        until(lambda: stack.podman.healthy(stack.container(service)), f"{service} healthy", START_SECONDS, 2)
    finally:
        watch.stop()
    expect(not watch.failures, f"{other} failed while {service} was upgraded: {watch.failures[:5]}")
    expect(stack.podman.inspect(stack.container(service))["Image"] != old, f"{service} runs its old image")
    expect(stack.podman.inspect(stack.container(other))["Id"] == other_id, f"{other} was recreated too")
    say(f"  {service} upgraded; {other} answered all {watch.calls} polls meanwhile")


def rolling_upgrade(stack: Stack, ledger: Ledger) -> None:
    """replica-1, then replica-2, rebuilt from a newer commit while the other serves; nothing pending lost."""
    paused = pause_refunds(stack, ledger, 2, through=0)
    marker = f"deploy-check upgrade {secrets.token_hex(4)}"
    changelog = stack.copy / "CHANGELOG.md"
    changelog.write_text(f"{changelog.read_text()}\n<!-- {marker} -->\n")
    revision = commit(stack.copy, marker)
    say(f"  newer commit {revision[:12]} in the copy; building replica-1's image from it")
    stack.compose_run("build", "replica-1")
    on_1, on_2 = replicas(stack, REVIEWER)
    upgrade_one(stack, "replica-1", on_2)
    shown = stack.podman.podman(
        "exec", stack.container("replica-1"), "grep", "-c", marker, "/app/CHANGELOG.md"
    )
    expect(shown.stdout.strip() == "1", "replica-1 does not run the newer commit")
    expect({t for t, _ in paused.values()} <= on_1.inbox(), "pending refunds missing on upgraded replica-1")
    (first, (thread_1, interrupt_1)), (second, (thread_2, interrupt_2)) = paused.items()
    on_1.approve(thread_1, interrupt_1).raise_for_status()
    ledger.approved.add(first)
    upgrade_one(stack, "replica-2", on_1)
    expect(thread_2 in on_2.inbox(), "the pending refund is missing on upgraded replica-2")
    on_2.approve(thread_2, interrupt_2).raise_for_status()
    ledger.approved.add(second)
    for order_id in (first, second):
        expect(refunds_of(stack, order_id) == 1, f"{order_id}: {refunds_of(stack, order_id)} refunds, not 1")
    say(f"  {first} approved on upgraded replica-1, {second} on upgraded replica-2; each refunded once")
