"""What an MCP server may ask, and the answer each question accepts, derived from the question alone."""

from __future__ import annotations

import json

import jsonschema_rs
import pytest

from hitl.mcp.elicitations import answer_schema, question_of, recorded_as, requested_schema_problem

REASON = {
    "type": "object",
    "properties": {"reason": {"type": "string", "minLength": 3}, "urgent": {"type": "boolean"}},
    "required": ["reason"],
}


def value(mode: str = "form", **more: object) -> dict:
    asked = {"mode": mode, "message": "Why?", "question": "q" * 64, **more}
    return {"type": "mcp_elicitation", **asked}


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        (
            {"type": "object", "properties": {"who": {"type": "object"}}},
            "type 'object' is not one a form asks",
        ),
        ({"type": "object", "properties": {"x": {"$ref": "https://e/x"}}}, "type None"),
        (
            {"type": "object", "properties": {"x": {"type": "string", "pattern": "a+"}}},
            "keywords a string field",
        ),
        ({"type": "object", "properties": {"x": {"type": "string", "format": "ipv4"}}}, "format 'ipv4'"),
        ({"type": "object", "properties": {}, "additionalProperties": True}, "keywords a form may not have"),
        ({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["y"]}, "required list"),
        ({"type": "array"}, "not an object schema"),
        ("string", "not a JSON object"),
    ],
)
def test_only_the_flat_form_mcp_allows_is_asked(schema, said):
    """requested_schema_problem: nesting, refs, patterns, unknown formats or keywords refused in words."""
    assert said in (requested_schema_problem(schema) or "")


def test_a_flat_form_with_choices_is_asked():
    """text with length and format, numbers with a range, booleans, one choice, several choices: accepted."""
    schema = {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 100},
            "n": {"type": "integer", "minimum": 1, "maximum": 9},
            "ok": {"type": "boolean", "default": False},
            "size": {"type": "string", "enum": ["s", "m"]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
        },
    }
    assert requested_schema_problem(schema) is None


def check(schema: dict, answer: object) -> list[str]:
    return [e.message for e in jsonschema_rs.validator_for(schema).iter_errors(answer)]


def test_the_answer_schema_takes_accept_decline_cancel_and_this_question_only():
    """answer_schema: accept with exactly the fields; decline, cancel bare; another question refused."""
    schema = answer_schema(value(requested_schema=REASON))
    assert schema is not None
    assert check(schema, {"action": "accept", "content": {"reason": "Late"}}) == []
    assert check(schema, {"action": "decline"}) == []
    assert check(schema, {"action": "cancel", "question": "q" * 64}) == []
    assert check(schema, {"action": "accept", "content": {"reason": "no"}})
    assert check(schema, {"action": "accept", "content": {"reason": "Late", "x": 1}})
    assert check(schema, {"action": "accept"})
    assert check(schema, {"action": "decline", "question": "r" * 64})
    assert check(schema, {"action": "maybe"})


def test_a_url_question_is_accepted_without_content():
    """url mode: accept confirms (no content allowed)."""
    schema = answer_schema(value("url", url="https://example.com/x"))
    assert schema is not None
    assert check(schema, {"action": "accept"}) == []
    assert check(schema, {"action": "accept", "content": {}})


def test_a_question_is_fingerprinted_by_what_is_asked_not_by_its_key():
    """question_of: the same words and schema give the same digest; another message another one."""
    one = question_of(server="s", tool="t", mode="form", message="Why?", requested_schema=REASON)
    again = question_of(
        server="s", tool="t", mode="form", message="Why?", requested_schema=json.loads(json.dumps(REASON))
    )
    other = question_of(server="s", tool="t", mode="form", message="Why not?", requested_schema=REASON)
    assert one == again != other
    assert [recorded_as({"action": a}) for a in ("accept", "decline", "cancel")] == [
        "answered",
        "declined",
        "cancelled",
    ]
