"""One thread of an in-process agent, driven as a client drives it, optionally as a person the server names.

Outside the server a run names nobody and says so (`hitl.gate.caller.in_process`: its tools work on
every record), and the gate checks no role; with `as_person` the run carries what the server's
admission writes into every run it admits (the caller, their roles, the thread's owner), so the
graph's own wall (deciders, four eyes) is checked as it is there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langgraph.types import Command

from hitl.gate.caller import in_process

SERVER_RUN = {"run_id": "run-in-test", "assistant_id": "assistant-in-test", "graph_id": "graph-in-test"}
"""What the Agent Server's run store writes into every run's `configurable` (`caller.SERVER_RUN_KEYS`):
a run carrying it is a server run, whose tools work on the records of the person it names, or none."""


@dataclass
class Conversation:
    """One thread of an in-process agent; `owner` (name, role) started it, when a server would say so."""

    graph: Any
    thread_id: str
    owner: tuple[str, str] | None = None
    _person: dict[str, Any] = field(default_factory=dict)

    @property
    def config(self) -> dict[str, Any]:
        """The run config: as the server would name the person (`as_person`), else explicitly in-process."""
        if self._person:
            return {"configurable": {"thread_id": self.thread_id, **self._person}}
        return in_process(self.thread_id)

    def as_person(self, name: str, role: str) -> Conversation:
        """This thread, its next run made by `name` with `role`, as the server would start and name it."""
        roles = ["reviewer", "supervisor"] if role == "supervisor" else [role]
        owner_name, owner_role = self.owner or (name, role)
        self._person = {
            **SERVER_RUN,
            "langgraph_auth_user_id": name,
            "langgraph_auth_permissions": roles,
            "hitl_acting_for": {"identity": owner_name, "roles": [owner_role]},
            "hitl_requested_by": [owner_name],
        }
        return self

    def say(self, text: str) -> Any:
        return self.graph.invoke({"messages": [{"role": "user", "content": text}]}, self.config, version="v2")

    def resume(self, answer: Any) -> Any:
        return self.graph.invoke(Command(resume=answer), self.config, version="v2")

    def last_words(self) -> str:
        return self.graph.get_state(self.config).values["messages"][-1].text

    def pending(self) -> tuple[Any, ...]:
        """The interrupts the thread waits on now, as a client would read them."""
        return self.graph.get_state(self.config).interrupts
