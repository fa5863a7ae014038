"""What waits on a thread and what an answer names: pending interrupts, matched answers, refusals.

`Pending` is one interrupt as the server reads it from a thread's state (who must decide it,
its deadline, what it asks about); `Accepted` an answer matched to it; `ResumeRefused` the
refusal of an answer, with its HTTP status and words for its sender. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hitl.contracts.asks import deciders_of

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hitl.contracts.interrupts import Decider


class ResumeRefused(Exception):  # noqa: N818  (a refusal, not a crash)
    """A resume the server will not apply; nothing was saved."""

    def __init__(self, status: int, message: str) -> None:
        """Refuse with HTTP `status` and a message for the person who sent it."""
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Pending:
    """One interrupt waiting on a thread, as the server reports it."""

    id: str
    value: Any
    response_schema: dict[str, Any] | None = None
    escalated_to: Decider | None = None

    @classmethod
    def from_thread(cls, thread: dict[str, Any]) -> list[Pending]:
        """The interrupts a `threads.get` record lists.

        Under `langgraph dev` that list can still hold per-call interrupts answered by an
        earlier partial resume; use `from_state` where it must be exact.
        """
        return [
            cls(id=i["id"], value=i.get("value"), response_schema=i.get("response_schema"))
            for batch in (thread.get("interrupts") or {}).values()
            for i in batch
        ]

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> list[Pending]:
        """Every interrupt still waiting in a thread's current state (`threads.get_state`)."""
        found: dict[str, Pending] = {}
        for task in state.get("tasks") or []:
            for i in task.get("interrupts") or []:
                found[i["id"]] = cls(
                    id=i["id"], value=i.get("value"), response_schema=i.get("response_schema")
                )
        return list(found.values())

    @property
    def deciders(self) -> set[Decider]:
        """Who must answer (`hitl.contracts.asks.deciders_of`); an escalation overrides them all."""
        if self.escalated_to:
            return {self.escalated_to}
        return deciders_of(self.value)

    def escalated(self, roles: Mapping[str, Decider]) -> Pending:
        """This interrupt as the server's escalation records have it (`server.records.threads.roles`)."""
        role = roles.get(self.id)
        return replace(self, escalated_to=role) if role else self

    @property
    def deadline(self) -> str | None:
        """When this approval expires (ISO), if its policy gave it a deadline."""
        value = self.value if isinstance(self.value, dict) else {}
        return value.get("deadline")

    @property
    def subject(self) -> str:
        """What is being decided, in words: 'send_invoice', 'a form', ..."""
        value = self.value if isinstance(self.value, dict) else {}
        if isinstance(value.get("action_requests"), list):
            return ", ".join(str(a.get("name")) for a in value["action_requests"])
        mcp = value.get("mcp")
        if value.get("type") == "mcp_elicitation" and isinstance(mcp, dict):
            return f"the question of {mcp.get('server')}.{mcp.get('tool')}"
        return str(value.get("name") or value.get("form") or value.get("action") or "this approval")


@dataclass(frozen=True)
class Accepted:
    """An answer matched to the interrupt it answers."""

    pending: Pending
    answer: Any
