"""What a reviewer's answer may say, strictly: decision schemas whose edits follow the tool exactly.

LangChain's stock edit schema lets arguments the tool does not declare pass through, and
takes any string. Ours refuses extra arguments and NUL bytes anywhere, so an edit is either
exactly a call the tool can take or refused before anything is saved.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, cast

from langchain.agents.middleware.human_in_the_loop import (
    ApproveDecision,
    RejectDecision,
    RespondDecision,
)
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    WrapValidator,
    create_model,
    model_validator,
)

from hitl.gate.langchain_hitl import as_sent

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from langchain_core.tools import BaseTool

    from hitl.contracts.decisions import DecisionType

NUL = "\x00"


def nul_free(value: Any, path: str = "args") -> Any:  # noqa: ANN401  (any JSON value)
    """`value` unchanged, or a ValueError naming where a NUL byte hides in it.

    Raises:
        ValueError: a string (or key) somewhere in `value` holds a NUL byte.
    """
    if isinstance(value, str) and NUL in value:
        msg = f"{path} must not contain a NUL byte"
        raise ValueError(msg)
    if isinstance(value, dict):
        for key, item in value.items():
            nul_free(key, f"{path} key")
            nul_free(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            nul_free(item, f"{path}[{index}]")
    return value


def strict_args(tool: BaseTool | None) -> object:
    """What an edit's `args` must be: the tool's own schema, no other arguments, no NUL bytes."""
    schema = tool.tool_call_schema if tool else None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        strict = cast(
            "type[BaseModel]",
            type(
                schema.__name__,
                (schema,),
                {
                    "model_config": ConfigDict(**{**schema.model_config, "extra": "forbid"}),
                    "__module__": __name__,
                },
            ),
        )
        return Annotated[strict, WrapValidator(_nul_free_first)]
    shown = schema if isinstance(schema, dict) else {"type": "object"}
    return Annotated[dict[str, Any], AfterValidator(nul_free), _with_schema(shown)]


INTEGER_TEXT = re.compile(r"^-?\d{1,18}$")
NUMBER_TEXT = re.compile(r"^-?\d{1,18}(\.\d{1,18})?$")
BOOLEAN_TEXT = {"true": True, "false": False}
TYPED = frozenset({"integer", "number", "boolean"})
CANONICAL = "a JSON number, or text written as 250, -3 or 99.50 (digits, one point, no spaces or exponent)"
"""The one text form an edit's number may take (`coerce_text_args`): said in the refusal of any other."""


def coerce_text_args(args: dict[str, Any], tool: BaseTool | None) -> dict[str, Any]:
    """`args` with each text value in the canonical form turned into the number or boolean the tool names.

    Clients that only send text (Agent Chat UI's edit box: `"amount": "250"`) get their edit
    read as meant. Only the canonical forms convert: `250`, `-3`, `99.50`, `true`, `false`;
    `" 250"`, `"2.5e2"`, `"+250"` or `"True"` stay as sent, and `typed_text` names them for a
    refusal. A field that also takes text is never changed.
    """
    schema = tool.tool_call_schema if tool else None
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return args
    return coerce_by_schema(args, schema.model_json_schema())


def coerce_by_schema(args: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """`coerce_text_args` for a tool known by its JSON schema (`{"properties": {...}}`) only."""
    properties = schema.get("properties") or {}
    return {key: _coerced(value, properties.get(key)) for key, value in args.items()}


def typed_text(args: Mapping[str, Any], tool: BaseTool | None) -> list[str]:
    """The arguments still holding text where the tool takes only a number or a boolean (after coercion).

    The tool's own schema would read `"300 "` or `"3e2"` as 300 (pydantic's lax mode): an edit
    must say its number plainly, so these are refused instead.
    """
    schema = tool.tool_call_schema if tool else None
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return []
    properties = schema.model_json_schema().get("properties") or {}
    return [
        key for key, value in args.items() if isinstance(value, str) and _kinds(properties.get(key)) <= TYPED
    ]


def _kinds(schema: object) -> set[str]:
    """The JSON types a property's schema admits (its `type` and those of its `anyOf` branches)."""
    if not isinstance(schema, dict):
        return {"string"}
    kinds = {schema.get("type")} | {b.get("type") for b in schema.get("anyOf", []) if isinstance(b, dict)}
    return {str(k) for k in kinds if k is not None} or {"string"}


def _coerced(value: Any, schema: object) -> Any:  # noqa: ANN401  (any JSON value)
    if not isinstance(value, str) or not isinstance(schema, dict):
        return value
    kinds = _kinds(schema)
    if "string" in kinds:
        return value
    if "integer" in kinds and INTEGER_TEXT.match(value):
        return int(value)
    if "number" in kinds and NUMBER_TEXT.match(value):
        number = float(value)
        return int(number) if number.is_integer() and INTEGER_TEXT.match(value) else number
    if "boolean" in kinds and value in BOOLEAN_TEXT:
        return BOOLEAN_TEXT[value]
    return value


def _nul_free_first(value: object, check: Any) -> Any:  # noqa: ANN401
    return check(nul_free(value))


def _with_schema(shown: dict[str, Any]) -> object:
    from pydantic import WithJsonSchema  # noqa: PLC0415  (only for tools without a pydantic schema)

    return WithJsonSchema(shown)


def edit_decision(name: str, tool: BaseTool | None) -> object:
    """An edit of `name`: the same tool only, its args exactly as the tool takes them.

    `editedAction` is accepted beside `edited_action` (LangGraph's JS SDK sends both) only when
    it says the same thing, so the answer cannot mean two different calls.
    """
    edited_action = create_model(
        "EditedAction",
        __config__=ConfigDict(extra="forbid"),
        name=(cast("Any", Literal[name]), ...),
        args=(cast("Any", strict_args(tool)), ...),
    )
    decision = create_model(
        "EditDecision",
        __config__=ConfigDict(extra="forbid"),
        __validators__={"one_edit": cast("Any", model_validator(mode="before")(_one_edit))},
        type=(cast("Any", Literal["edit"]), ...),
        edited_action=(edited_action, ...),
        editedAction=(
            cast("Any", edited_action | None),
            Field(default=None, description="The JS SDK's copy of edited_action; must be the same."),
        ),
    )
    return Annotated[decision, WrapValidator(as_sent)]


def _one_edit(cls: type, value: Any) -> Any:  # noqa: ANN401, ARG001  (a pydantic "before" validator)
    """Refuse a JS SDK `editedAction` copy that is not the same as `edited_action`."""
    if (
        isinstance(value, dict)
        and "editedAction" in value
        and value["editedAction"] != value.get("edited_action")
    ):
        msg = "editedAction and edited_action differ: send one edited call"
        raise ValueError(msg)
    return value


def decision_schema(
    allowed: Sequence[DecisionType], name: str, tool: BaseTool | None, approve: object = ApproveDecision
) -> type:
    """One call's decision schema: the `allowed` types, edits strict, checked by the `type` named."""
    by_type: dict[str, object] = {"approve": approve, "reject": RejectDecision, "respond": RespondDecision}
    if "edit" in allowed:
        by_type["edit"] = edit_decision(name, tool)
    members = tuple(by_type[d] for d in dict.fromkeys(allowed))
    if len(members) == 1:
        return cast("type", members[0])
    return cast("type", Annotated[Union[members], Discriminator("type")])  # noqa: UP007
