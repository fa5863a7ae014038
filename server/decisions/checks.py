"""The one check every resume passes before anything is saved: who answers, and what.

Pure: given the thread's pending interrupts, its owner, the caller and the resume payload,
either returns the answers matched to their interrupts or raises `ResumeRefused` with an
HTTP status and a message naming what is wrong. The auth layer calls it for every path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import jsonschema_rs

from hitl.contracts import answers
from hitl.contracts.edits import coerce_text_args, nul_free

if TYPE_CHECKING:
    from hitl.contracts.interrupts import Decider
    from hitl.policy.overrides import PolicyCatalog
    from server.identity.users import User

INTERRUPT_ID = re.compile(r"^[0-9a-f]{32}$")
MAX_ERRORS_SHOWN = 3


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
        """Who must answer: every action of a batch counts; an escalation overrides them all."""
        if self.escalated_to:
            return {self.escalated_to}
        value = self.value if isinstance(self.value, dict) else {}
        if isinstance(value.get("review_configs"), list):
            return {rc.get("required_role", "reviewer") for rc in value["review_configs"]}
        if value.get("required_role"):
            return {value["required_role"]}
        return {"owner"} if value.get("type") == "form" else {"reviewer"}

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
        return str(value.get("name") or value.get("form") or value.get("action") or "this approval")


@dataclass(frozen=True)
class Accepted:
    """An answer matched to the interrupt it answers."""

    pending: Pending
    answer: Any


EditPolicy = Callable[[str, Mapping[str, Any], Mapping[str, Any]], str | None]
"""(tool, requested args, edited args) -> who must decide the edited call, or a refusal in words."""


def check_resume(  # noqa: PLR0913  (what is answered, by whom, within which limits)
    resume: object,
    pending: list[Pending],
    *,
    user: User,
    owner: str | None,
    max_bytes: int,
    policy: EditPolicy | None = None,
) -> list[Accepted]:
    """The answers in `resume`, each matched, authorised and valid; all or nothing.

    An edit is authorised again on its edited arguments by `policy` (the agent's gates).

    Raises:
        ResumeRefused: 409 nothing pending, 413 too large, 422 malformed or invalid,
            403 the user may not decide one of the answered interrupts or edits.
    """
    if not pending:
        raise ResumeRefused(409, "This thread has no pending approval to answer.")
    size = len(json.dumps(resume, default=str))
    if size > max_bytes:
        raise ResumeRefused(413, f"The resume payload is {size} bytes; the limit is {max_bytes}.")
    answers = _match(resume, pending)
    for item in answers:
        needed = sorted(d for d in item.pending.deciders if not user.may_decide(d, owner))
        if needed:
            who = " and ".join("the thread's owner" if d == "owner" else f"a {d}" for d in needed)
            raise ResumeRefused(
                403, f"{user.identity} ({user.role}) may not answer {item.pending.subject}: it needs {who}."
            )
    for item in answers:
        _no_nul(item.answer)
        _coerce_edits(item)
        _validate(item)
    for item in answers:
        _not_self_approved(item, user)
        _not_approved_twice(item, user)
    for item in answers:
        for name, requested, edited in _edits(item):
            _authorise_edit(policy, user, owner, name, requested, edited)
    return answers


SELF_DECISIONS = frozenset({"approve", "edit", "respond"})
"""What the person who asked may not answer themselves (separation of duties); a reject withdraws."""


def _not_self_approved(item: Accepted, user: User) -> None:
    """Refuse (403) an answer that approves, edits or answers a call its sender asked for.

    `requested_by` is written by the gate when the call paused (the thread's owner and that
    run's caller); a review config with `self_approval`, or an owner's own question, is exempt.
    """
    value = item.pending.value if isinstance(item.pending.value, dict) else {}
    asked = value.get("requested_by")
    if not isinstance(asked, list) or user.identity not in asked:
        return
    answer = item.answer if isinstance(item.answer, dict) else {}
    if isinstance(value.get("action_requests"), list):
        configs = value.get("review_configs") or []
        pairs = list(zip(value["action_requests"], configs, answer.get("decisions") or [], strict=False))
        own = [
            str(action.get("name"))
            for action, config, decision in pairs
            if _four_eyes(config) and isinstance(decision, dict) and decision.get("type") in SELF_DECISIONS
        ]
    elif value.get("type") in {"tool_approval", "approval_request"}:
        decided = answer.get("type") in SELF_DECISIONS or answer.get("approved") is True
        own = [item.pending.subject] if _four_eyes(value) and decided else []
    else:
        own = []
    if own:
        raise ResumeRefused(
            403,
            f"{user.identity} asked for {', '.join(own)}, so someone else must approve it "
            "(separation of duties); a reject withdraws it.",
        )


def _not_approved_twice(item: Accepted, user: User) -> None:
    """Refuse (403) a second approve by someone who already approved these args (a quorum counts people).

    `approved_by` is written by the gate into each round of a call that needs several approvers;
    an edit by one of them is allowed: it starts the count again on the edited args.
    """
    value = item.pending.value if isinstance(item.pending.value, dict) else {}
    answer = item.answer if isinstance(item.answer, dict) else {}
    if isinstance(value.get("action_requests"), list):
        pairs = zip(
            value["action_requests"],
            value.get("review_configs") or [],
            answer.get("decisions") or [],
            strict=False,
        )
        rounds = [
            (str(a.get("name")), c, d) for a, c, d in pairs if isinstance(c, dict) and isinstance(d, dict)
        ]
    elif value.get("type") == "tool_approval":
        rounds = [(item.pending.subject, value, answer)]
    else:
        rounds = []
    for name, config, decision in rounds:
        approved = config.get("approved_by")
        if decision.get("type") == "approve" and isinstance(approved, list) and user.identity in approved:
            needed = config.get("approvals_required")
            raise ResumeRefused(
                403,
                f"{user.identity} already approved this {name}; it needs {needed} different approvers "
                f"({len(approved)} of {needed} so far: {', '.join(str(p) for p in approved)}).",
            )


def _four_eyes(config: object) -> bool:
    """Whether a review config (or per-call value) leaves the asker out of deciding it."""
    if not isinstance(config, dict):
        return False
    return not config.get("self_approval") and config.get("required_role") != "owner"


def _coerce_edits(item: Accepted) -> None:
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


def _no_nul(answer: object) -> None:
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


def _edits(item: Accepted) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
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


def _authorise_edit(  # noqa: PLR0913, PLR0917  (who edits what, under which policy)
    policy: EditPolicy | None,
    user: User,
    owner: str | None,
    name: str,
    requested: dict[str, Any],
    edited: dict[str, Any],
) -> None:
    if policy is None:
        return
    needed = policy(name, requested, edited)
    if needed is None:
        return
    if needed not in {"owner", "reviewer", "supervisor"}:
        raise ResumeRefused(403, f"The edit of {name} is refused: {needed}")
    if not user.may_decide(cast("Decider", needed), owner):
        who = "the thread's owner" if needed == "owner" else f"a {needed}"
        raise ResumeRefused(
            403, f"{user.identity} ({user.role}) may not edit {name} to {edited}: that call needs {who}."
        )


def edit_policy(catalog: PolicyCatalog | None) -> EditPolicy | None:
    """The edit check of an agent's gates: the strictest decider of the edited call, or a refusal.

    A refusal (any text other than a role) names an argument the edit may not change. Edited
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


def _match(resume: object, pending: list[Pending]) -> list[Accepted]:
    by_id = {p.id: p for p in pending}
    if isinstance(resume, dict) and resume and all(k in by_id for k in resume):
        return [Accepted(by_id[k], v) for k, v in resume.items()]
    if isinstance(resume, dict) and (unknown := [k for k in resume if INTERRUPT_ID.match(str(k))]):
        missing = [k for k in unknown if k not in by_id]
        raise ResumeRefused(
            422, f"Unknown interrupt id(s): {', '.join(missing)}. Pending: {', '.join(by_id)}."
        )
    if len(pending) == 1:
        return [Accepted(pending[0], resume)]
    raise ResumeRefused(
        422,
        f"{len(pending)} approvals are pending; answer them by interrupt id, "
        f"as {{interrupt_id: answer}} (pending: {', '.join(by_id)}).",
    )


def _validate(item: Accepted) -> None:
    """Check the answer against the contract derived from the interrupt's value.

    The engine's `response_schema` is only a fallback for a value this package never raises:
    some API versions (langgraph-api 0.11.1) do not report it. Without either, refuse.
    """
    schema = answers.response_schema(item.pending.value) or item.pending.response_schema
    if not schema:
        raise ResumeRefused(
            422,
            f"No answer contract is known for {item.pending.subject} ({item.pending.id}), "
            "so no answer to it can be checked; nothing was saved.",
        )
    errors = sorted(
        _validator(json.dumps(schema, sort_keys=True)).iter_errors(item.answer),
        key=lambda e: (e.instance_path[-1:] not in (["type"], ["name"]), len(e.instance_path)),
    )
    if errors:
        shown = "; ".join(
            f"{'/'.join(str(p) for p in ['resume', *e.instance_path])}: {e.message}"
            for e in errors[:MAX_ERRORS_SHOWN]
        )
        raise ResumeRefused(422, f"Invalid answer for {item.pending.subject} ({item.pending.id}): {shown}")


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:  # noqa: ANN401  (jsonschema_rs has no public validator type)
    schema = json.loads(schema_json)
    return jsonschema_rs.validator_for(_by_discriminator(schema, schema.get("$defs", {})))


def _by_discriminator(node: Any, definitions: dict[str, Any]) -> Any:  # noqa: ANN401
    """Rewrite each discriminated `oneOf` as if/then branches, so errors name the real problem.

    A plain `oneOf` only says "not valid under any of the schemas"; checking the branch the
    answer's `type` names says which field is wrong, and an unknown `type` lists the allowed ones.
    Each branch is known by the `const` of the discriminating field, inline or behind a `$ref`.
    """
    if isinstance(node, list):
        return [_by_discriminator(n, definitions) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _by_discriminator(v, definitions) for k, v in node.items()}
    field = (node.get("discriminator") or {}).get("propertyName")
    if "oneOf" not in node or not isinstance(field, str):
        return node
    branches = {}
    for branch in node["oneOf"]:
        ref = branch.get("$ref", "") if isinstance(branch, dict) else ""
        target = definitions.get(ref.removeprefix("#/$defs/"), {}) if ref else branch
        name = ((target.get("properties") or {}).get(field) or {}).get("const")
        if not isinstance(name, str):
            return node
        branches[name] = branch
    rest = {k: v for k, v in node.items() if k not in {"oneOf", "discriminator"}}
    return {
        **rest,
        "type": "object",
        "required": [field],
        "properties": {field: {"enum": list(branches)}},
        "allOf": [
            {"if": {"properties": {field: {"const": name}}}, "then": branch}
            for name, branch in branches.items()
        ],
    }
