"""A form's fields in words (`hitl.cli.pending_view`): kind, required or default, limits, description."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from hitl.cli.pending_view import field_lines


class Passenger(BaseModel):
    """A nested model: reached through `$ref`."""

    name: str


class Answer(BaseModel):
    """Every kind of field a form uses."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "cancel"] = Field(description="Book it, or not.")
    reason: str = Field(min_length=3, max_length=200, description="Why.")
    nights: int = Field(default=1, ge=1, le=30)
    note: str | None = Field(default=None, pattern=r"^[A-Z]")
    insured: bool = False
    passengers: list[Passenger] = Field(default_factory=list, max_length=4)


def test_each_field_is_one_line_with_its_kind_requirement_limits_and_description():
    """the schema pydantic writes for Answer, read field by field in declaration order."""
    lines = [" ".join(line.split()) for line in field_lines(Answer.model_json_schema())]
    assert lines == [
        "decision one of approve, cancel, required Book it, or not.",
        "reason text, required, 3 to 200 characters Why.",
        "nights whole number, default 1, at least 1, at most 30",
        "note text, default null, matching ^[A-Z]",
        "insured yes/no, default false",
        "passengers list of Passenger, 0 to 4 items",
    ]


def test_a_schema_without_fields_has_no_lines():
    """no properties (a bare value): nothing to list."""
    assert field_lines({"type": "string"}) == []
