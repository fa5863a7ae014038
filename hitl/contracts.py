"""The interrupt and decision contracts, defined once and published as JSON Schema.

Every client (SDK helpers, CLI, web app) reads these shapes; the web app's TypeScript
types are generated from `hitl/schemas/contracts.json` (`python -m hitl.contracts`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal, NotRequired

from langchain.agents.middleware.human_in_the_loop import (
    ApproveDecision,
    Decision,
    DecisionType,
    EditDecision,
    InterruptMode,
    RejectDecision,
    RespondDecision,
)
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict

Decider = Literal["owner", "reviewer", "supervisor"]
"""Who may answer an interrupt: the thread's owner, a reviewer, or only a supervisor."""

__all__ = [
    "ActionRequest",
    "ApprovalAnswer",
    "ApprovalReceipt",
    "ApprovalRequest",
    "ApproveDecision",
    "AuditRecord",
    "BatchedApprovalRequest",
    "Decider",
    "Decision",
    "DecisionType",
    "EditDecision",
    "FlightBookingAnswer",
    "FlightBookingForm",
    "InterruptMode",
    "RejectDecision",
    "RespondDecision",
    "ReviewConfig",
    "ToolApprovalRequest",
]


class ActionRequest(TypedDict):
    """One gated tool call inside a batched approval request."""

    name: str
    args: dict[str, Any]
    description: str
    tool_call_id: str
    agent: str


class ReviewConfig(TypedDict):
    """What a reviewer may do with the action request at the same position."""

    action_name: str
    allowed_decisions: list[DecisionType]
    required_role: Decider


class BatchedApprovalRequest(TypedDict):
    """Batched mode: every gated call of one model turn, answered with `{"decisions": [...]}`."""

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]
    agent: str


class ToolApprovalRequest(TypedDict):
    """Per-call mode: one gated call, answered by interrupt id with one decision."""

    type: Literal["tool_approval"]
    tool_call_id: str
    name: str
    args: dict[str, Any]
    description: str
    agent: str
    required_role: Decider
    allowed_decisions: NotRequired[list[DecisionType]]


class ApprovalReceipt(TypedDict):
    """A decision the server accepted, kept in the thread's state (`approval_receipts`).

    Not a chat message: the model never reads it; clients show resolved cards from it.
    """

    interrupt_id: str
    tool_call_id: str
    agent: str
    tool: str
    requested_args: dict[str, Any]
    decision: str
    final_args: dict[str, Any] | None
    message: str | None
    reviewer: str
    roles: list[str]
    decided_at: str


class AuditRecord(ApprovalReceipt):
    """One line of a thread's audit trail: an accepted decision or a refused attempt."""

    thread_id: str
    outcome: Literal["accepted", "refused"]
    refusal: NotRequired[str]


class FlightContext(TypedDict):
    """What the person books: the flight as the timetable has it (price is the economy fare)."""

    flight_id: str
    origin: str
    destination: str
    date: str
    price: float


class FlightBookingForm(TypedDict):
    """A form `book_flight` raises itself; answered by interrupt id with a `FlightBookingAnswer`."""

    type: Literal["form"]
    form: Literal["flight-booking"]
    title: str
    context: FlightContext
    agent: str
    tool_call_id: str


SeatClass = Literal["economy", "premium", "business"]


class FlightBookingAnswer(BaseModel):
    """The answer to a `FlightBookingForm`: book it (with these options) or cancel."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "cancel"] = Field(description="Book the flight, or book nothing.")
    seat_class: SeatClass = Field(default="economy", description="Cabin to book.")
    insurance: bool = Field(default=False, strict=True, description="Add travel insurance.")


class ApprovalRequest(TypedDict):
    """A sign-off `request_approval` asks for (e.g. a deploy); answered with an `ApprovalAnswer`."""

    type: Literal["approval_request"]
    action: str
    message: str
    agent: str
    tool_call_id: str


class ApprovalAnswer(BaseModel):
    """The answer to an `ApprovalRequest`: yes or no, and why."""

    model_config = ConfigDict(extra="forbid")

    approved: bool = Field(strict=True, description="Whether the action may go ahead.")
    reason: str = Field(default="", description="Why; the agent reports it.")


class BatchedResponse(TypedDict):
    """The answer to a `BatchedApprovalRequest`: one decision per action, in order."""

    decisions: list[Decision]


PUBLISHED: dict[str, Any] = {
    "BatchedApprovalRequest": BatchedApprovalRequest,
    "BatchedResponse": BatchedResponse,
    "ToolApprovalRequest": ToolApprovalRequest,
    "Decision": Decision,
    "FlightBookingForm": FlightBookingForm,
    "FlightBookingAnswer": FlightBookingAnswer,
    "ApprovalRequest": ApprovalRequest,
    "ApprovalAnswer": ApprovalAnswer,
    "ApprovalReceipt": ApprovalReceipt,
    "AuditRecord": AuditRecord,
}
SCHEMA_PATH = Path(__file__).parent / "schemas" / "contracts.json"


def contracts_schema() -> dict[str, Any]:
    """One JSON Schema document whose `$defs` hold every published contract."""
    definitions: dict[str, Any] = {}
    for name, shape in PUBLISHED.items():
        schema = TypeAdapter(shape).json_schema(ref_template="#/$defs/{model}")
        definitions.update(schema.pop("$defs", {}))
        definitions[name] = schema
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "HitlContracts",
        "type": "object",
        "properties": {name: {"$ref": f"#/$defs/{name}"} for name in PUBLISHED},
        "$defs": definitions,
    }


def main() -> None:
    """Write the published schema next to this module (run by `make schemas`)."""
    SCHEMA_PATH.parent.mkdir(exist_ok=True)
    SCHEMA_PATH.write_text(json.dumps(contracts_schema(), indent=2, sort_keys=True) + "\n")
    sys.stdout.write(f"wrote {SCHEMA_PATH}\n")


if __name__ == "__main__":
    main()
