"""`hitl.contracts.published_schema`: an answer's JSON Schema, generated once, published by reference."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import jsonschema_rs
import pytest
from pydantic import BaseModel, Discriminator, TypeAdapter, ValidationError, create_model

from hitl.contracts.published_schema import (
    ANSWER_SCHEMAS,
    REFERENCE_KEY,
    PublishedSchema,
    answered_as_sent,
    inline_refs,
    is_reference,
)


class Approve(BaseModel):
    """An approval."""

    type: Literal["approve"]


class Args(BaseModel):
    """A tool's arguments."""

    amount: float
    reason: str


class Edit(BaseModel):
    """An edit."""

    type: Literal["edit"]
    args: Args


Decision = Annotated[Approve | Edit, Discriminator("type")]
ANSWERS: list[Any] = [
    {"decisions": [{"type": "approve"}]},
    {"decisions": [{"type": "edit", "args": {"amount": 5, "reason": "late"}}]},
    {"decisions": [{"type": "edit", "args": {"amount": "five"}}]},
    {"decisions": [{"type": "respond"}]},
    {"decisions": []},
    {},
]


def response_model() -> type[PublishedSchema]:
    return create_model("Response", __base__=PublishedSchema, decisions=(tuple[Decision], ...))


def test_the_published_schema_accepts_exactly_what_pydantic_generates():
    """same meaning: every answer is valid under the inlined schema iff under pydantic's own."""
    model = response_model()
    generated = TypeAdapter(model).json_schema()
    model.publish(model)
    published = model.published_schema()
    assert published is not None
    assert "$defs" not in json.dumps(published)
    assert "$ref" not in json.dumps(published)
    for answer in ANSWERS:
        assert jsonschema_rs.is_valid(published, answer) == jsonschema_rs.is_valid(generated, answer), answer


def test_once_published_the_schema_is_a_reference_and_validation_is_unchanged():
    """by reference: `interrupt()` publishes where the whole schema is served; validation is as before."""
    model = response_model()
    model.publish(model)
    reference = TypeAdapter(model).json_schema()
    assert reference == {"title": "Response", REFERENCE_KEY: ANSWER_SCHEMAS}
    assert is_reference(reference)
    assert not is_reference(model.published_schema())
    assert model.published_schema() is not model.published_schema()  # a fresh copy each time
    assert TypeAdapter(model).validate_python({"decisions": [{"type": "approve"}]})
    for answer in ANSWERS[2:]:
        with pytest.raises(ValidationError):
            TypeAdapter(model).validate_python(answer)


def test_a_recursive_schema_keeps_pydantic_generation():
    """recursion: a schema that refers to itself cannot be inlined, so nothing is published."""

    class Node(BaseModel):
        children: list[Node]

    model = create_model("Tree", __base__=PublishedSchema, root=(Node, ...))
    model.publish(model)
    assert model.published_schema() is None
    assert "$defs" in TypeAdapter(model).json_schema()


def test_inline_refs_keeps_siblings_and_drops_the_mapping():
    """inlining: a ref's sibling keywords stay; a discriminator keeps only its property name."""
    schema = {
        "$defs": {"A": {"properties": {"type": {"const": "a"}}}},
        "oneOf": [{"$ref": "#/$defs/A", "description": "first"}],
        "discriminator": {"propertyName": "type", "mapping": {"a": "#/$defs/A"}},
    }
    assert inline_refs(schema) == {
        "oneOf": [{"properties": {"type": {"const": "a"}}, "description": "first"}],
        "discriminator": {"propertyName": "type"},
    }


def test_an_answer_model_checks_the_answer_and_passes_it_on_as_sent():
    single = answered_as_sent("DecisionAnswer", Decision)
    adapter = TypeAdapter(single)
    edit = {"type": "edit", "args": {"amount": 5, "reason": "late"}}
    assert adapter.validate_python(edit) is edit  # as sent: the tool validates its args once
    for wrong in ({"type": "respond"}, {"type": "edit", "args": {"amount": "five"}}, {}):
        with pytest.raises(ValidationError):
            adapter.validate_python(wrong)
    assert single.published_schema() == inline_refs(TypeAdapter(Decision).json_schema())


def test_an_adapter_of_an_answer_model_reuses_its_validator():
    """`interrupt()` makes a TypeAdapter of its response_schema on every call: it must be a model."""
    batched = answered_as_sent("Response", create_model("Response", decisions=(tuple[Decision], ...)))
    for model in (batched, answered_as_sent("DecisionAnswer", Decision)):
        assert TypeAdapter(model).validator is model.__pydantic_validator__


def test_a_pause_generates_the_reference_without_walking_the_contract():
    """per pause: the answer model has no definitions, so pydantic generates only the reference."""
    contract = create_model("Response", decisions=(tuple[Decision], ...))
    model = answered_as_sent("Response", contract)
    assert model.__pydantic_core_schema__["type"] != "definitions"
    assert "Edit" not in json.dumps(model.__pydantic_core_schema__, default=str)
    assert TypeAdapter(model).json_schema() == {"title": "Response", REFERENCE_KEY: ANSWER_SCHEMAS}
    assert model.published_schema() == inline_refs(TypeAdapter(contract).json_schema())
    with pytest.raises(ValidationError) as refused:
        TypeAdapter(model).validate_python({"decisions": [{"type": "edit", "args": {"amount": "five"}}]})
    assert {error["loc"][:3] for error in refused.value.errors()} == {("decisions", 0, "edit")}
