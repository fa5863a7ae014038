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
from pydantic import TypeAdapter
from typing_extensions import TypedDict

Decider = Literal["owner", "reviewer", "supervisor"]
"""Who may answer an interrupt: the thread's owner, a reviewer, or only a supervisor."""

__all__ = [
    "ActionRequest",
    "ApproveDecision",
    "BatchedApprovalRequest",
    "Decider",
    "Decision",
    "DecisionType",
    "EditDecision",
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


class BatchedResponse(TypedDict):
    """The answer to a `BatchedApprovalRequest`: one decision per action, in order."""

    decisions: list[Decision]


PUBLISHED: dict[str, Any] = {
    "BatchedApprovalRequest": BatchedApprovalRequest,
    "BatchedResponse": BatchedResponse,
    "ToolApprovalRequest": ToolApprovalRequest,
    "Decision": Decision,
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
