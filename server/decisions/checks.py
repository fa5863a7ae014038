"""The one check every resume passes before anything is saved: who answers, and what.

Pure: given the thread's pending interrupts, its owner, the caller and the resume payload,
either returns the answers matched to their interrupts or raises `ResumeRefused` with an
HTTP status and a message naming what is wrong. The auth layer calls it for every path.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from hitl.policy.groups import who
from server.decisions import answer_schemas
from server.decisions.edits import EditPolicy, authorise_edit, coerce_edits, edits_of, no_loose_text, no_nul
from server.decisions.pending import Accepted, Pending, ResumeRefused

if TYPE_CHECKING:
    from server.identity.users import User

INTERRUPT_ID = re.compile(r"^[0-9a-f]{32}$")
MAX_ERRORS_SHOWN = 3


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
            people = " and ".join(who(d) for d in needed)
            msg = f"{user.identity} ({user.role}) may not answer {item.pending.subject}: it needs {people}."
            raise ResumeRefused(403, msg)
    for item in answers:
        no_nul(item.answer)
        coerce_edits(item)
        _stamp_question(item)
        _validate(item)
        no_loose_text(item)
    for item in answers:
        _not_self_approved(item, user)
        _not_approved_twice(item, user)
    for item in answers:
        for name, requested, edited in edits_of(item):
            authorise_edit(policy, user, owner, name, requested, edited)
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


def _stamp_question(item: Accepted) -> None:
    """Bind an answer to an MCP server's question to that question: `question` stamped in, in place.

    The answer is the resume payload itself, so the tool receives the stamp and passes the answer on
    only to the same question (the MCP server may ask another on the resumed run). An answer that
    names another question is refused (422).
    """
    value = item.pending.value if isinstance(item.pending.value, dict) else {}
    if value.get("type") != "mcp_elicitation" or not isinstance(item.answer, dict):
        return
    asked = value.get("question")
    given = item.answer.setdefault("question", asked)
    if given != asked:
        msg = (
            f"This answer is for another question than {item.pending.subject} ({item.pending.id}) asks "
            f"(question {str(given)[:12]}…, asked {str(asked)[:12]}…); nothing was saved."
        )
        raise ResumeRefused(422, msg)


def _four_eyes(config: object) -> bool:
    """Whether a review config (or per-call value) leaves the asker out of deciding it."""
    if not isinstance(config, dict):
        return False
    return not config.get("self_approval") and config.get("required_role") != "owner"


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
    some API versions (langgraph-api 0.11.1) do not report it, and ours is a reference to the
    derived one (`hitl.contracts.published_schema`), never a contract. Without either, refuse.
    """
    schema = answer_schemas.schema_of(item.pending)
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
