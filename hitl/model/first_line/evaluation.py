"""`hitl triage eval`: a first-line reviewer run over a team's labelled calls, before the team delegates.

A labelled set is JSON Lines, one call a line: `{"tool": "notify_customer", "args": {...}, "label":
"approve" | "reject" | "person"}` (what a person says should happen; `agent` optional, to pick
a subagent's gate). `evaluate` puts each call through what the server would do: the gate's own
pause and bounds, then the reviewer's classifier (its failures count as "sent to people"), and
counts a confusion matrix of label against outcome; the false-approval rate is the share of calls
labelled otherwise that it approved. Pure but for the classifier's calls; the CLI prints it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from hitl.model.first_line.classifier import ClassifierFailure
from hitl.model.first_line.verdict import ReviewedCall

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from hitl.model.first_line.classifier import Classifier
    from hitl.policy.gates import ToolGate

Label = Literal["approve", "reject", "person"]
LABELS: tuple[Label, ...] = ("approve", "reject", "person")
OUTCOMES = ("approve", "reject", "person", "not_asked")
"""What became of a call: the model approved or rejected it; people decide it (the model referred
it, failed, or it is outside its bounds); or it runs without anyone (the gate does not pause it)."""


class LabelledSetError(ValueError):
    """A labelled set that cannot be read; the message names the line and what is wrong."""


@dataclass(frozen=True)
class Labelled:
    """One labelled call."""

    line: int
    tool: str
    args: dict[str, Any]
    label: Label
    agent: str | None = None


@dataclass
class Evaluation:
    """The confusion matrix (label -> outcome -> count), and each call's outcome and why."""

    matrix: dict[str, Counter[str]] = field(default_factory=lambda: {label: Counter() for label in LABELS})
    outcomes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def calls(self) -> int:
        """How many calls were evaluated."""
        return sum(sum(row.values()) for row in self.matrix.values())

    @property
    def false_approvals(self) -> int:
        """Calls labelled reject or person that the model approved."""
        return self.matrix["reject"]["approve"] + self.matrix["person"]["approve"]

    @property
    def false_approval_rate(self) -> float:
        """False approvals over every call labelled reject or person (0 when there are none)."""
        others = sum(self.matrix["reject"].values()) + sum(self.matrix["person"].values())
        return round(self.false_approvals / others, 4) if others else 0.0

    @property
    def decided_share(self) -> float:
        """The share of asked calls the model decided itself (approve or reject)."""
        asked = sum(row[o] for row in self.matrix.values() for o in ("approve", "reject", "person"))
        decided = sum(row["approve"] + row["reject"] for row in self.matrix.values())
        return round(decided / asked, 4) if asked else 0.0

    def as_json(self) -> dict[str, Any]:
        """The evaluation as `--json` prints it."""
        return {
            "calls": self.calls,
            "matrix": {label: {o: self.matrix[label][o] for o in OUTCOMES} for label in LABELS},
            "false_approvals": self.false_approvals,
            "false_approval_rate": self.false_approval_rate,
            "decided_share": self.decided_share,
            "outcomes": self.outcomes,
        }


def read_labelled(lines: Iterable[str]) -> list[Labelled]:
    """The labelled calls of a JSON Lines text (blank lines skipped).

    Raises:
        LabelledSetError: naming the line: not a JSON object, no tool, args not an object, an unknown label.
    """
    found = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            item = json.loads(text)
        except ValueError as error:
            msg = f"line {number}: not JSON ({error})"
            raise LabelledSetError(msg) from None
        if not isinstance(item, dict) or not isinstance(item.get("tool"), str) or not item["tool"]:
            msg = f"line {number}: needs a JSON object with a 'tool' name"
            raise LabelledSetError(msg)
        if not isinstance(item.get("args"), dict):
            msg = f"line {number}: 'args' must be a JSON object"
            raise LabelledSetError(msg)
        if item.get("label") not in LABELS:
            msg = f"line {number}: 'label' must be one of {', '.join(LABELS)} (got {item.get('label')!r})"
            raise LabelledSetError(msg)
        agent = item.get("agent")
        found.append(
            Labelled(
                number, item["tool"], item["args"], item["label"], agent if isinstance(agent, str) else None
            )
        )
    return found


def evaluate(
    calls: Iterable[Labelled],
    gate_of: Callable[[Labelled], tuple[str, ToolGate] | None],
    classifier_of: Callable[[ToolGate], Classifier],
) -> Evaluation:
    """Each call through the gate's pause and bounds, then its first-line reviewer; counted against its label.

    `gate_of` gives the agent and gate a call is reviewed under (None: no gate names a first-line
    reviewer for it, which is an error of the set or the config, raised as `LabelledSetError`).
    """
    evaluation = Evaluation()
    for call in calls:
        found = gate_of(call)
        if found is None or found[1].first_line is None:
            msg = f"line {call.line}: no gate names a first-line reviewer for {call.tool}"
            raise LabelledSetError(msg)
        agent, gate = found
        outcome, why = _outcome(call, agent, gate, classifier_of)
        evaluation.matrix[call.label][outcome] += 1
        evaluation.outcomes.append(
            {"line": call.line, "tool": call.tool, "label": call.label, "outcome": outcome, "why": why}
        )
    return evaluation


def _outcome(
    call: Labelled, agent: str, gate: ToolGate, classifier_of: Callable[[ToolGate], Classifier]
) -> tuple[str, str]:
    if not gate.pauses(call.args):
        return "not_asked", "the gate does not pause it: it runs without anyone"
    if (outside := gate.not_delegated(call.args)) is not None:
        return "person", f"outside its bounds: {outside}"
    reviewer = gate.first_line
    assert reviewer is not None  # noqa: S101  (checked by the caller)
    described = gate.describe(call.tool, call.args, f"{agent} asks before acting")
    try:
        said = classifier_of(gate).classify(
            ReviewedCall(reviewer.name, agent, call.tool, described, call.args)
        )
    except ClassifierFailure as failed:
        return "person", f"it failed ({failed.cause}): {failed.message}"
    decision, reason, _cause = reviewer.bounded(said.decision, said.reason)
    return ("person" if decision == "refer" else decision), reason
