"""An edit in an answer, checked: one spelling, text typed as the tool's types, allowed on its new args.

A reviewer's edit is authorised again on its edited arguments, by the agent's gates
(`edit_policy`): an edit may not change what the gate fixes (`fixed_on_edit`), and the
edited call may need another decider. Pure, over an `Accepted` answer (`server.decisions.pending`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from hitl.contracts import answers
from hitl.contracts.edits import CANONICAL, coerce_text_args, nul_free, typed_text
from hitl.policy.groups import is_decider, who
from server.decisions.pending import Accepted, ResumeRefused

if TYPE_CHECKING:
    from hitl.contracts.interrupts import Decider
    from hitl.policy.overrides import PolicyCatalog
    from server.identity.users import User


EditPolicy = Callable[[str, Mapping[str, Any], Mapping[str, Any]], str | None]
"""(tool, requested args, edited args) -> who must decide the edited call, or a refusal in words."""


def coerce_edits(item: Accepted) -> None:
    """Turn an edit's text values into the numbers and booleans its tool takes, in place.

    The answer is the resume payload itself, so the coerced values are what the graph gets. An edit
    spelled the LangGraph JS way alone (`editedAction`) gets the `edited_action` the graph reads.
    """
    value = item.pending.value if isinstance(item.pending.value, dict) else {}
    for action, decision in _edit_pairs(item):
        if "edited_action" not in decision and "editedAction" in decision:
            decision["edited_action"] = decision["editedAction"]
        tool = answers.tool_of(str(action.get("agent") or value.get("agent")), str(action.get("name")))
        for key in ("edited_action", "editedAction"):
            edited = decision.get(key)
            if isinstance(edited, dict) and isinstance(edited.get("args"), dict):
                edited["args"] = coerce_text_args(edited["args"], tool)


def no_loose_text(item: Accepted) -> None:
    """Refuse (422) an edit that still holds text where its tool takes a number or a boolean.

    Run after the schema check, which refuses text that reads as no number at all ("ten"), and
    would have read `"300 "` or `"3e2"` as 300.
    """
    value = item.pending.value if isinstance(item.pending.value, dict) else {}
    for action, decision in _edit_pairs(item):
        tool = answers.tool_of(str(action.get("agent") or value.get("agent")), str(action.get("name")))
        args = decision["edited_action"]["args"]
        if loose := typed_text(args, tool):
            got = str(args[loose[0]])[:40]
            msg = f"Edit of {action.get('name')}: {loose[0]} must be {CANONICAL} (got {got!r})."
            raise ResumeRefused(422, msg)


def no_nul(answer: object) -> None:
    """Refuse (422) an answer with a NUL byte anywhere in it."""
    try:
        nul_free(answer, "resume")
    except ValueError as error:
        raise ResumeRefused(422, str(error)) from None


def _edit_pairs(item: Accepted) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(action, edit decision) for each edit in an answer to a batched or per-call tool approval."""
    value = item.pending.value if isinstance(item.pending.value, dict) else {}
    answer = item.answer if isinstance(item.answer, dict) else {}
    decisions = answer.get("decisions")
    if isinstance(value.get("action_requests"), list):  # read before the answer is checked: any shape
        pairs = zip(value["action_requests"], decisions if isinstance(decisions, list) else [], strict=False)
    elif value.get("type") == "tool_approval":
        pairs = zip([value], [answer], strict=False)
    else:
        return []
    return [
        (action, decision)
        for action, decision in pairs
        if isinstance(action, dict) and isinstance(decision, dict) and decision.get("type") == "edit"
    ]


def edits_of(item: Accepted) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(tool, requested args, edited args) of each edit in an answer."""
    edits = _edit_pairs(item)
    for _, decision in edits:
        if "editedAction" in decision and decision["editedAction"] != decision["edited_action"]:
            raise ResumeRefused(
                422, f"Edit of {item.pending.subject}: editedAction and edited_action differ; send one."
            )
    return [
        (str(action.get("name")), dict(action.get("args") or {}), dict(decision["edited_action"]["args"]))
        for action, decision in edits
    ]


def authorise_edit(  # noqa: PLR0913, PLR0917  (who edits what, under which policy)
    policy: EditPolicy | None,
    user: User,
    owner: str | None,
    name: str,
    requested: dict[str, Any],
    edited: dict[str, Any],
) -> None:
    """Refuse (403) an edit `user` may not make: one that changes a fixed arg, or needs another decider."""
    if policy is None:
        return
    needed = policy(name, requested, edited)
    if needed is None:
        return
    if not is_decider(needed):  # a refusal in words, never a group name
        raise ResumeRefused(403, f"The edit of {name} is refused: {needed}")
    if not user.may_decide(cast("Decider", needed), owner):
        raise ResumeRefused(
            403,
            f"{user.identity} ({user.role}) may not edit {name} to {edited}: that call needs {who(needed)}.",
        )


def edit_policy(catalog: PolicyCatalog | None) -> EditPolicy | None:
    """The edit check of an agent's gates: the strictest decider of the edited call, or a refusal.

    A refusal (any text other than a decider) names an argument the edit may not change. A group
    (`finance`) counts as stricter than the roles. Edited
    args the business records refuse (a gate's `check_args`: a refund above what was paid) raise
    a 422 naming the argument; the check may read the business database, so run it off the loop.

    Raises:
        ResumeRefused: 422 from the returned check, for edited args a gate's `check_args` refuses.
    """
    if catalog is None:
        return None
    rank = {"reviewer": 1, "owner": 1, "supervisor": 2}

    def check(name: str, requested: Mapping[str, Any], edited: Mapping[str, Any]) -> str | None:
        gates = catalog.gates.get(name) or ()
        for gate in gates:
            if changed := sorted(a for a in gate.fixed_on_edit if edited.get(a) != requested.get(a)):
                return f"an edit may not change {', '.join(changed)}."
        for gate in gates:
            if problem := gate.args_problem(edited):
                raise ResumeRefused(422, f"The edit of {name} is refused: {problem}.")
        roles = [gate.required_role(edited) for gate in gates]
        return max(roles, key=lambda r: rank.get(r, 3)) if roles else None

    return check
