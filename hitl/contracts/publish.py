"""Publishes the layer's contracts as JSON Schema: `python -m hitl.contracts.publish` (`make schemas`).

Writes `hitl/contracts/schemas/contracts.json`, every contract of `interrupts` (by kind: `asks`),
`decisions`, `records` and `run_context`, and `web/src/contracts/forms.json`, the forms the served agents
register (`hitl.contracts.forms`); the web app's TypeScript types are generated from both. Not
`published_schema`, which caches the schema of an interrupt's answer while the server runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from hitl.contracts.decisions import (
    ApprovalAnswer,
    ApproveAndAllowDecision,
    BatchedResponse,
    Decision,
    DecisionType,
    McpElicitationAnswer,
)
from hitl.contracts.forms import registered
from hitl.contracts.interrupts import (
    ApprovalRequest,
    BatchedApprovalRequest,
    FormRequest,
    InterruptShapes,
    McpElicitationRequest,
    McpProvenance,
    Owner,
    Role,
    ToolApprovalRequest,
    catalogue,
)
from hitl.contracts.records import (
    Allowance,
    ApprovalReceipt,
    AuditLog,
    AuditRecord,
    AuditVerification,
    FirstLineReview,
    InboxItem,
    InboxPage,
    Me,
    RecordedDecision,
)
from hitl.contracts.run_context import PolicyOverride, RunContext

PUBLISHED: dict[str, Any] = {
    "InterruptShapes": InterruptShapes,
    "BatchedApprovalRequest": BatchedApprovalRequest,
    "BatchedResponse": BatchedResponse,
    "ToolApprovalRequest": ToolApprovalRequest,
    "Decision": Decision,
    "DecisionType": DecisionType,
    "FormRequest": FormRequest,
    "ApprovalRequest": ApprovalRequest,
    "ApprovalAnswer": ApprovalAnswer,
    "McpElicitationRequest": McpElicitationRequest,
    "McpElicitationAnswer": McpElicitationAnswer,
    "McpProvenance": McpProvenance,
    "ApprovalReceipt": ApprovalReceipt,
    "AuditRecord": AuditRecord,
    "AuditLog": AuditLog,
    "AuditVerification": AuditVerification,
    "FirstLineReview": FirstLineReview,
    "InboxItem": InboxItem,
    "InboxPage": InboxPage,
    "RecordedDecision": RecordedDecision,
    "ApproveAndAllowDecision": ApproveAndAllowDecision,
    "Allowance": Allowance,
    "PolicyOverride": PolicyOverride,
    "RunContext": RunContext,
    "Role": Role,
    "Owner": Owner,
    "Me": Me,
}
SCHEMA_PATH = Path(__file__).parent / "schemas" / "contracts.json"
EXAMPLES_PATH = Path(__file__).parent / "schemas" / "examples.json"
"""Example values of each interrupt kind, published as their shape's JSON Schema `examples`: every
client's tests read them from `contracts.json`, so a kind added to the contract comes with values each
client must show (tests/unit/contracts/test_every_client_reads_every_shape.py, the web app's tests)."""
FORMS_PATH = Path("web") / "src" / "contracts" / "forms.json"
"""Where `main` publishes the served agents' forms: the web app generates its types from both files."""


def contracts_schema() -> dict[str, Any]:
    """One JSON Schema document whose `$defs` hold every published contract of the layer.

    Each interrupt shape carries the example values `EXAMPLES_PATH` gives its kind (none: an empty list).
    """
    document = _document("HitlContracts", PUBLISHED)
    examples = json.loads(EXAMPLES_PATH.read_text())
    for kind, shape in catalogue().shapes.items():
        document["$defs"][shape.__name__]["examples"] = examples.get(kind, [])
    return document


def forms_schema() -> dict[str, Any]:
    """The same for the forms the agents registered (`hitl.contracts.forms`): each form's value and answer."""
    shapes: dict[str, Any] = {}
    for form in registered():
        if form.request is not None:
            shapes[form.request.__name__] = form.request
        shapes[form.answer.__name__] = form.answer
    return _document("HitlForms", shapes)


def _document(title: str, shapes: dict[str, Any]) -> dict[str, Any]:
    definitions: dict[str, Any] = {}
    for name, shape in shapes.items():
        schema = TypeAdapter(shape).json_schema(ref_template="#/$defs/{model}")
        definitions.update(schema.pop("$defs", {}))
        definitions[name] = schema
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "type": "object",
        "properties": {name: {"$ref": f"#/$defs/{name}"} for name in shapes},
        "$defs": definitions,
    }


def main() -> None:
    """Publish the layer's contracts next to this module, and the served agents' forms for the web app.

    Run by `make schemas` where `langgraph.json` is: its graphs are loaded as the server loads
    them, so the forms their tools register are published too (`FORMS_PATH`).
    """
    from hitl.policy.served import load_graphs  # noqa: PLC0415  (loads the agents: only for publishing)

    SCHEMA_PATH.parent.mkdir(exist_ok=True)
    SCHEMA_PATH.write_text(json.dumps(contracts_schema(), indent=2, sort_keys=True) + "\n")
    sys.stdout.write(f"wrote {SCHEMA_PATH}\n")
    load_graphs(Path("langgraph.json"))
    FORMS_PATH.write_text(json.dumps(forms_schema(), indent=2, sort_keys=True) + "\n")
    sys.stdout.write(f"wrote {FORMS_PATH}\n")


if __name__ == "__main__":
    main()
