"""Response models whose JSON Schema is generated once per shape and published by reference.

LangGraph's `interrupt(value, response_schema=Model)` validates the answer with the model
*before* it saves it, and publishes `TypeAdapter(Model).json_schema()` with the interrupt, which
then sits in every checkpoint, stream event and thread record of a pending approval. For a tool
approval that is a 3.5 KB schema (the tool's arguments, twice, in each decision type): most of
what a pending approval kept in a server's heap, and walked by pydantic on every pause.
`PublishedSchema` models answer pydantic's schema hook with a reference instead,
`{"title": ..., "x-hitl-answer-schema": "/threads/{thread_id}/answer-schemas"}`; the server
serves the full schema there, derived from the interrupt's value as its own check of an answer is
(`hitl.contracts.answers.response_schema`). The answer is still validated by the model itself.

The full schema is the generated one with its local `$ref`s inlined (`published_schema`); a
discriminated `oneOf` keeps its `propertyName`, and each branch names its own `const`. A recursive
schema is not inlined: that model keeps pydantic's own generation, published whole.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, cast

from pydantic import BaseModel, RootModel, TypeAdapter, create_model, model_validator

if TYPE_CHECKING:
    from pydantic import GetJsonSchemaHandler, ValidatorFunctionWrapHandler
    from pydantic_core import CoreSchema

LOCAL_REF = "#/$defs/"
REFERENCE_KEY = "x-hitl-answer-schema"
"""The key of a referenced schema: where the full one is served."""
ANSWER_SCHEMAS = "/threads/{thread_id}/answer-schemas"
"""The server's route of every pending interrupt's full answer schema, by interrupt id."""


def is_reference(schema: object) -> bool:
    """Whether `schema` is a reference to a published schema, not the schema itself."""
    return isinstance(schema, dict) and REFERENCE_KEY in schema


class RecursiveSchemaError(ValueError):
    """A schema refers to itself, so it cannot be inlined."""


class PublishedSchema(BaseModel):
    """Base of a response model whose JSON Schema is published once (see the module docstring)."""

    published_json: ClassVar[str | None] = None
    """The published schema as JSON text (`published_schema` hands out fresh copies of it)."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        """A reference to the published schema once there is one; the model's own until then."""
        if cls.published_json is None:
            return cls.unpublished_schema(core_schema, handler)
        return {"title": cls.__name__, REFERENCE_KEY: ANSWER_SCHEMAS}

    @classmethod
    def unpublished_schema(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        """The schema published whole when there is no reference: pydantic's own."""
        return super().__get_pydantic_json_schema__(core_schema, handler)

    @classmethod
    def published_schema(cls) -> dict[str, Any] | None:
        """The schema this model publishes, None while pydantic generates it."""
        return None if cls.published_json is None else json.loads(cls.published_json)

    @classmethod
    def publish(cls, response_type: Any) -> None:  # noqa: ANN401  (this model, maybe inside Annotated)
        """Generate `response_type`'s schema (this model, maybe wrapped) once and keep it inlined."""
        cls.published_json = None  # pydantic's own generation, not the reference
        try:
            cls.published_json = json.dumps(inline_refs(TypeAdapter(response_type).json_schema()))
        except RecursiveSchemaError:
            cls.published_json = None


class AnsweredAsSent(RootModel[Any], PublishedSchema):
    """A response model that checks an answer against its contract and passes it on as sent.

    The tool validates its args once, so the answer goes on as sent. The model itself is `Any`
    plus this check (`answer_contract`, an adapter of the contract built once): `interrupt()`
    builds a `TypeAdapter` of its `response_schema` on every call and has pydantic generate its
    JSON Schema on every pause, which for the contract itself walks every decision type and the
    tool's arguments (about 1 ms) before the schema hook answers with the reference; here there
    is nothing to walk. An adapter of a model also reuses the model's validator (microseconds),
    where an `Annotated` form would be compiled anew (about 0.4 ms).
    """

    answer_contract: ClassVar[TypeAdapter[Any]]
    """The contract an answer is checked against (its errors are the answer's own)."""

    @model_validator(mode="wrap")  # type: ignore[misc]
    @classmethod
    def _as_sent(cls, answer: object, _any: ValidatorFunctionWrapHandler) -> object:  # the answer as sent
        cls.answer_contract.validate_python(answer)
        return answer

    @classmethod
    def unpublished_schema(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:  # noqa: ARG003
        """The contract's own schema (the model itself is `Any`), for one that could not be inlined."""
        return cls.answer_contract.json_schema()


def answered_as_sent(name: str, inner: Any) -> type[AnsweredAsSent]:  # noqa: ANN401  (any type pydantic takes)
    """`inner` (a model, a union, an `Annotated` form) as a response model of its own, its schema published.

    The model's schema is `inner`'s, inlined; an answer is checked against `inner` and passed on as sent.
    """
    model = cast("type[AnsweredAsSent]", create_model(name, __base__=AnsweredAsSent))
    model.answer_contract = TypeAdapter(inner)
    model.publish(inner)
    return model


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every local `$ref` replaced by its definition and no `$defs` left.

    Raises:
        RecursiveSchemaError: when a definition refers to itself, directly or not.
    """
    definitions = schema.get("$defs", {})

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:  # noqa: ANN401  (any JSON value)
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(LOCAL_REF):
            name = ref.removeprefix(LOCAL_REF)
            if name in seen:
                msg = f"schema definition {name!r} refers to itself"
                raise RecursiveSchemaError(msg)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return {**resolve(definitions[name], (*seen, name)), **resolve(siblings, seen)}
        resolved = {}
        for key, value in node.items():
            if key == "$defs":
                continue
            if key == "discriminator" and isinstance(value, dict):
                resolved[key] = {k: v for k, v in value.items() if k != "mapping"}
            else:
                resolved[key] = resolve(value, seen)
        return resolved

    return resolve(schema, ())
